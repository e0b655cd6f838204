"""Running a tuning search (`tune`) and reporting its results.

The results of a search: a table of trials sorted by objective (CSV, text) and a plot.

rows = trial_table(tuner)               # list of dicts, best trial first
write_csv(rows, "runs/tune/trials.csv")
print(format_table(rows))
plot_by_attention(rows, "runs/tune/objective_by_attention.png", "val_loss")

`tune(...)`: a whole hyperparameter search, from a corpus name to the best model's files.

Files under `directory`:

    settings.json                 what the search was started with (a rerun must match)
    tokenizers/source, target/    SentencePiece tokenizers trained on the training slice
    search/                       keras-tuner's project (oracle.json, trial_<id>/ ...)
    trials.csv                    completed trials, best objective first
    objective_by_attention.png    objective of every trial by attention variant
    best/model.keras              the best trial's model (weights of its last epoch)
    best/source_tokenizer/, best/target_tokenizer/, best/hyperparameters.json

Resuming: running `tune` again with the same `directory` (and settings) reloads the
tuner's state (`overwrite=False`): completed trials are kept and not run again, a trial
interrupted while running is run again, and the search continues up to `max_trials`.

Example:
    >>> result = tune("multi30k", "de", "en", tuner="random", max_trials=3,
    ...               steps_per_trial=20, size="tiny", directory="runs/tune",
    ...               train_limit=2000, eval_limit=200, vocab_size=1000)  # doctest: +SKIP
    >>> result["rows"][0]["attention"]  # doctest: +SKIP
    'luong_local_p_general'
"""

import csv
import importlib.util
import json
import math
import os
import warnings
from pathlib import Path

import keras
import keras_tuner

from zoo import data as zoo_data
from zoo import text
from zoo.constants import MODEL_FILE
from zoo.translator import SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR
from zoo.tuning import space
from zoo.tuning.space import ATTENTIONS, DIMENSIONS
from zoo.tuning.translation_hyper_model import OBJECTIVES, TranslationHyperModel

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


TUNERS = ("random", "hyperband", "bayesian")
OBJECTIVE_ALIASES = {
    "loss": "val_loss",
    "bleu": "val_bleu",
    "val_loss": "val_loss",
    "val_bleu": "val_bleu",
}
PROJECT = "search"


def objective_name(objective):
    """ "loss"/"val_loss" -> "val_loss", "bleu"/"val_bleu" -> "val_bleu"; else ValueError."""
    if objective not in OBJECTIVE_ALIASES:
        raise ValueError(f"Unknown objective {objective!r}; expected 'loss' or 'bleu'.")
    return OBJECTIVE_ALIASES[objective]


def make_tuner(kind, hypermodel, directory, *, max_trials, epochs=1, seed=0, verbose=1):
    """A keras-tuner tuner of `kind` ("random", "hyperband" or "bayesian") for `hypermodel`.

    Its project lives in `directory/search` and is reloaded when it exists (`overwrite=False`).
    The objective is `hypermodel.objective` ("val_loss" minimised, "val_bleu" maximised).
    Hyperband trains each configuration for up to `epochs` epochs (its `max_epochs`); all
    tuners stop after `max_trials` trials.
    """
    if kind not in TUNERS:
        raise ValueError(f"Unknown tuner {kind!r}; expected one of {TUNERS}.")
    if isinstance(max_trials, bool) or not isinstance(max_trials, int) or max_trials < 1:
        raise ValueError(f"max_trials must be an int >= 1, got {max_trials!r}.")
    objective = keras_tuner.Objective(hypermodel.objective, OBJECTIVES[hypermodel.objective])
    common = dict(
        hypermodel=hypermodel,
        objective=objective,
        directory=os.fspath(directory),
        project_name=PROJECT,
        overwrite=False,
        seed=seed,
        max_consecutive_failed_trials=1,
    )
    if kind == "random":
        tuner = keras_tuner.RandomSearch(max_trials=max_trials, **common)
    elif kind == "bayesian":
        tuner = keras_tuner.BayesianOptimization(
            max_trials=max_trials, num_initial_points=max(2, max_trials // 3), **common
        )
    else:
        if epochs < 2:
            raise ValueError(
                f"The hyperband tuner compares configurations after 1, 3, ... epochs; it needs "
                f"epochs >= 2, got {epochs}. (With --steps-per-trial, an epoch is "
                "steps_per_trial / epochs steps.)"
            )
        # As many Hyperband iterations as it takes to reach max_trials.
        tuner = keras_tuner.Hyperband(
            max_epochs=epochs, factor=3, hyperband_iterations=max_trials, **common
        )
        tuner.oracle.max_trials = max_trials
    tuner.oracle.verbose = verbose
    if importlib.util.find_spec("tensorboard") is None:
        # keras-tuner imports tensorboard for every trial under the TensorFlow backend, only
        # to patch TensorBoard callbacks; tune() passes none, so skip it without tensorboard.
        tuner._configure_tensorboard_dir = _no_tensorboard
    return tuner


def _no_tensorboard(callbacks, trial, execution=0):
    if any(type(c).__name__ == "TensorBoard" for c in callbacks):
        raise ValueError("A TensorBoard callback in a search needs the tensorboard package.")


def _check_settings(directory, settings):
    path = Path(directory) / "settings.json"
    if path.exists():
        previous = json.loads(path.read_text(encoding="utf-8"))
        differ = sorted(
            k for k in set(previous) | set(settings) if previous.get(k) != settings.get(k)
        )
        if differ:
            details = "; ".join(f"{k}: {previous.get(k)!r} -> {settings.get(k)!r}" for k in differ)
            raise ValueError(
                f"{directory} holds a search started with other settings ({details}). Resume "
                "with the same settings (only --max-trials may change) or use a new --directory."
            )
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=2, sort_keys=True), encoding="utf-8")


def _tokenizer(directory, sentences, vocab_size, seed):
    if (Path(directory) / "tokenizer.json").exists():
        return text.load_tokenizer(directory)
    tokenizer = text.train_tokenizer("sentencepiece", sentences, vocab_size=vocab_size, seed=seed)
    tokenizer.save(directory)
    return tokenizer


def export_best(tuner, hypermodel, out_dir):
    """Writes the best trial's model as `out_dir/model.keras` (uncompiled, loadable with
    `keras.models.load_model` after `import zoo`), its tokenizers and `hyperparameters.json`.

    Returns the path of `model.keras`.
    """
    trial = tuner.oracle.get_best_trials(1)[0]
    with warnings.catch_warnings():
        # The trial's checkpoint holds optimizer variables too; only the weights are needed.
        warnings.filterwarnings("ignore", message="Skipping variable loading for optimizer")
        trained = tuner.load_model(trial)
    values = hypermodel.values(trial.hyperparameters.copy())
    model = hypermodel.build_model(values, compile=False)
    model.set_weights(trained.get_weights())
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / MODEL_FILE
    model.save(path)
    source_tokenizer, target_tokenizer = hypermodel.tokenizers()
    if source_tokenizer is not None:
        source_tokenizer.save(out_dir / SOURCE_TOKENIZER_DIR)
        target_tokenizer.save(out_dir / TARGET_TOKENIZER_DIR)
    preset, overrides = space.model_arguments(values, hypermodel.size, hypermodel.max_source_length)
    optimizer, learning_rate = space.optimizer_arguments(values)
    info = {
        "trial_id": trial.trial_id,
        "objective": {"name": hypermodel.objective, "value": trial.score},
        "hyperparameters": values,
        "preset": preset,
        "size": hypermodel.size,
        "overrides": overrides,
        "optimizer": optimizer,
        "learning_rate": learning_rate,
        "source_vocab_size": hypermodel.source_vocab_size,
        "target_vocab_size": hypermodel.target_vocab_size,
    }
    (out_dir / "hyperparameters.json").write_text(
        json.dumps(info, indent=2, default=str), encoding="utf-8"
    )
    return path


def _languages(data, source_lang, target_lang):
    """The languages given, the missing ones from corpus `data`'s default pair."""
    try:
        return zoo_data.complete_languages(data, source_lang, target_lang)
    except ValueError as error:
        raise ValueError(
            f"tune(data={data!r}) needs source_lang and target_lang: {error}"
        ) from None


def tune(
    data=zoo_data.DEFAULT_CORPUS,
    source_lang=None,
    target_lang=None,
    *,
    tuner="random",
    objective="loss",
    max_trials=10,
    epochs=1,
    steps_per_trial=None,
    size="base",
    fixed=None,
    directory="runs/tune",
    train_limit=None,
    eval_limit=1000,
    seed=0,
    vocab_size=text.DEFAULT_VOCAB_SIZE,
    batch_size=zoo_data.DEFAULT_BATCH_SIZE,
    max_length=zoo_data.DEFAULT_MAX_LENGTH,
    verbose=1,
    export=True,
):
    """Runs (or resumes) a search and writes the table, the plot and the best model.

    Args:
        data, source_lang, target_lang: the corpus, as for `zoo.data.load_corpus`; a
            language left None is the corpus' default (`zoo.data.complete_languages`).
        tuner: "random", "hyperband" or "bayesian".
        objective: "loss" (validation loss, minimised) or "bleu" (validation BLEU of greedy
            translations, sacreBLEU 13a, maximised).
        max_trials: the number of trials (configurations) in all, counting resumed ones.
        epochs: epochs per trial (Hyperband: the most epochs a configuration gets).
        steps_per_trial: train each trial for this many batches in all (split evenly over
            `epochs`) instead of whole passes over the training data.
        size: "tiny", "base" or "paper": the preset sizes the space's bounds are built around.
        fixed: `{dimension: value}` held fixed (`space.parse_fixed` reads `--fix` strings).
        directory: where everything is written and resumed from.
        train_limit, eval_limit: use only the first pairs of the train and val splits.
        seed: seeds the tuner, the data order and the weights.
        vocab_size: SentencePiece vocabulary size of each language (4 reserved ids included).
        batch_size, max_length: training batches, and the longest training sentence kept.
        verbose: 0 silent, 1 progress bars and the tuner's trial summaries.
        export: write `best/` (model.keras, tokenizers, hyperparameters.json).

    Returns:
        dict: `rows` (the sorted table), `csv`, `plot`, `best` (path of best/model.keras or
        None), `tuner` (the keras-tuner object).
    """
    objective = objective_name(objective)
    fixed = space.check_fixed(fixed or {})
    _check_tune_arguments(tuner, size, epochs, steps_per_trial)
    directory, data = Path(directory), os.fspath(data)
    source_lang, target_lang = _languages(data, source_lang, target_lang)
    settings = {
        "data": data,
        "source_lang": source_lang,
        "target_lang": target_lang,
        "tuner": tuner,
        "objective": objective,
        "epochs": epochs,
        "steps_per_trial": steps_per_trial,
        "size": size,
        "fixed": fixed,
        "train_limit": train_limit,
        "eval_limit": eval_limit,
        "seed": seed,
        "vocab_size": vocab_size,
        "batch_size": batch_size,
        "max_length": max_length,
    }
    _check_settings(directory, settings)
    keras.utils.set_random_seed(seed)
    data = _TuningData(settings, directory)
    if steps_per_trial:
        steps_per_epoch = math.ceil(steps_per_trial / epochs)
    else:
        steps_per_epoch = data.steps_per_epoch
    hypermodel = TranslationHyperModel(
        data.vocab_sizes[0],
        data.vocab_sizes[1],
        size=size,
        fixed=fixed,
        objective=objective,
        max_source_length=max(max_length or 0, data.longest_val),
        source_tokenizer=data.tokenizer_dirs[0],
        target_tokenizer=data.tokenizer_dirs[1],
        bleu_sources=data.val.source,
        bleu_references=data.val.target,
        steps_per_epoch=steps_per_epoch,
        seed=seed,
        verbose=verbose,
    )
    search_tuner = make_tuner(
        tuner, hypermodel, directory, max_trials=max_trials, epochs=epochs, seed=seed,
        verbose=verbose,
    )  # fmt: skip
    search_tuner.search(
        data.make_train,
        validation_data=data.make_val,
        epochs=epochs,
        steps_per_epoch=steps_per_epoch if steps_per_trial else None,
    )
    return _write_results(search_tuner, hypermodel, directory, objective, export, verbose)


def _check_tune_arguments(tuner, size, epochs, steps_per_trial):
    if tuner not in TUNERS:
        raise ValueError(f"Unknown tuner {tuner!r}; expected one of {TUNERS}.")
    if size not in space.SIZES:
        raise ValueError(f"Unknown size {size!r}; expected one of {space.SIZES}.")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be an int >= 1, got {epochs!r}.")
    if steps_per_trial is not None and (
        not isinstance(steps_per_trial, int) or steps_per_trial < 1
    ):
        raise ValueError(f"steps_per_trial must be None or an int >= 1, got {steps_per_trial!r}.")


class _TuningData:
    """The search's corpus splits, tokenizers (trained once, in `directory/tokenizers`) and
    pipeline factories.

    keras-tuner's clear_session() before each trial frees the tokenizers' TF resources:
    every trial loads them again and makes its own pipelines (`make_train`, `make_val`).
    """

    def __init__(self, settings, directory):
        data, langs = settings["data"], (settings["source_lang"], settings["target_lang"])
        self.train = zoo_data.load_corpus(data, *langs, "train")
        self.val = zoo_data.load_corpus(data, *langs, "val")
        if settings["train_limit"]:
            self.train = self.train.take(settings["train_limit"])
        if settings["eval_limit"]:
            self.val = self.val.take(settings["eval_limit"])
        self.tokenizer_dirs = (
            directory / "tokenizers" / "source",
            directory / "tokenizers" / "target",
        )
        vocab, seed = settings["vocab_size"], settings["seed"]
        source = _tokenizer(self.tokenizer_dirs[0], self.train.source, vocab, seed)
        target = _tokenizer(self.tokenizer_dirs[1], self.train.target, vocab, seed)
        self.vocab_sizes = (source.vocab_size, target.vocab_size)
        self.batch_size, self.max_length = settings["batch_size"], settings["max_length"]
        self.seed = seed
        self.steps_per_epoch = zoo_data.steps_per_epoch(self._train_dataset(source, target))
        self.longest_val = int(zoo_data.token_lengths(source, self.val.source).max())

    def _train_dataset(self, source, target):
        return self.train.dataset(
            source, target, batch_size=self.batch_size, max_length=self.max_length, seed=self.seed
        )

    def make_train(self):
        return self._train_dataset(*(text.load_tokenizer(d) for d in self.tokenizer_dirs))

    def make_val(self):
        source, target = (text.load_tokenizer(d) for d in self.tokenizer_dirs)
        return self.val.dataset(
            source, target, batch_size=self.batch_size, max_length=None, shuffle=False
        )


def _write_results(search_tuner, hypermodel, directory, objective, export, verbose):
    """The trials table (CSV), the plot by attention variant and `best/`; returns tune's dict."""
    rows = trial_table(search_tuner)
    csv_path = directory / "trials.csv"
    write_csv(rows, csv_path)
    plot_path = plot_by_attention(
        rows,
        directory / "objective_by_attention.png",
        objective,
        OBJECTIVES[objective],
    )
    best = export_best(search_tuner, hypermodel, directory / "best") if export and rows else None
    if verbose:
        print(format_table(rows))
        print(f"Trials: {csv_path}  plot: {plot_path}" + (f"  best model: {best}" if best else ""))
    return {"rows": rows, "csv": csv_path, "plot": plot_path, "best": best, "tuner": search_tuner}
