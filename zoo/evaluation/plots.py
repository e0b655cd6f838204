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


def plot_bleu_by_length(tables, path, title="BLEU by source sentence length"):
    """Line plot of BLEU per length bin; one line per system. Returns `path` (PNG).

    Args:
        tables: rows from `bleu_by_length`, or a dict {system label: rows}.
        path: output file (.png).
    """
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
    figure = Figure(figsize=(6, 4))
    axes = figure.add_subplot()
    axes.set_prop_cycle(SERIES_CYCLE)
    for label, rows in tables.items():
        points = [(i, r["bleu"]) for i, r in enumerate(rows) if r["bleu"] is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            axes.plot(xs, ys, label=str(label))
    first = next(iter(tables.values()))
    axes.set_xticks(range(len(first)), [r["bin"] for r in first])
    axes.set_xlabel("source sentence length (words)")
    axes.set_ylabel("BLEU")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    if len(tables) > 4:  # many systems: the legend beside the axes, not over the lines
        axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    else:
        axes.legend()
    return _save(figure, path)


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
