"""The results of a search: a table of trials sorted by objective (CSV, text) and a plot.

rows = trial_table(tuner)               # list of dicts, best trial first
write_csv(rows, "runs/tune/trials.csv")
print(format_table(rows))
plot_by_attention(rows, "runs/tune/objective_by_attention.png", "val_loss")
"""

import csv
import math
import os

from zoo.tuning.space import ATTENTIONS, DIMENSIONS

METRICS = ("val_loss", "val_bleu", "val_perplexity", "val_accuracy")


def _active_values(hyperparameters):
    return {
        name: value
        for name, value in hyperparameters.values.items()
        if hyperparameters.is_active(name)
    }


def trial_table(tuner):
    """The completed trials of `tuner` as dicts, best objective first.

    Each row: `trial_id`, `objective` (the tuner's objective value), the metrics the trial
    reported (`val_loss`, `val_bleu`, ...), then its active hyperparameters (inactive
    conditional ones are empty strings). Unfinished or failed trials are left out.
    """
    oracle = tuner.oracle
    direction = oracle.objective.direction
    rows = []
    names = []
    for trial in oracle.trials.values():
        if trial.status != "COMPLETED" or trial.score is None:
            continue
        values = _active_values(trial.hyperparameters)
        names.extend(name for name in values if name not in names)
        row = {"trial_id": trial.trial_id, "objective": float(trial.score)}
        for metric in METRICS:
            if trial.metrics.exists(metric):
                row[metric] = float(trial.metrics.get_last_value(metric))
        row.update(values)
        rows.append(row)
    order = [n for n in DIMENSIONS if n in names] + [n for n in names if n not in DIMENSIONS]
    metrics = [m for m in METRICS if any(m in row for row in rows)]
    columns = ["trial_id", "objective", *metrics, *order]
    rows = [{column: row.get(column, "") for column in columns} for row in rows]
    rows.sort(key=lambda row: row["objective"] if direction == "min" else -row["objective"])
    return rows


def write_csv(rows, path):
    """Writes `rows` (from `trial_table`) to `path` as CSV with a header line."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    columns = list(rows[0]) if rows else ["trial_id", "objective"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _cell(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def format_table(rows):
    """`rows` as an aligned text table (one line per trial, best first)."""
    if not rows:
        return "(no completed trials)"
    columns = list(rows[0])
    cells = [[_cell(row[c]) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def plot_by_attention(rows, path, objective_name="objective", direction="min"):
    """Saves a PNG at `path`: each trial's objective (blue dots) and the best of each attention
    variant (red mark; `direction` "min" or "max"), one column per variant tried."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = [v for v in ATTENTIONS if any(row.get("attention") == v for row in rows)]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(variants) + 2), 4.0))
    for x, variant in enumerate(variants):
        scores = [row["objective"] for row in rows if row.get("attention") == variant]
        scores = [s for s in scores if math.isfinite(s)]
        ax.scatter([x] * len(scores), scores, color="tab:blue", alpha=0.7, zorder=3)
        if scores:
            best = min(scores) if direction == "min" else max(scores)
            ax.scatter([x], [best], marker="_", s=600, color="tab:red", zorder=4)
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels(variants, rotation=30, ha="right")
    ax.set_xlabel("attention")
    ax.set_ylabel(objective_name)
    ax.set_title(f"{objective_name} by attention variant ({len(rows)} trials; red: best)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
