"""The SavedModel's endpoints on an empty batch, and on a batch larger than its chunk size:
cut into chunks inside the graph (zoo.export.saved_model), each sentence's output equals its
output in a call of its chunk alone, in input order."""

import math

import numpy as np
import pytest
import tensorflow as tf
from export_toy import CHUNK, SENTENCES

from zoo.export import SavedModelTranslator


def test_every_signature_answers_an_empty_batch(writing_export):
    _, _, loaded = writing_export
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
def test_a_large_batch_equals_one_call_per_chunk(writing_export, endpoint):
    translator, _, loaded = writing_export
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


def test_sampling_and_the_python_runner_over_chunks(writing_export):
    translator, path, loaded = writing_export
    greedy = translator.translate(SENTENCES, beam_size=1)
    drawn = loaded.sample(tf.constant(SENTENCES), tf.constant(4, tf.int64))
    assert [x.decode() for x in drawn["translation"].numpy()] == greedy  # top_k 1
    serving = SavedModelTranslator(path, batch_size=len(SENTENCES))  # one call, 5 chunks
    assert serving.translate(SENTENCES) == translator.translate(SENTENCES)
    assert serving.metadata["chunk_size"] == CHUNK


def test_translator_export_passes_its_chunk_size(monkeypatch, tmp_path):
    from export_toy import writing_toy

    import zoo.export

    received = {}
    monkeypatch.setattr(
        zoo.export, "export_translator", lambda *args, **kwargs: received.update(kwargs)
    )
    writing_toy().export(tmp_path / "serving", chunk_size=3)
    assert received["chunk_size"] == 3
