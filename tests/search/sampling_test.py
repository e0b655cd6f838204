"""Sampling (zoo.search.sampling, zoo.search.decoding) against the softmax it draws from: a chi-square test of
token frequencies, the support of top-k and top-p, reproducibility, keras-hub's names."""

import math

import numpy as np
import pytest
from search_toy import log_softmax, toy_model

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.search import search
from zoo.search.decoding import (
    BeamSampler,
    GreedySampler,
    RandomSampler,
    TopKSampler,
    TopPSampler,
)
from zoo.search.sampling import sample, shaped_logits

V = 7
# From START the next token has fixed probabilities (mix=0: a Markov chain of the previous
# token); after any word END is all but certain, so each draw is one token then END.
FIRST = np.array([0.0, 0.0, 0.10, 0.40, 0.25, 0.15, 0.10])  # PAD, START, END, words 3..6


def _chain():
    table = np.full((V, V), -1e4, "float32")
    table[START_ID, 2:] = np.log(FIRST[2:])
    table[3:, END_ID] = 0.0
    return toy_model(target_vocab=V, transition=table, mix=0.0)


@pytest.fixture(scope="module")
def chain():
    return _chain()


def _first_tokens(model, n, **options):
    sources = np.tile(np.array([[4, 5]], "int32"), (n, 1))
    result = sample(model, sources, seed=7, **options)
    return np.asarray(result.ids)[:, 0], result


def test_token_frequencies_match_the_softmax(chain):
    # Chi-square goodness of fit over the 5 allowed first tokens, 4 degrees of freedom:
    # 18.47 is the 0.999 quantile. A sampler that ignored the probabilities, or drew PAD or
    # START, fails it.
    n = 4000
    first, result = _first_tokens(chain, n)
    counts = np.bincount(first, minlength=V)
    assert counts[PAD_ID] == counts[START_ID] == 0
    expected = n * FIRST[2:]
    chi2 = float(((counts[2:] - expected) ** 2 / expected).sum())
    assert chi2 < 18.47, (counts, chi2)
    # Scores are the model's own log-probabilities of the drawn tokens.
    ids, lengths = np.asarray(result.ids), np.asarray(result.lengths)
    scores = np.asarray(result.log_probs)
    for row, n_tokens, score in zip(ids[:50], lengths[:50], scores[:50], strict=True):
        assert n_tokens == (1 if row[0] == END_ID else 2)  # a word, then END (p ~ 1)
        np.testing.assert_allclose(score, math.log(FIRST[row[0]]), atol=1e-3)


def test_top_k_and_top_p_draw_only_from_their_support(chain):
    first, _ = _first_tokens(chain, 600, top_k=2)
    assert set(first) == {3, 4}  # the two most likely
    first, _ = _first_tokens(chain, 600, top_p=0.6)  # 0.40 + 0.25 >= 0.6
    assert set(first) == {3, 4}
    first, _ = _first_tokens(chain, 600, top_p=0.3)  # the most likely alone holds 0.40
    assert set(first) == {3}
    first, _ = _first_tokens(chain, 600, temperature=0.05)  # nearly the arg-max
    assert set(first) == {3}


def test_shaped_logits_against_numpy():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 9)).astype("float32")
    shaped = np.asarray(shaped_logits(logits, temperature=2.0, top_k=3))
    reference = logits / 2.0
    reference[:, [PAD_ID, START_ID]] = -np.inf
    for row, ref in zip(shaped, reference, strict=True):
        keep = np.argsort(-ref)[:3]
        # Shifted by the row's maximum (the same distribution): the kept logits' differences.
        np.testing.assert_allclose(row[keep], ref[keep] - ref.max(), rtol=1e-6, atol=1e-6)
        assert np.all(np.isneginf(np.delete(row, keep)))
    probs = np.exp(log_softmax(reference))
    nucleus = np.asarray(shaped_logits(logits, temperature=2.0, top_p=0.5))
    for row, p in zip(nucleus, probs, strict=True):
        order = np.argsort(-p)
        needed = int(np.searchsorted(np.cumsum(p[order]), 0.5) + 1)
        assert set(np.flatnonzero(np.isfinite(row))) == set(order[:needed])


def test_a_seed_reproduces_the_draws_and_lengths_are_bounded():
    model = toy_model(seed=5, end_bias=-3.0)
    sources = np.array([[4, 5, 6, 7], [7, 8, 0, 0]], "int32")
    a = sample(model, sources, seed=3, max_length_offset=4)
    b = sample(model, sources, seed=3, max_length_offset=4)
    np.testing.assert_array_equal(a.ids, b.ids)
    ids, lengths = np.asarray(a.ids), np.asarray(a.lengths)
    for row, n, limit in zip(ids, lengths, (10, 7), strict=True):  # ceil(1.5 n) + 4
        assert 1 <= n <= limit and row[n - 1] == END_ID and np.all(row[n:] == PAD_ID)
    others = [np.asarray(sample(model, sources, seed=s, max_length_offset=4).ids) for s in range(4)]
    assert any(o.shape != ids.shape or np.any(o != ids) for o in others)  # seeds differ


def test_keras_hub_names():
    model = toy_model(seed=2)
    sources = np.array([[4, 5, 6], [6, 7, 0]], "int32")
    greedy = search(model, sources, beam_size=1, return_attention=False)
    np.testing.assert_array_equal(GreedySampler()(model, sources).ids, greedy.ids)
    beam = search(model, sources, beam_size=3, length_penalty=1.0, return_attention=False)
    np.testing.assert_array_equal(BeamSampler(num_beams=3)(model, sources).ids, beam.ids)
    for sampler, options in (
        (RandomSampler(seed=1), {}),
        (TopKSampler(k=2, seed=1), {"top_k": 2}),
        (TopPSampler(p=0.5, seed=1), {"top_p": 0.5}),
    ):
        np.testing.assert_array_equal(
            sampler(model, sources).ids, sample(model, sources, seed=1, **options).ids
        )
    for bad in (dict(temperature=0.0), dict(top_k=0), dict(top_p=1.5), dict(top_p=0.0)):
        with pytest.raises(ValueError):
            sample(model, sources, **bad)


def _numpy_shaped(logits, temperature):
    """The reference: float64 softmax of (logits - max) / T over the allowed tokens."""
    x = logits.astype("float64")
    x[:, [PAD_ID, START_ID]] = -np.inf
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = (x - x.max(axis=-1, keepdims=True)) / temperature
    scaled[:, [PAD_ID, START_ID]] = -np.inf
    probs = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    return probs / probs.sum(axis=-1, keepdims=True)


def _softmax(shaped):
    shaped = np.asarray(shaped, "float64")
    probs = np.exp(shaped - shaped.max(axis=-1, keepdims=True))
    return probs / probs.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("temperature", [1e-320, 1e-300, 1e-39, 1e-30, 1e-3, 0.7, 1e30, 1e300])
def test_any_positive_temperature_gives_the_numpy_distribution(temperature):
    # Tiny temperatures (float32 cannot divide by those under ARGMAX_TEMPERATURE) give the
    # arg-max, tied maxima equally likely; huge ones the uniform distribution.
    from zoo.search.sampling import ARGMAX_TEMPERATURE

    assert ARGMAX_TEMPERATURE == float(np.finfo(np.float32).tiny)
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(4, 9)).astype("float32") * 3
    logits[1, 5] = logits[1, 7] = logits[1].max() + 1.0  # a tie at the top
    logits[2, PAD_ID] = logits[2].max() + 5.0  # a banned token above the others
    got = _softmax(shaped_logits(logits, temperature=temperature))
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, _numpy_shaped(logits, temperature), atol=1e-6)


def test_tiny_temperature_and_top_p_draw_the_greedy_translation():
    model = toy_model(seed=5, end_bias=-3.0)
    sources = np.array([[4, 5, 6, 7], [7, 8, 0, 0], [6, 0, 0, 0]], "int32")
    greedy = np.asarray(search(model, sources, beam_size=1, return_attention=False).ids)
    for options in (dict(temperature=1e-320), dict(top_p=1e-300), dict(top_p=1e-30)):
        for seed in (0, 1):
            drawn = np.asarray(sample(model, sources, seed=seed, **options).ids)
            np.testing.assert_array_equal(drawn, greedy, err_msg=str(options))


def test_nucleus_of_a_tiny_top_p_is_the_most_likely_token():
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(5, 9)).astype("float32")
    shaped = np.asarray(shaped_logits(logits, top_p=1e-300))
    allowed = logits.copy()
    allowed[:, [PAD_ID, START_ID]] = -np.inf
    for row, ref in zip(shaped, allowed, strict=True):
        assert list(np.flatnonzero(np.isfinite(row))) == [int(np.argmax(ref))]


def test_tensor_settings_shape_and_draw_as_numbers_do(chain):
    import tensorflow as tf

    rng = np.random.default_rng(3)
    logits = rng.normal(size=(4, 9)).astype("float32")
    cases = [
        dict(temperature=2.0, top_k=3),
        dict(temperature=0.5, top_p=0.5),
        dict(temperature=1e-320),
        dict(top_k=9, top_p=1.0),  # no cut: top_k >= V, top_p = 1
    ]
    for options in cases:
        tensors = {
            name: tf.constant(value, "int32" if name == "top_k" else "float32")
            for name, value in options.items()
        }
        np.testing.assert_array_equal(
            shaped_logits(logits, **tensors), shaped_logits(logits, **options)
        )
    np.testing.assert_array_equal(
        shaped_logits(logits, top_k=tf.constant(9)), shaped_logits(logits)
    )
    sources = np.tile(np.array([[4, 5]], "int32"), (50, 1))
    for options in ({"top_k": 2}, {"top_p": 0.6, "temperature": 0.8}):
        tensors = {
            name: tf.constant(value, "int32" if name == "top_k" else "float32")
            for name, value in options.items()
        }
        np.testing.assert_array_equal(
            sample(chain, sources, seed=4, **tensors).ids,
            sample(chain, sources, seed=4, **options).ids,
        )
