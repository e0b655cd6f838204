"""Figures: BLEU by sentence length (Bahdanau et al. 2014, fig. 2) and attention heatmaps
(fig. 3). Drawn with matplotlib's Agg canvas directly (no pyplot, no global backend change),
so they work on headless machines and in threads.
"""

import os

import numpy as np
from matplotlib import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TABLEAU_COLORS
from matplotlib.figure import Figure

from zoo.checks import check_int
from zoo.evaluation.scores import MIN_BUCKET_SENTENCES, check_same_buckets


def _save(figure, path):
    path = os.fspath(path)
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    FigureCanvasAgg(figure)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    return path


# Each line of a figure its own look, for up to 40 systems (the paper table has 14): the ten
# "tab10" colours with solid lines and round markers, then the same colours again with
# another line style and marker for each further ten.
SERIES_CYCLE = (
    cycler(linestyle=["-", "--", ":", "-."]) + cycler(marker=["o", "s", "^", "D"])
) * cycler(color=list(TABLEAU_COLORS))


def _check_tables(tables):
    """`tables` as a dict {label: bleu_by_length rows} of the same buckets and counts, few
    enough to draw."""
    if isinstance(tables, list):
        tables = {"model": tables}
    if not isinstance(tables, dict) or not tables:
        raise ValueError(
            "Expected bleu_by_length rows or a non-empty dict {label: rows}; "
            f"received {type(tables).__name__}."
        )
    if len(tables) > len(SERIES_CYCLE):
        raise ValueError(
            f"Expected at most {len(SERIES_CYCLE)} systems in one figure, for their lines to "
            f"stay distinct; received {len(tables)}. Plot fewer systems per figure."
        )
    return check_same_buckets(tables)


def bleu_by_length_figure(
    tables, title="BLEU by source sentence length", min_sentences=MIN_BUCKET_SENTENCES
):
    """The matplotlib `Figure` of `plot_bleu_by_length` (its arguments there)."""
    tables = _check_tables(tables)
    min_sentences = check_int("bleu_by_length_figure", "min_sentences", min_sentences)
    first = next(iter(tables.values()))
    shown = [i for i, r in enumerate(first) if r["sentences"] >= min_sentences]
    left_out = [
        f"{r['bin']} ({r['sentences']})" for r in first if 0 < r["sentences"] < min_sentences
    ]
    figure = Figure(figsize=(6, 4))
    axes = figure.add_subplot()
    axes.set_prop_cycle(SERIES_CYCLE)
    drawn = False
    for label, rows in tables.items():
        points = [(x, rows[i]["bleu"]) for x, i in enumerate(shown) if rows[i]["bleu"] is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            axes.plot(xs, ys, label=str(label))
            drawn = True
    axes.set_xticks(
        range(len(shown)), [f"{first[i]['bin']}\n({first[i]['sentences']})" for i in shown]
    )
    note = f"\nleft out, under {min_sentences} sentences: {', '.join(left_out)}" if left_out else ""
    axes.set_xlabel("source sentence length (words); test sentences in brackets" + note)
    axes.set_ylabel("BLEU")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    if not shown:
        axes.text(
            0.5, 0.5, f"no length bucket holds {min_sentences} sentences",
            ha="center", va="center", transform=axes.transAxes,
        )  # fmt: skip
    if drawn and len(tables) > 4:  # many systems: the legend beside the axes, not over the lines
        axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    elif drawn:
        axes.legend()
    return figure


def plot_bleu_by_length(
    tables, path, title="BLEU by source sentence length", min_sentences=MIN_BUCKET_SENTENCES
):
    """Line plot of BLEU per source-length bucket, one line per system (Bahdanau et al. 2014,
    figure 2). Returns `path` (PNG).

    A bucket of fewer than `min_sentences` test sentences (`MIN_BUCKET_SENTENCES`) is left
    out, its BLEU too uncertain to draw (one sentence scores anywhere from 0 to 100), and
    named with its count under the axes; empty buckets are not on the axis; each bucket's
    label gives its number of sentences.

    Args:
        tables: rows from `bleu_by_length`, or a dict {system label: rows} of the same
            sentences (the same buckets and counts).
        path: output file (.png).
        title: the figure's title.
        min_sentences: the fewest sentences a bucket needs to be drawn.
    """
    return _save(bleu_by_length_figure(tables, title, min_sentences), path)


def plot_attention(source_tokens, target_tokens, weights, path, title=None):
    """Heatmap of attention weights, target rows x source columns (grey scale, white = 1).

    Args:
        source_tokens: Ts source tokens (columns, labelled on top).
        target_tokens: Tt generated tokens (rows).
        weights: array (Tt, Ts); row t is the alignment used to emit target token t.
        path: output file (.png).

    Returns:
        `path`.
    """
    weights = np.asarray(weights, dtype=np.float32)
    expected = (len(target_tokens), len(source_tokens))
    if weights.shape != expected:
        raise ValueError(
            f"Expected weights of shape (len(target_tokens), len(source_tokens)) = {expected}; "
            f"received {weights.shape}. Crop the padding before plotting."
        )
    if not np.all(np.isfinite(weights)):
        raise ValueError("Expected finite attention weights; received NaN or inf.")
    height = max(3.0, 0.35 * expected[0] + 1.5)
    width = max(3.0, 0.35 * expected[1] + 1.5)
    figure = Figure(figsize=(width, height))
    axes = figure.add_subplot()
    image = axes.imshow(weights, cmap="gray", vmin=0.0, vmax=1.0, aspect="auto")
    axes.set_xticks(range(expected[1]), list(source_tokens), rotation=90)
    axes.set_yticks(range(expected[0]), list(target_tokens))
    axes.xaxis.tick_top()
    if title:
        axes.set_title(title, pad=40)
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    return _save(figure, path)
