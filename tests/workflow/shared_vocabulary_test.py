"""--shared-vocabulary (one tokenizer for both languages) and --tie-embeddings through the
recipes' workflow: a tiny run trains, exports a SavedModel and translates; run.json records
both settings and a rerun with another value is refused."""

import argparse
import filecmp
import json
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from recipe_runs import TINY

import zoo.models
import zoo.workflow
from zoo.errors import UsageError
from zoo.translator import Translator
from zoo.workflow.flags import apply_model_flags
from zoo.workflow.run_folder import RunRecord


def build_model(args, source_vocab_size, target_vocab_size):
    """The luong_base preset at --size, tied with --tie-embeddings, as the workflow does."""
    model = zoo.models.build("luong_base", args.size, source_vocab_size, target_vocab_size)
    return apply_model_flags(model, args)


def run(out, data, *extra):
    argv = [a for a in TINY if a != "--no-export"] + ["--data", data, "--out", str(out), *extra]
    return zoo.workflow.main(build_model, recipe="luong_base", family="luong", argv=argv)


def test_shared_vocabulary_and_tied_embeddings_train_export_and_translate(tiny_corpus, tmp_path):
    out = tmp_path / "run"
    metrics = run(out, tiny_corpus, "--shared-vocabulary", "--tie-embeddings")
    # One tokenizer, saved twice: identical files, one vocabulary for both languages.
    comparison = filecmp.dircmp(out / "source_tokenizer", out / "target_tokenizer")
    assert comparison.left_list == comparison.right_list and comparison.left_list
    _, mismatch, errors = filecmp.cmpfiles(
        out / "source_tokenizer", out / "target_tokenizer", comparison.left_list, shallow=False
    )
    assert not mismatch and not errors
    assert (out / "vocab.de.txt").read_text() == (out / "vocab.en.txt").read_text()
    vocabulary = (out / "vocab.de.txt").read_text(encoding="utf-8").splitlines()
    assert 4 < len(vocabulary) <= 120
    # Trained on both sides: words of each language are pieces of the one vocabulary.
    pieces = {piece.lstrip("▁") for piece in vocabulary}
    assert {"Ein", "ein"} & pieces and {"A", "a"} & pieces

    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert record["shared_vocabulary"] is True and record["tie_embeddings"] is True

    model = keras.models.load_model(out / "model.keras", safe_mode=True)
    decoder = model.get_layer("decoder")
    assert decoder.tie_embeddings and decoder.vocab_size == len(vocabulary)
    assert metrics["parameters"] == model.count_params()
    untied = zoo.models.build("luong_base", "tiny", len(vocabulary), len(vocabulary))
    # Three-way: the output matrix (d x V) and the source embeddings (V x m) are gone; the
    # projection W_p (d x m) maps h~ to the embedding size.
    m, d, v = decoder.embedding_dim, decoder.units, len(vocabulary)
    assert type(model).__name__ == "ThreeWayTiedModel"
    assert model.count_params() == untied.count_params() - d * v + d * m - v * m

    translator = Translator.from_directory(str(out))
    assert len(translator.translate(["Ein Hund rennt."])) == 1
    serving = tf.saved_model.load(str(out / "serving"))
    result = serving.translate(tf.constant(["Ein Hund rennt im Park.", "Zwei Männer."]))
    assert result["translation"].shape == (2,)

    # A rerun with the other vocabulary setting is refused, naming the setting.
    with pytest.raises(SystemExit):
        run(out, tiny_corpus, "--tie-embeddings")


def test_a_changed_setting_refuses_to_resume(tmp_path):
    (tmp_path / "run.json").write_text(
        json.dumps({"shared_vocabulary": False, "tie_embeddings": False, "resume": True})
    )
    for name in ("shared_vocabulary", "tie_embeddings"):
        settings = {"shared_vocabulary": False, "tie_embeddings": False, name: True}
        args = argparse.Namespace(resume=True, **settings)
        record = RunRecord(str(tmp_path), args, say=lambda message: None)
        with pytest.raises(UsageError, match=f"{name}: False -> True"):
            record.check_settings()


def test_flags_default_to_the_library_and_untied_models_are_unchanged():
    parser = zoo.workflow.make_parser("luong_base", "luong")
    args = parser.parse_args([])
    assert args.shared_vocabulary is False
    assert args.tie_embeddings is None  # the preset's choice: luong_base's is the papers'
    assert zoo.models.preset_arguments("luong_base", "base")["tie_embeddings"] is False
    model = zoo.models.build("luong_base", "tiny", 20, 20)
    assert apply_model_flags(model, args) is model
    tied = apply_model_flags(model, parser.parse_args(["--tie-embeddings"]))
    assert tied.get_layer("decoder").tie_embeddings
    assert not tied.get_layer("encoder").shared_embedding
    source = np.array([[5, 6, 0]], "int32")
    logits = tied({"source_ids": source, "target_ids": np.array([[1, 7]], "int32")})
    assert logits.shape == (1, 2, 20)
    help_text = parser.format_help()
    assert "--shared-vocabulary" in help_text and "Press and Wolf 2017" in help_text


def test_tying_a_model_without_a_tieable_decoder_is_refused():
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2, name="dense")(inputs))
    with pytest.raises(ValueError, match="'decoder' takes tie_embeddings"):
        zoo.models.with_tied_embeddings(model)


def test_the_shared_tokenizer_learns_both_sides_of_the_sampled_pairs(tmp_path):
    """--tokenizer-sample bounds pairs: both sides of the same sampled pairs, and only
    they, make the one vocabulary (a word tokenizer keeps every word it saw)."""
    from zoo.data.corpus import Corpus
    from zoo.workflow.data import tokenizers

    source = [f"quelle{i} wort{i}" for i in range(40)]
    target = [f"source{i} word{i}" for i in range(40)]
    train = Corpus("toy", "de", "en", "train", source, target)
    args = argparse.Namespace(
        resume=False, shared_vocabulary=True, tokenizer="word", vocab_size=1000,
        lowercase=False, seed=0, tokenizer_sample=6, source_lang="de", target_lang="en",
    )  # fmt: skip
    made = tokenizers(args, train, str(tmp_path), True, lambda message: None)
    assert made[0] is made[1]
    vocabulary = (tmp_path / "vocab.de.txt").read_text(encoding="utf-8").splitlines()[4:]
    assert vocabulary == (tmp_path / "vocab.en.txt").read_text(encoding="utf-8").splitlines()[4:]
    assert len(vocabulary) == 4 * 6  # two words a side, six pairs
    pairs = {word[len("quelle") :] for word in vocabulary if word.startswith("quelle")}
    for i in pairs:  # every sampled pair gave its four words, of both languages
        assert {f"quelle{i}", f"wort{i}", f"source{i}", f"word{i}"} <= set(vocabulary)
    assert len(pairs) == 6


def test_the_main_jobs_preset_ties_at_base_and_the_flag_overrides_it(monkeypatch):
    from zoo.workflow.flags import tied_presets_help

    presets_module = sys.modules["zoo.models.presets"]  # `zoo.models.presets` is a function

    tied = {
        (name, size)
        for name in zoo.models.presets()
        for size in zoo.models.SIZES
        if zoo.models.preset_arguments(name, size)["tie_embeddings"]
    }
    assert tied == {(name, "base") for name in presets_module.TIED_AT_BASE} != set()
    parser = zoo.workflow.make_parser("luong_local_general", "luong")
    for argv, expected in (([], True), (["--no-tie-embeddings"], False)):
        args = parser.parse_args(argv)
        assert zoo.workflow.hyperparameters(args, "luong_local_p_general")["tie_embeddings"] is (
            expected
        )
    assert (
        zoo.workflow.hyperparameters(parser.parse_args([]), "luong_local_m_general")[
            "tie_embeddings"
        ]
        is False
    )  # local-m: the papers' untied output layer
    # A model the recipe built tied (the preset's choice) is tied three ways with
    # --shared-vocabulary, as with --tie-embeddings.
    model = zoo.models.build("luong_base", "tiny", 20, 20, tie_embeddings=True)
    args = zoo.workflow.make_parser("luong_base", "luong").parse_args(["--shared-vocabulary"])
    assert type(apply_model_flags(model, args)).__name__ == "ThreeWayTiedModel"
    text = " ".join(parser.format_help().split())
    assert "on for luong_local_p_general at --size base, off for the others" in text
    monkeypatch.setattr(presets_module, "TIED_AT_BASE", ())
    assert tied_presets_help() == "the preset's: off, as in the papers"
