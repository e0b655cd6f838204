"""Every recipe end to end at tiny size on a slice of Multi30k, as continuous integration runs it.

Each recipe runs in this process through `runpy` (as `python recipes/<name>.py ...` would,
without paying for TensorFlow's start-up nine times), then the test checks the output
folder; four of them (EXPORTED) also translate with the exported SavedModel. One recipe
also runs as a real subprocess to show that `--help` works from the command line.
"""

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the exported tokenizers use)

from zoo.data import Corpus
from zoo.text import load_tokenizer
from zoo.training import average_checkpoints
from zoo.translator import Translator
from zoo.workflow.report import select_model

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "recipes"
NAMES = (
    "bahdanau_rnnencdec",
    "bahdanau_rnnsearch",
    "luong_base",
    "luong_global_dot",
    "luong_global_general",
    "luong_global_concat",
    "luong_global_location",
    "luong_local_dot",
    "luong_local_general",
)
ATTENTION_FREE = {"bahdanau_rnnencdec", "luong_base"}
# The recipes whose test also exports and loads a SavedModel (about 8 s each): the models
# that tests/export does not export (there: local-p general, global location, and an
# ensemble of global general with RNNsearch). The other recipes run with --no-export.
EXPORTED = {"bahdanau_rnnencdec", "luong_base", "luong_global_concat", "luong_local_dot"}
# Small enough for CI: 5 steps of 16 pairs (paper optimizer), 6 test sentences,
# SentencePiece vocabularies of at most 500 pieces.
QUICK = [
    "--size", "tiny", "--max-steps", "5", "--train-limit", "96", "--eval-limit", "6",
    "--vocab-size", "500", "--batch-size", "16", "--beam-size", "2",
    "--eval-batch-size", "8", "--attention-plots", "1",
]  # fmt: skip


def run_recipe(name, out, *extra):
    """Runs recipes/<name>.py in-process with `argv` and returns its metrics.json."""
    argv = sys.argv
    sys.argv = [str(RECIPES / f"{name}.py"), *QUICK, "--out", str(out), *extra]
    try:
        runpy.run_path(str(RECIPES / f"{name}.py"), run_name="__main__")
    finally:
        sys.argv = argv
    with open(out / "metrics.json", encoding="utf-8") as f:
        return json.load(f)


def test_every_recipe_is_tested():
    """Every script that runs the shared workflow (one per paper configuration) is here."""
    workflows = [p.stem for p in RECIPES.glob("*.py") if "zoo.workflow.main(" in p.read_text()]
    assert sorted(workflows) == sorted(NAMES)


# Every run: the main job, both Bahdanau recipes and the exported Luong ones; the other
# Luong recipes differ from these only in their preset's attention, which
# tests/workflow/preset_run_test.py builds for every recipe (the whole set runs as `slow`).
EVERY_RUN = {"bahdanau_rnnencdec", "bahdanau_rnnsearch", "luong_global_concat",
             "luong_local_dot", "luong_local_general"}  # fmt: skip


@pytest.mark.parametrize(
    "name", [n if n in EVERY_RUN else pytest.param(n, marks=pytest.mark.slow) for n in NAMES]
)
def test_recipe_trains_evaluates_and_exports(name, data_dir, tmp_path, capsys):
    out = tmp_path / name
    exports = name in EXPORTED
    metrics = run_recipe(name, out, *([] if exports else ["--no-export"]))

    # metrics.json: the scores with their signatures, for greedy and beam search.
    for key in ("bleu", "chrf", "bleu_greedy", "chrf_greedy", "ppl", "tokens_per_s"):
        assert np.isfinite(metrics[key]), (key, metrics[key])
    assert metrics["bleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert metrics["chrf_signature"].startswith("nrefs:1|case:mixed")
    assert metrics["steps"] == 5 and metrics["training"]["steps"] == 5
    assert metrics["beam"]["beam_size"] == 2 and metrics["greedy"]["beam_size"] == 1
    assert metrics["greedy"]["sentences"] == 6  # every test sentence, location's too
    assert metrics["recipe"] == name and metrics["size"] == "tiny"
    # translator.json: search settings and the data `python -m zoo evaluate` defaults to.
    config = json.loads((out / "translator.json").read_text())
    assert (config["data"], config["source_lang"], config["target_lang"]) == (
        "multi30k",
        "de",
        "en",
    )
    assert config["beam_size"] == 2 and config["recipe"] == name

    # The files a user gets.
    for path in (
        "model.keras",
        "source_tokenizer",
        "target_tokenizer",
        "vocab.de.txt",
        "vocab.en.txt",
        "translator.json",
        "run.json",
        "bleu_by_length.png",
        "bleu_by_length.tsv",
        "bleu_by_length.md",
        "translations.test2016.greedy.txt",
        "translations.test2016.beam.txt",
    ):
        assert (out / path).exists(), path
    assert (out / "serving" / "saved_model.pb").exists() == exports
    assert any((out / "logs" / "train").iterdir()), "no TensorBoard events"
    assert any((out / "checkpoints").iterdir()), "no checkpoint"
    vocab = (out / "vocab.en.txt").read_text(encoding="utf-8").splitlines()
    assert 4 < len(vocab) <= 500
    table = (out / "bleu_by_length.tsv").read_text(encoding="utf-8").splitlines()
    assert table[0].split("\t") == ["source_length", "sentences", "bleu_greedy", "bleu_beam2"]
    assert sum(int(row.split("\t")[1]) for row in table[1:]) == metrics["greedy"]["sentences"]
    hypotheses = (out / "translations.test2016.beam.txt").read_text(encoding="utf-8")
    assert len(hypotheses.splitlines()) == metrics["beam"]["sentences"]
    heatmaps = sorted(out.glob("attention_*.png"))
    assert len(heatmaps) == (0 if name in ATTENTION_FREE else 1)

    if exports:  # the SavedModel translates on its own, like the Translator with beam 2
        serving = tf.saved_model.load(str(out / "serving"))
        sources = ["Ein Hund rennt im Park.", "Zwei Männer spielen Fußball."]
        result = serving.translate(tf.constant(sources))
        assert result["translation"].shape == (2,)
        assert result["translation"].dtype == tf.string

    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.startswith(f"{name}: BLEU ") and str(out) in summary


def test_plain_rerun_resumes_and_changed_settings_are_refused(data_dir, tmp_path, capsys):
    out = tmp_path / "run"
    first = run_recipe("luong_base", out, "--max-steps", "3", "--no-export")
    assert first["steps"] == 3
    final_line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "model.keras" in final_line and "serving/" not in final_line  # what was written
    assert "attention_" not in final_line  # an attention-free model draws none
    # A run.json from a zoo without some of today's flags still resumes.
    settings = json.loads((out / "run.json").read_text())
    del settings["streaming"], settings["tokenizer_sample"]
    (out / "run.json").write_text(json.dumps(settings))
    # No epoch ended, so the 60-minute limit made no plan; a plan found on resume is kept.
    assert first["training"]["time_plan"] is None
    plan = {"epochs": 12, "configured_decay_after_epochs": 9, "decay_after_epochs": 2}
    (out / "checkpoints" / "time_plan.json").write_text(json.dumps(plan))
    second = run_recipe(
        "luong_base", out, "--max-steps", "5", "--no-export", "--attention-plots", "0"
    )
    assert second["steps"] == 5
    assert second["training"]["resumed_from_step"] == 3
    assert second["training"]["time_plan"] == plan
    printed = capsys.readouterr().out
    assert "Resuming from step 3" in printed
    assert "Keeping this run's time plan: halving after epoch 2" in printed
    # Two checkpoints now (steps 3 and 5): the run scored the best one and their mean on
    # validation, and translator.json names the one with the higher BLEU.
    selection = second["selection"]
    assert selection["checkpoints"] == ["ckpt-0000000003", "ckpt-0000000005"]
    bleu = selection["val_bleu"]
    assert set(bleu) == {"model.keras", "model.averaged.keras"}
    assert selection["model_file"] == max(bleu, key=lambda k: (bleu[k], k == "model.keras"))
    assert Translator.model_file(out) == selection["model_file"]
    assert (out / "model.averaged.keras").exists()
    # A user's mistake: the message alone and exit status 2; --debug raises with a traceback.
    with pytest.raises(SystemExit) as stopped:
        run_recipe("luong_base", out, "--dropout", "0.5", "--no-export")
    assert stopped.value.code == 2
    assert "error: " in capsys.readouterr().err
    with pytest.raises(ValueError, match="other settings.*dropout"):
        run_recipe("luong_base", out, "--dropout", "0.5", "--no-export", "--debug")
    # The run's checkpoints (steps 3 and 5) average into one model file that loads.
    from zoo import cli

    assert cli.main(["average", str(out), "--last", "2"]) == 0
    assert "Averaged 2 checkpoints" in capsys.readouterr().out
    averaged = keras.models.load_model(out / "model.averaged.keras")
    assert averaged.count_params() == keras.models.load_model(out / "model.keras").count_params()


def test_selection_delivers_the_model_with_the_higher_validation_bleu(
    data_dir, tmp_path, monkeypatch
):
    """Validation references made of one candidate's own translations: that one must win
    (ties go to the best checkpoint). A 2-step model's translations are too short for BLEU's
    4-grams, so the score here is exact match, as a stand-in for corpus BLEU."""
    import zoo.workflow.report as selection_module

    out = tmp_path / "run"
    run_recipe("luong_base", out, "--max-steps", "2", "--no-export", "--checkpoint-every", "1",
               "--average-last", "0")  # fmt: skip
    tokenizers = [load_tokenizer(out / d) for d in ("source_tokenizer", "target_tokenizer")]
    sources = ["Ein Hund rennt.", "Zwei Männer spielen Fußball.", "Eine Frau liest ein Buch."]
    settings = {"beam_size": 2}
    best = keras.models.load_model(out / "model.keras")
    averaged = keras.models.load_model(out / "model.keras")
    average_checkpoints(averaged, out / "checkpoints", last=2)
    outputs = {
        name: Translator(model, *tokenizers, **settings).translate(sources)
        for name, model in (("model.keras", best), ("model.averaged.keras", averaged))
    }
    monkeypatch.setattr(
        selection_module.evaluation,
        "corpus_scores",
        lambda hypotheses, references: {"bleu": 100.0 * (list(hypotheses) == list(references))},
    )
    for owner, references in outputs.items():
        # the owner of the references wins, unless both translate alike (a tie: the best)
        expected = owner if outputs["model.keras"] != references else "model.keras"
        val = Corpus("toy", "de", "en", "val", sources, references)
        translator, selection = select_model(
            out / "model.keras", str(out), val, tokenizers, average_last=2,
            translator_settings=settings, say=lambda message: None,
        )  # fmt: skip
        assert selection["model_file"] == expected, selection
        assert selection["val_bleu"][owner] == 100.0
        assert translator.translate(sources) == outputs[expected]
    assert (out / "model.averaged.keras").exists()


def test_a_streamed_corpus_trains_counts_once_and_resumes(data_dir, tmp_path, capsys):
    """gzip files with {split} in their prefix, read from disk each epoch (--streaming on)."""
    import gzip

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for split, original, count in (
        ("train", "train", 96),
        ("val", "val", 6),
        ("test", "test2016", 6),
    ):
        for lang in ("de", "en"):
            lines = (data_dir / "multi30k" / f"{original}.{lang}").read_text().splitlines()
            data = "\n".join(lines[:count]) + "\n"
            (corpus / f"{split}.{lang}.gz").write_bytes(gzip.compress(data.encode()))
    quick = [a for a in QUICK if a not in ("--train-limit", "96")]
    out = tmp_path / "run"
    argv = ["--data", str(corpus / "{split}"), "--source-lang", "de", "--target-lang", "en",
            "--streaming", "auto", "--no-export", "--max-steps", "4", "--shuffle-buffer", "32",
            "--average-last", "0"]  # fmt: skip
    sys_argv = sys.argv
    try:
        sys.argv = ["luong_base.py", *quick, *argv, "--out", str(out)]
        runpy.run_path(str(RECIPES / "luong_base.py"), run_name="__main__")
        printed = capsys.readouterr().out
        assert "streamed from" in printed and "Stream: counting the training pairs" in printed
        counts = json.loads((out / "stream_counts.json").read_text())["counts"]
        # the in-memory path drops the same pair (more than 50 tokens): 95 of 96
        assert (counts["pairs"], counts["kept"], counts["too_long"]) == (96, 95, 1)
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["steps"] == 4 and metrics["greedy"]["sentences"] == 6
        # A plain re-run resumes and reuses the count.
        sys.argv = ["luong_base.py", *quick, *argv, "--out", str(out)]
        sys.argv[sys.argv.index("4")] = "7"
        runpy.run_path(str(RECIPES / "luong_base.py"), run_name="__main__")
        printed = capsys.readouterr().out
        assert "counted before" in printed and "Resuming from step 4" in printed
        assert json.loads((out / "metrics.json").read_text())["steps"] == 7
        # Exact resume on the stream: 4 + 3 steps end where 7 steps in one run do.
        straight = tmp_path / "straight"
        sys.argv = ["luong_base.py", *quick, *argv, "--out", str(straight)]
        sys.argv[sys.argv.index("4")] = "7"
        runpy.run_path(str(RECIPES / "luong_base.py"), run_name="__main__")
        final = "checkpoints/ckpt-0000000007/variables.npz"
        with np.load(out / final) as resumed, np.load(straight / final) as one_run:
            assert sorted(resumed.files) == sorted(one_run.files)
            for key in one_run.files:
                np.testing.assert_array_equal(resumed[key], one_run[key], err_msg=key)
        # --train-limit is for corpora held in memory.
        sys.argv = ["luong_base.py", *QUICK, *argv, "--out", str(tmp_path / "other"), "--debug"]
        with pytest.raises(ValueError, match="--train-limit applies to corpora read in memory"):
            runpy.run_path(str(RECIPES / "luong_base.py"), run_name="__main__")
    finally:
        sys.argv = sys_argv


def test_data_error_from_the_command_line_is_one_quiet_line(tmp_path):
    # No traceback, no TensorFlow CUDA lines on this CPU machine, exit status 1.
    missing = tmp_path / "nowhere" / "{split}"
    result = subprocess.run(
        [sys.executable, str(RECIPES / "luong_base.py"), "--data", str(missing),
         "--source-lang", "de", "--target-lang", "en", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("python recipes/luong_base.py: error: Unknown corpus")
    assert "Traceback" not in result.stderr
    assert "cuda" not in result.stderr.lower(), result.stderr


def test_help_from_the_command_line():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, str(RECIPES / "luong_local_general.py"), "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for flag in (
        "--data", "--source-lang", "--target-lang", "--size", "--epochs", "--max-steps",
        "--batch-size", "--precision", "--strategy", "--out", "--resume", "--seed",
        "--beam-size", "--optimizer", "--no-input-feeding", "--dropout", "--reverse-source",
        "--window", "--vocab-size", "--tokenizer", "--max-length", "--train-limit",
        "--eval-limit", "--checkpoint-every", "--mode", "ZOO_DATA_DIR",
    ):  # fmt: skip
        assert flag in text, flag
    assert "SGD at learning rate 1.0" in " ".join(text.split())  # the paper optimizer
    assert "saved_models/luong_local_general/" in text
