"""The Translator on JAX and PyTorch: a folder written on TensorFlow translates there as on
TensorFlow (greedy and beam texts, scores and attention, n-best lists, `score`; sampling
reproducible by its seed), and a model trained on JAX, saved, loaded on TensorFlow and
exported as a SavedModel translates as the JAX search did (greedy ids equal).

The other backends run in their own processes (`zoo.testing.backend_run`, the probes in
`zoo.testing.model_probe`), one call per backend.
"""

import os

import numpy as np
import pytest
import tensorflow as tf
from translator_toy import MIXED, toy_translator

from zoo.testing.backend_run import backend_installed, run_in_backend
from zoo.testing.model_probe import translate_folder
from zoo.text.preprocessor import encode
from zoo.translator import Translator
from zoo.translator.output_folder import EXPORT_COMMAND
from zoo.translator.staged import export_with_tensorflow

PROBE = "zoo.testing.model_probe"
SENTENCES = [*MIXED[:4], "Zwei Männer lachen.", "Eine Frau sitzt auf einer Bank."]
OTHER_BACKENDS = ["jax", "torch"]


def _require(backend):
    if not backend_installed(backend):
        pytest.skip(f"{backend} is not installed: pip install -e '.[{backend}]'")


@pytest.fixture(scope="module")
def folder(data_dir, tmp_path_factory):
    """A tiny output folder written on TensorFlow (no SavedModel), and its outputs here."""
    path = tmp_path_factory.mktemp("translator") / "folder"
    toy_translator("luong_global_general", beam_size=2).save(path, serving=False)
    return str(path), translate_folder({}, str(path), SENTENCES)


@pytest.mark.parametrize("backend", OTHER_BACKENDS)
def test_a_tensorflow_folder_translates_the_same_on(backend, folder, tmp_path):
    _require(backend)
    path, expected = folder
    serving = tmp_path / "serving"
    found = run_in_backend(backend, f"{PROBE}:translate_folder", {}, folder=path,
                           sentences=SENTENCES, export_to=str(serving))  # fmt: skip
    for name in ("greedy/texts", "greedy/plain_texts", "beam/texts", "beam/plain_texts",
                 "n_best/texts"):  # fmt: skip
        assert found[name].tolist() == expected[name].tolist(), name
    for name in ("greedy/scores", "beam/scores", "greedy/attention", "beam/attention",
                 "n_best/scores", "score"):  # fmt: skip
        np.testing.assert_allclose(found[name], expected[name], rtol=1e-4, atol=1e-5,
                                   err_msg=name)  # fmt: skip
    assert found["greedy/attention"].any() and found["score"].any()  # something compared
    assert found["sample"].tolist() == found["sample_again"].tolist()  # the seed decides
    assert found["sample"].tolist() != found["sample_other"].tolist()
    assert found["sample"][1] == found["sample"][2] == ""  # no source tokens: ""
    # Export, export_litert and save(serving=True) refuse, naming the export command.
    for message in found["refusals"]:
        assert backend in message and "KERAS_BACKEND=tensorflow" in message, message
        assert "Translator.from_directory" in message and ".export(" in message, message
    assert not serving.exists() and not (tmp_path / "serving.tflite").exists()


def test_the_samples_of_one_seed_are_the_same_on_tensorflow(folder):
    _, expected = folder
    assert expected["sample"].tolist() == expected["sample_again"].tolist()


@pytest.mark.slow  # trains on JAX, then exports in a TensorFlow process
def test_a_model_trained_on_jax_exports_from_tensorflow(folder, tmp_path):
    _require("jax")
    path, _ = folder
    translator = Translator.from_directory(path)
    pairs = [("Ein Hund rennt.", "A dog runs."), ("Zwei Männer lachen.", "Two men laugh.")]
    source_ids, _ = encode(translator.source_tokenizer, tf.constant([s for s, _ in pairs]))
    target_ids, _ = encode(translator.target_tokenizer, tf.constant([t for _, t in pairs]))
    trained = str(tmp_path / "trained_on_jax")
    data = {"source_ids": source_ids.numpy(), "target_ids": target_ids.numpy()}
    on_jax = run_in_backend("jax", f"{PROBE}:fit_and_save", data, timeout=1200, folder=path,
                            out=trained, sentences=SENTENCES)  # fmt: skip
    assert on_jax["losses"][1] < on_jax["losses"][0]  # it trained
    # The documented export (EXPORT_COMMAND, run by export_with_tensorflow): a TensorFlow
    # process loads the folder's .keras file.
    serving = export_with_tensorflow(trained, n_best=2)
    assert serving == os.path.join(trained, "serving")
    loaded = tf.saved_model.load(str(serving))  # held: its functions read its variables
    exported = loaded.translate_greedy(tf.constant(SENTENCES))
    lengths = exported["target_lengths"].numpy()
    np.testing.assert_array_equal(lengths, on_jax["lengths"])
    ids = exported["target_ids"].numpy()
    width = max(ids.shape[1], on_jax["ids"].shape[1])
    pad = lambda x: np.pad(x, [(0, 0), (0, width - x.shape[1])])  # noqa: E731
    np.testing.assert_array_equal(pad(ids), pad(on_jax["ids"]))
    assert lengths.max() > 1  # the trained model says more than END


def test_the_library_guide_gives_the_export_command_the_refusal_names():
    from pathlib import Path

    guide = Path(__file__).resolve().parents[1] / "docs" / "library.md"
    assert EXPORT_COMMAND in guide.read_text(encoding="utf-8")
