"""The SavedModel on hostile input: invalid UTF-8, any Unicode, any batch size, sentences
past the location score's reach. One output per input, in order, never an error."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from translator_toy import LONG, toy_translator

from zoo.export import load_exported


@pytest.fixture(scope="module")
def location(data_dir, tmp_path_factory):
    """(translator, loaded SavedModel) of a tiny luong_global_location model (greedy)."""
    translator = toy_translator("luong_global_location", beam_size=1)
    path = translator.export(tmp_path_factory.mktemp("serving") / "location", greedy=False)
    return translator, load_exported(path)


@pytest.fixture(scope="module")
def text_only(location, tmp_path_factory):
    """The same model exported without attention (a server's endpoint: text and scores)."""
    translator, _ = location
    folder = tmp_path_factory.mktemp("serving") / "text"
    return load_exported(translator.export(folder, greedy=False, attention=False))


def _texts(result):
    return [x.decode("utf-8") for x in result["translation"].numpy()]


def test_sentence_past_the_location_reach_does_not_fail_its_batch(location):
    # Before: InvalidArgumentError from a Slice node, and the whole batch failed.
    translator, serving = location
    limit = translator.source_limit()
    result = serving.translate(tf.constant(["Ein Hund.", LONG]))
    assert int(result["source_lengths"][1]) > limit
    texts = _texts(result)
    assert texts == translator.translate(["Ein Hund.", LONG])
    assert texts[0] == _texts(serving.translate(tf.constant(["Ein Hund."])))[0]
    n, t = int(result["source_lengths"][1]), int(result["target_lengths"][1])
    weights = result["attention"].numpy()[1, :t, :n]
    np.testing.assert_array_equal(weights[:, limit:], 0.0)  # no attention past max_length
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)


def test_invalid_utf8_reads_as_replacement_characters(location):
    translator, serving = location
    raw = [b"Ein Hund \xff\xfe rennt.", b"Zwei M\xe4nner.", b"gut"]
    texts = _texts(serving.translate(tf.constant(raw)))
    decoded = [x.decode("utf-8", errors="replace") for x in raw]
    assert "\ufffd" in decoded[0] and "\ufffd" in decoded[1]
    assert texts == translator.translate(decoded)


@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.text(max_size=300), max_size=64))
def test_any_unicode_any_batch_gives_one_output_per_input_in_order(text_only, sentences):
    serving = text_only
    result = serving.translate(tf.constant(sentences, tf.string, shape=[len(sentences)]))
    texts = _texts(result)
    assert len(texts) == len(sentences)
    for i in {0, len(sentences) - 1} if sentences else ():  # in order: the same alone
        assert texts[i] == _texts(serving.translate(tf.constant([sentences[i]])))[0]
