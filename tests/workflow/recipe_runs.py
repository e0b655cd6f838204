"""Helpers of the workflow tests: a recipe run in this process as `python recipes/<name>.py`
would run it, on a tiny corpus of files in a temporary folder."""

import json
import runpy
import sys
from pathlib import Path

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
# Seconds, not minutes: 2 steps of 16 pairs, tiny model, 4 evaluation pairs, greedy only.
TINY = [
    "--size", "tiny", "--max-steps", "2", "--vocab-size", "120", "--batch-size", "16",
    "--beam-size", "1", "--eval-limit", "4", "--eval-batch-size", "4",
    "--attention-plots", "0", "--no-export", "--source-lang", "de", "--target-lang", "en",
]  # fmt: skip


def run_recipe(out, *extra, name="luong_base"):
    """Runs recipes/<name>.py in this process on `TINY` settings; returns metrics.json."""
    argv = sys.argv
    sys.argv = [str(RECIPES / f"{name}.py"), *TINY, "--out", str(out), *extra]
    try:
        runpy.run_path(str(RECIPES / f"{name}.py"), run_name="__main__")
    finally:
        sys.argv = argv
    return json.loads((Path(out) / "metrics.json").read_text(encoding="utf-8"))


def write_corpus(folder, small_corpus, splits=("train", "val", "test"), train_pairs=200):
    """`folder/{split}.de` and `.en` from Multi30k lines; returns the `--data` prefix."""
    folder.mkdir(parents=True, exist_ok=True)
    ranges = {"train": (0, train_pairs), "val": (train_pairs, train_pairs + 8)}
    for split in splits:
        first, last = ranges.get(split, (train_pairs + 8, train_pairs + 16))
        for lang, lines in (("de", small_corpus.source), ("en", small_corpus.target)):
            (folder / f"{split}.{lang}").write_text("\n".join(lines[first:last]) + "\n")
    return str(folder / "{split}")
