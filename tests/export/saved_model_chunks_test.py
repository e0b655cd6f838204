"""The SavedModel's endpoints on an empty batch, and on a batch larger than its chunk size:
cut into chunks inside the graph (zoo.export.chunks), each sentence's output equals its
output in a call of its chunk alone, in input order."""

import math

import numpy as np
import pytest
import tensorflow as tf
from translator_toy import MIXED, read_lines, toy_translator

from zoo.export import SavedModelTranslator, export_translator, load_exported

CHUNK = 8
SENTENCES = read_lines("val.de", 30) + MIXED  # 37 sentences: 5 chunks


def _writing(translator):
    """The toy with an output layer of unit normal weights and no bias: its greedy search
    writes outputs of many lengths (an untrained model's ends at once)."""
    rng = np.random.default_rng(0)
    for weight in translator.model.weights:
        if weight.path == "decoder/W_o/kernel":
            weight.assign(rng.normal(size=weight.shape).astype("float32"))
        elif weight.path == "decoder/W_o/bias":
            weight.assign(np.zeros(weight.shape, "float32"))
    return translator


@pytest.fixture(scope="module")
def exported(data_dir, tmp_path_factory):
    translator = _writing(toy_translator("bahdanau_rnnsearch", beam_size=2))
    folder = tmp_path_factory.mktemp("serving") / "chunked"
    path = export_translator(translator, folder, n_best=2, sampling={"top_k": 1}, chunk_size=CHUNK)
    return translator, path, load_exported(path)


def test_every_signature_answers_an_empty_batch(exported):
    _, _, loaded = exported
    assert sorted(loaded.signatures) == [
        "sample",
        "serving_default",
        "translate",
        "translate_greedy",
        "translate_n_best",
    ]
    empty = tf.constant([], tf.string)
    for name, signature in loaded.signatures.items():
        inputs = {"sentences": empty}
        if name == "sample":
            inputs["seed"] = tf.constant(1, tf.int64)
        outputs = signature(**inputs)
        assert outputs and all(value.shape[0] == 0 for value in outputs.values()), name
    result = loaded.translate_n_best(empty)
    assert result["translations"].shape == (0, 2) and result["scores"].shape == (0, 2)


def _chunks(translator, sentences):
    """The rows of each chunk the graph cuts: sorted longest first (stable), ceil(B / CHUNK)
    chunks of ceil(B / chunks) sentences."""
    order = np.argsort(-translator.source_lengths(sentences), kind="stable")
    count = math.ceil(len(order) / CHUNK)
    size = math.ceil(len(order) / count)
    return [order[start : start + size] for start in range(0, len(order), size)]


def _same_row(big, alone, name):
    """`big` (a row of the large call) is `alone` padded with "" or 0."""
    big, alone = np.asarray(big), np.asarray(alone)
    crop = tuple(slice(0, n) for n in alone.shape)
    if alone.dtype.kind in "fc":
        np.testing.assert_allclose(big[crop], alone, rtol=1e-5, atol=1e-6, err_msg=name)
    else:
        np.testing.assert_array_equal(big[crop], alone, err_msg=name)
    rest = np.ones(big.shape, bool)
    rest[crop] = False
    padding = b"" if big.dtype.kind == "O" else 0
    assert np.all(big[rest] == padding), name


@pytest.mark.parametrize("endpoint", ["translate_greedy", "translate", "translate_n_best"])
def test_a_large_batch_equals_one_call_per_chunk(exported, endpoint):
    translator, _, loaded = exported
    function = getattr(loaded, endpoint)
    big = function(tf.constant(SENTENCES))
    chunks = _chunks(translator, SENTENCES)
    assert len(chunks) == 5
    widths = {}
    for rows in chunks:
        alone = function(tf.constant([SENTENCES[i] for i in rows]))
        assert sorted(alone) == sorted(big)
        for key, value in alone.items():
            widths[key] = np.maximum(widths.get(key, 0), value.shape[1:])
            for j, i in enumerate(rows):
                _same_row(big[key][i], value[j], f"{key} of sentence {i}")
    for key, value in big.items():  # padded as far as the longest chunk, no further
        assert value.shape[0] == len(SENTENCES)
        np.testing.assert_array_equal(value.shape[1:], widths[key])
    if endpoint != "translate_n_best":
        texts = [x.decode() for x in big["translation"].numpy()]
        beam_size = 1 if endpoint == "translate_greedy" else 2
        assert texts == translator.translate(SENTENCES, beam_size=beam_size)
    if endpoint == "translate_greedy":
        assert len(set(big["target_lengths"].numpy())) > 20  # outputs of many lengths


def test_sampling_and_the_python_runner_over_chunks(exported):
    translator, path, loaded = exported
    greedy = translator.translate(SENTENCES, beam_size=1)
    drawn = loaded.sample(tf.constant(SENTENCES), tf.constant(4, tf.int64))
    assert [x.decode() for x in drawn["translation"].numpy()] == greedy  # top_k 1
    serving = SavedModelTranslator(path, batch_size=len(SENTENCES))  # one call, 5 chunks
    assert serving.translate(SENTENCES) == translator.translate(SENTENCES)
    assert serving.metadata["chunk_size"] == CHUNK
