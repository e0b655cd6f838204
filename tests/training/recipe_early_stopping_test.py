"""A recipe run with --validation-metric bleu, --early-stopping and --accumulate-steps, end
to end at tiny size on a slice of Multi30k."""

import json
import runpy
import sys
from pathlib import Path

from zoo.training.callbacks import stopping_epoch

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "luong_base.py"
# 96 training pairs in batches of 16: 6 batches an epoch, 3 steps of 2 batches.
TINY = [
    "--size", "tiny", "--train-limit", "96", "--batch-size", "16", "--epochs", "4",
    "--vocab-size", "300", "--eval-limit", "6", "--eval-batch-size", "6", "--beam-size", "1",
    "--attention-plots", "0", "--no-export", "--max-minutes", "0",
]  # fmt: skip


def run_recipe(out, *extra):
    argv = sys.argv
    sys.argv = [str(RECIPE), *TINY, "--out", str(out), *extra]
    try:
        runpy.run_path(str(RECIPE), run_name="__main__")
    finally:
        sys.argv = argv
    return json.loads((Path(out) / "metrics.json").read_text(encoding="utf-8"))


def test_stops_on_validation_bleu_and_records_it(data_dir, tmp_path, capsys):
    flags = ["--validation-metric", "bleu", "--early-stopping", "1", "--accumulate-steps", "2"]
    flags += ["--learning-rate", "1e-9"]  # the translations, and their BLEU, stay the same
    metrics = run_recipe(tmp_path / "run", *flags)
    log = capsys.readouterr().out
    summary = metrics["training"]
    history = summary["history"]
    bleu = [record["val_bleu"] for record in history]
    record = summary["early_stopping"]
    # Epoch 2 gives epoch 1's BLEU, which is no improvement.
    assert record["stopped"] == stopping_epoch(bleu, "bleu", 1) == len(history) == 2
    assert record["best"] == max(bleu) and summary["validation_metric"] == "bleu"
    assert summary["steps"] == 3 * len(history) and metrics["steps"] == summary["steps"]
    assert "epochs of 3 steps of 2 batches of 16 pairs" in log
    assert log.count("val_bleu: ") == len(history)
    assert f"Early stopping after epoch {len(history)}: validation bleu" in log
    assert "the best checkpoint by validation bleu" in log or "averaging skipped" in log


def test_validation_bleu_limit_needs_the_bleu_metric(data_dir, tmp_path, capsys):
    try:
        run_recipe(tmp_path / "run", "--validation-bleu-limit", "3")
    except SystemExit as exit_:
        assert exit_.code == 2
    else:
        raise AssertionError("--validation-bleu-limit without --validation-metric bleu ran")
    assert "--validation-bleu-limit applies to --validation-metric bleu" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # refused when parsed: the corrected command runs
