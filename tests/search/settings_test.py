"""The search settings: one argument list (`SearchSettings`) for `search` and
`search_function`, its checks, and the defaults of `zoo.search.defaults` that every entry
takes when called with no settings."""

import dataclasses
import inspect

import numpy as np
import pytest
import tensorflow as tf
from search_toy import toy_model

from zoo.search import (
    BeamSampler,
    GreedySampler,
    RandomSampler,
    SearchSettings,
    TopKSampler,
    TopPSampler,
    beam_search,
    defaults,
    sample,
    search,
    search_function,
)
from zoo.search.settings import MAX_BEAM_SIZE, MAX_LENGTH_OFFSET_LIMIT, MAX_LENGTH_RATIO_LIMIT

SOURCES = np.array([[4, 5, 6, 7], [7, 8, 0, 0], [5, 5, 4, 0]], "int32")
DEFAULTS = dict(
    beam_size=defaults.BEAM_SIZE,
    length_penalty=defaults.LENGTH_PENALTY,
    coverage_penalty=defaults.COVERAGE_PENALTY,
    max_length_ratio=defaults.MAX_LENGTH_RATIO,
    max_length_offset=defaults.MAX_LENGTH_OFFSET,
)


@pytest.fixture(scope="module")
def model():
    return toy_model(seed=2, end_bias=-1.0)


def assert_same(got, expected):
    for name in ("ids", "lengths", "scores", "log_probs", "attention"):
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name), err_msg=name)


def test_search_with_no_settings_uses_the_library_defaults(model):
    plain = search(model, SOURCES)
    assert_same(plain, search(model, SOURCES, **DEFAULTS))
    assert_same(beam_search(model, SOURCES), plain)
    # The defaults are a beam with a length penalty, not greedy search by log-probability.
    assert (defaults.BEAM_SIZE, defaults.LENGTH_PENALTY) == (5, 1.0)
    greedy = search(model, SOURCES, beam_size=1, length_penalty=0.0)
    assert not np.allclose(np.asarray(plain.scores), np.asarray(greedy.scores))


def test_search_function_with_no_settings_uses_the_library_defaults(model):
    traced = search_function(model)(tf.constant(SOURCES))
    expected = search(model, SOURCES, **DEFAULTS)
    np.testing.assert_array_equal(traced.ids, expected.ids)
    np.testing.assert_allclose(traced.scores, expected.scores, rtol=1e-6)


def test_signatures_render_the_defaults():
    """`search` and `search_function` take the settings as one object (its fields by name
    besides), whose defaults are the library's; sampling and the samplers take theirs
    from the same module."""
    fields = {f.name: f.default for f in dataclasses.fields(SearchSettings)}
    for function, leading, trailing in (
        (search, ["model", "source_ids", "settings"], ["prefix", "constraints", "options"]),
        (search_function, ["model", "settings"], ["options"]),
    ):
        assert list(inspect.signature(function).parameters) == leading + trailing
    assert dataclasses.asdict(SearchSettings()) == fields
    assert {name: fields[name] for name in DEFAULTS} == DEFAULTS
    lengths = {"max_length_ratio": 1.5, "max_length_offset": 10}
    assert lengths == {k: DEFAULTS[k] for k in lengths}  # the documented limits
    for function in (sample, GreedySampler, RandomSampler, TopKSampler, TopPSampler):
        parameters = inspect.signature(function).parameters
        for name in lengths:
            assert parameters[name].default == DEFAULTS[name], (function, name)
    parameters = inspect.signature(BeamSampler).parameters
    assert parameters["num_beams"].default == defaults.BEAM_SIZE
    for name in ("length_penalty", "coverage_penalty", *lengths):
        assert parameters[name].default == DEFAULTS[name], name


def test_settings_are_normalised_hashable_and_positional_in_the_old_order(model):
    settings = SearchSettings(np.int64(3), 1, np.float32(2.0), np.int32(4), 1)
    assert settings == SearchSettings(3, 1.0, 2.0, 4, True)
    assert type(settings.beam_size) is int and type(settings.length_penalty) is float
    assert type(settings.max_length_offset) is int and settings.return_attention is True
    assert hash(settings) == hash(SearchSettings(3, 1.0, 2.0, 4, True))
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.beam_size = 2
    positional = search(model, SOURCES, SearchSettings(2, 0.5, 1.0, 3))
    named = search(
        model, SOURCES, beam_size=2, length_penalty=0.5, max_length_ratio=1.0, max_length_offset=3
    )
    assert_same(positional, named)


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(beam_size=0), "beam_size must be an int >= 1; received 0"),
        (dict(beam_size=True), "beam_size"),
        (dict(beam_size=MAX_BEAM_SIZE + 1), f"at most {MAX_BEAM_SIZE}"),
        (dict(length_penalty="1"), "length_penalty must be a finite float >= 0"),
        (dict(coverage_penalty=float("inf")), "coverage_penalty"),
        (dict(max_length_ratio=-0.5), "max_length_ratio"),
        (dict(max_length_offset=1.0), "max_length_offset"),
        (
            dict(max_length_ratio=1e308),
            f"max_length_ratio must be in \\[0, {MAX_LENGTH_RATIO_LIMIT:g}\\]",
        ),
        (dict(max_length_offset=MAX_LENGTH_OFFSET_LIMIT + 1), "max_length_offset must be in"),
        (dict(beam_size=2, n_best=3), "n_best must be None or an int in \\[1, beam_size=2\\]"),
        (dict(n_best=0), "n_best"),
        (dict(min_length=-1), "min_length must be an int >= 0; received -1"),
        (dict(min_length=2.0), "min_length"),
        (dict(ban_unknown="yes"), "ban_unknown must be True or False; received 'yes'"),
        (dict(no_repeat_ngram_size=-2), "no_repeat_ngram_size must be an int >= 0"),
        (dict(no_repeat_ngram_size=True), "no_repeat_ngram_size"),
        (dict(min_length=2**31), "min_length must be in \\[0, 2\\*\\*31 - 1\\]"),
        (dict(no_repeat_ngram_size=2**31), "no_repeat_ngram_size must be in \\[0, 2"),
    ],
)
def test_search_and_search_function_refuse_the_same_bad_settings(model, settings, message):
    with pytest.raises(ValueError, match=message):
        SearchSettings(**settings)
    with pytest.raises(ValueError, match=message):
        search(model, SOURCES, **settings)
    with pytest.raises(ValueError, match=message):
        search_function(model, **settings)
    with pytest.raises(TypeError, match="beam"):
        search(model, SOURCES, beam=2)


def test_the_length_limits_themselves_are_accepted():
    settings = SearchSettings(
        max_length_ratio=MAX_LENGTH_RATIO_LIMIT, max_length_offset=MAX_LENGTH_OFFSET_LIMIT
    )
    assert settings.max_length_ratio == MAX_LENGTH_RATIO_LIMIT
    assert settings.max_length_offset == MAX_LENGTH_OFFSET_LIMIT
    assert SearchSettings(min_length=2**31 - 1, no_repeat_ngram_size=2**31 - 1).min_length == (
        2**31 - 1
    )


def test_the_decoding_controls_are_off_by_default():
    fields = {f.name: f.default for f in dataclasses.fields(SearchSettings)}
    assert {name: fields[name] for name in defaults.CONTROL_DEFAULTS} == defaults.CONTROL_DEFAULTS
    assert defaults.CONTROL_DEFAULTS == {
        "min_length": 0,
        "ban_unknown": False,
        "no_repeat_ngram_size": 0,
    }
    settings = SearchSettings(min_length=np.int64(2), ban_unknown=np.bool_(True))
    assert type(settings.min_length) is int and settings.ban_unknown is True


def test_a_negative_source_id_is_refused_naming_it(model):
    with pytest.raises(ValueError, match=r"source_ids must be token ids >= 0 .*-3 at \[1, 0\]"):
        search(model, np.array([[5, 6], [-3, 4]], "int32"), beam_size=2)
    with pytest.raises(ValueError, match="source_ids must be token ids >= 0"):
        sample(model, tf.constant([[5, -1]]), seed=1)


def test_settings_given_by_name_replace_those_of_the_object(model):
    """One `SearchSettings` passed on, with fields by name replacing its own for a call,
    gives the search of those settings; a name that is no field, or settings that are no
    `SearchSettings`, are refused naming what was expected."""
    settings = SearchSettings(beam_size=3, length_penalty=0.0)
    assert_same(
        search(model, SOURCES, settings, n_best=2),
        search(model, SOURCES, beam_size=3, length_penalty=0.0, n_best=2),
    )
    assert settings.replace(beam_size=4) == SearchSettings(beam_size=4, length_penalty=0.0)
    assert settings.replace() is settings
    assert settings.controls == defaults.CONTROL_DEFAULTS
    traced = search_function(model, settings, beam_size=2)(tf.constant(SOURCES))
    eager = search(model, SOURCES, beam_size=2, length_penalty=0.0)
    np.testing.assert_array_equal(traced.ids, eager.ids)
    np.testing.assert_allclose(traced.scores, eager.scores, rtol=1e-6)
    with pytest.raises(TypeError, match="Unknown search option\\(s\\) \\['beams'\\].*beam_size"):
        search(model, SOURCES, settings, beams=2)
    with pytest.raises(TypeError, match="settings must be a zoo.search.SearchSettings or None"):
        search(model, SOURCES, {"beam_size": 2})
    with pytest.raises(TypeError, match="settings must be"):
        search(model, SOURCES, 2)
    assert_same(beam_search(model, SOURCES, settings=settings), search(model, SOURCES, settings))
    sampler = BeamSampler(num_beams=2, length_penalty=0.0)
    assert sampler.settings == SearchSettings(2, 0.0, return_attention=False)
    assert sampler.num_beams == 2
