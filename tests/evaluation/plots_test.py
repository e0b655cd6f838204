"""Tests for zoo/evaluation/plots.py: files are written as non-empty PNGs; bad input raises."""

import numpy as np
import pytest
from matplotlib.colors import TABLEAU_COLORS

from zoo.evaluation import (
    MIN_BUCKET_SENTENCES,
    bleu_by_length,
    bleu_by_length_figure,
    format_table,
    plot_attention,
    plot_bleu_by_length,
)
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


def _bucket_rows(counts, bleu=50.0):
    """bleu_by_length-style rows of the default buckets with these sentence counts."""
    bins = ["0-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60+"]
    return [
        {"bin": b, "sentences": n, "bleu": (bleu + k if n else None)}
        for k, (b, n) in enumerate(zip(bins, counts, strict=True))
    ]


def test_small_and_empty_buckets_are_left_out_and_counts_shown(tmp_path):
    # test2016's shape: one 30-39-word sentence, none longer.
    rows = _bucket_rows([412, 451, 136, 1, 0, 0, 0])
    figure = bleu_by_length_figure({"greedy": rows, "beam 5": rows})
    axes = figure.axes[0]
    labels = [t.get_text() for t in axes.get_xticklabels()]
    assert labels == ["0-9\n(412)", "10-19\n(451)", "20-29\n(136)"]  # no 30-39 point, no empty
    for line in axes.get_lines():
        assert list(line.get_xdata()) == [0, 1, 2]
        assert list(line.get_ydata()) == [50.0, 51.0, 52.0]
    note = f"\nleft out, under {MIN_BUCKET_SENTENCES} sentences: 30-39 (1)"
    assert axes.get_xlabel().endswith(note)
    assert _is_png(plot_bleu_by_length(rows, tmp_path / "b.png"))


def test_the_minimum_is_a_parameter_and_no_bucket_above_it_says_so(tmp_path):
    rows = _bucket_rows([3, 0, 2, 0, 0, 0, 1])
    everything = bleu_by_length_figure(rows, min_sentences=1).axes[0]
    assert [t.get_text() for t in everything.get_xticklabels()] == [
        "0-9\n(3)",
        "20-29\n(2)",
        "60+\n(1)",
    ]
    none = bleu_by_length_figure(rows)
    assert none.axes[0].get_lines() == [] and none.axes[0].get_xticks().size == 0
    assert "no length bucket holds 10 sentences" in [t.get_text() for t in none.axes[0].texts]
    assert _is_png(plot_bleu_by_length(rows, tmp_path / "none.png"))


def test_systems_of_other_sentences_are_refused():
    with pytest.raises(ValueError, match="same buckets and sentence counts"):
        bleu_by_length_figure(
            {"a": _bucket_rows([5, 5, 0, 0, 0, 0, 0]), "b": _bucket_rows([5, 4, 1, 0, 0, 0, 0])}
        )


def test_the_markdown_table_brackets_small_buckets():
    table = format_table(_bucket_rows([412, 1, 0, 0, 0, 0, 0])).splitlines()
    assert f"under {MIN_BUCKET_SENTENCES} sentences" in table[0]
    assert table[2:5] == ["| 0-9 | 412 | 50.00 |", "| 10-19 | 1 | (51.00) |", "| 20-29 | 0 | - |"]


def test_the_markdown_table_of_several_systems_has_a_column_each():
    greedy, beam = (
        _bucket_rows([412, 1, 0, 0, 0, 0, 0]),
        _bucket_rows([412, 1, 0, 0, 0, 0, 0], 60.0),
    )
    table = format_table({"greedy": greedy, "beam5": beam}).splitlines()
    assert table[0] == "| source length (words) | sentences | BLEU greedy | BLEU beam5 |"
    assert table[2:4] == ["| 0-9 | 412 | 50.00 | 60.00 |", "| 10-19 | 1 | (51.00) | (61.00) |"]
    assert table[-1] == f"BLEU in brackets: under {MIN_BUCKET_SENTENCES} sentences."
    with pytest.raises(ValueError, match="same buckets"):
        format_table({"a": greedy, "b": _bucket_rows([413, 0, 0, 0, 0, 0, 0])})
