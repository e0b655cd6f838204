"""The Translator on the backend this process runs (on JAX and PyTorch the tokenizers stay
TensorFlow and the search runs on the backend, `zoo.translator.staged`): its translations
are `zoo.search.search`'s on the tokenized sentences, its scores the model's own
teacher-forced log-probabilities, its samples decided by the seed; export needs TensorFlow."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops
from translator_toy import toy_translator

from zoo.constants import END_ID, START_ID
from zoo.search import search

SENTENCES = ["Ein Hund rennt.", "", "Zwei Männer lachen auf einer Bank.", "Eine Frau."]


@pytest.fixture(scope="module")
def translator(data_dir):
    return toy_translator("luong_global_general", beam_size=2)


@pytest.mark.parametrize("beam_size", [1, 2])
def test_translations_are_the_searchs_on_the_tokenized_sentences(translator, beam_size):
    outputs = translator.translate_function(beam_size)(tf.constant(SENTENCES))
    source_ids, lengths = translator.preprocessor.encode_source(tf.constant(SENTENCES))
    expected = search(translator.model, source_ids.numpy(), beam_size=beam_size,
                      **translator.search_settings())  # fmt: skip
    ids = np.asarray(ops.convert_to_numpy(expected.ids))
    found = np.asarray(outputs["target_ids"])
    real = lengths.numpy() > 0  # a sentence without tokens gets "" and no search
    width = max(found.shape[1], ids.shape[1])
    pad = lambda x: np.pad(x, [(0, 0), (0, width - x.shape[1])])  # noqa: E731
    np.testing.assert_array_equal(pad(found)[real], pad(ids)[real])
    scores = np.asarray(ops.convert_to_numpy(expected.scores))
    np.testing.assert_allclose(np.asarray(outputs["score"])[real], scores[real], rtol=1e-5)
    assert outputs["translation"].numpy()[1] == b""
    attention = np.asarray(outputs["attention"])
    assert attention.shape[:2] == found.shape and attention[real].any()
    texts = translator.translate(SENTENCES, beam_size=beam_size)
    assert texts == [t.decode() for t in outputs["translation"].numpy()]


def test_score_is_the_models_teacher_forced_log_probability(translator):
    sources, targets = ["Ein Hund rennt.", "Eine Frau."], ["A dog runs.", "A woman."]
    found = translator.score(sources, targets)
    tokenizer = translator.target_tokenizer
    for source, target, (total, per_token) in zip(sources, targets, found, strict=True):
        source_ids, _ = translator.preprocessor.encode_source(tf.constant([source]))
        ids = tokenizer.tokenize(tf.constant([target])).to_list()[0]
        target_in = np.array([[START_ID, *ids]], "int32")
        logits = translator.model(
            {"source_ids": source_ids.numpy(), "target_ids": target_in}, training=False
        )
        logits = np.asarray(ops.convert_to_numpy(logits), np.float64)[0]
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        expected = sum(log_probs[t, y] for t, y in enumerate([*ids, END_ID]))
        assert total == pytest.approx(expected, rel=1e-4)
        assert per_token == pytest.approx(expected / (len(ids) + 1), rel=1e-4)


def test_sampling_is_decided_by_its_seed(translator):
    first = translator.sample(SENTENCES, top_k=20, seed=3)
    assert translator.sample(SENTENCES, top_k=20, seed=3) == first
    assert translator.sample(SENTENCES, top_k=20, seed=4) != first
    assert first[1] == ""


def test_export_needs_tensorflow(translator, backend, tmp_path):
    if backend == "tensorflow":
        pytest.skip("TensorFlow exports (tests/export)")
    for call in (lambda: translator.export(tmp_path / "serving"),
                 lambda: translator.save(tmp_path / "folder")):  # fmt: skip
        with pytest.raises(RuntimeError, match=f"runs Keras on {backend}.*KERAS_BACKEND="):
            call()
    assert not any(tmp_path.iterdir())  # refused before writing
    translator.save(tmp_path / "folder", serving=False)
    assert (tmp_path / "folder" / "model.keras").is_file()
    assert keras.backend.backend() == backend
