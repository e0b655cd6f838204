"""Tests for zoo/evaluation/plots.py: files are written as non-empty PNGs; bad input raises."""

import numpy as np
import pytest
from matplotlib.colors import TABLEAU_COLORS

from zoo.evaluation import bleu_by_length, plot_attention, plot_bleu_by_length
from zoo.evaluation.plots import SERIES_CYCLE

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _is_png(path):
    data = open(path, "rb").read()
    return data[:8] == PNG_MAGIC and len(data) > 1000


def test_attention_heatmap_writes_png(tmp_path):
    rng = np.random.default_rng(0)
    weights = rng.random((4, 5))
    weights /= weights.sum(axis=1, keepdims=True)
    path = plot_attention(
        ["Ein", "Hund", "rennt", ".", "</s>"],
        ["A", "dog", "runs", "."],
        weights,
        tmp_path / "sub" / "attention_0.png",
        title="example",
    )
    assert _is_png(path)


def test_attention_shape_mismatch_raises(tmp_path):
    with pytest.raises(ValueError, match=r"\(4, 5\)"):
        plot_attention(["a"] * 5, ["b"] * 4, np.zeros((4, 6)), tmp_path / "x.png")
    with pytest.raises(ValueError, match="finite"):
        plot_attention(["a"], ["b"], np.full((1, 1), np.nan), tmp_path / "x.png")


def test_bleu_by_length_plot_writes_png(tmp_path):
    sources = ["a b c", "a " * 15, "a " * 25, "a " * 65]
    hyps = ["a dog runs", "the cat sat here", "one two three four", "x y"]
    refs = ["a dog runs", "the cat sat there", "one two three four", "x z"]
    rows = bleu_by_length(sources, hyps, refs)
    path = plot_bleu_by_length({"greedy": rows, "beam 5": rows}, tmp_path / "bleu.png")
    assert _is_png(path)
    assert _is_png(plot_bleu_by_length(rows, tmp_path / "single.png"))
    with pytest.raises(ValueError, match="rows"):
        plot_bleu_by_length({}, tmp_path / "none.png")


def test_series_cycle_is_distinct_and_bounded(tmp_path):
    styles = list(SERIES_CYCLE)
    keys = [(s["color"], s["linestyle"], s["marker"]) for s in styles]
    assert len(set(keys)) == 40
    assert {s["color"] for s in styles[:10]} == set(TABLEAU_COLORS)  # ten colours
    assert {s["linestyle"] for s in styles[:10]} == {"-"}
    assert styles[10]["color"] == styles[0]["color"] and styles[10]["linestyle"] != "-"
    rows = bleu_by_length(["a b c"], ["a dog runs"], ["a dog runs"])
    with pytest.raises(ValueError, match="received 41"):
        plot_bleu_by_length({f"s{i}": rows for i in range(41)}, tmp_path / "x.png")


def test_bleu_by_length_plot_with_many_systems(tmp_path):
    rows = bleu_by_length(["a b c", "a " * 15], ["a dog runs", "x y"], ["a dog runs", "x z"])
    tables = {f"system {i}": rows for i in range(14)}
    assert _is_png(plot_bleu_by_length(tables, tmp_path / "many.png"))
