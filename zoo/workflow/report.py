"""Which model a recipe run delivers: its best checkpoint, or the mean of its last ones.

The trainer keeps the best model by the run's validation metric (`--validation-metric`:
the validation loss, or the BLEU of greedy translations of the validation split) in
`model.keras`. Averaging the weights of the run's last N checkpoints (Junczys-Dowmunt et
al. 2016; Vaswani et al. 2017) often translates better still (docs/decoding.md), but not
always: the last checkpoints may lie past the best epoch.
So the run scores both on the **validation** split with the search it will be judged by
(beam search at the run's settings), and delivers the better one: `model.averaged.keras`
is named in translator.json's "model_file", which `Translator.from_directory` and
`python -m zoo` read. Nothing here looks at the test split.

The end of a recipe: score the best model on the test split and write its files.

`evaluate_and_report` translates the test split with greedy and beam search, scores both
with sacreBLEU (BLEU, chrF and their signatures), measures perplexity, and writes the
translations, `bleu_by_length.{png,tsv,md}` (Bahdanau et al. 2014, figure 2),
`attention_*.png` (figure 3) and `translator.json`, then exports `serving/` through the
Translator. It returns the figures; `zoo.workflow.run` writes them to `metrics.json`.
"""

import os
import time

import keras
import numpy as np

from zoo import evaluation, training
from zoo.backend import backend_name, on_tensorflow
from zoo.constants import CHECKPOINT_DIR
from zoo.data import make_dataset
from zoo.translator import MODEL_FILE, SERVING_DIR, Translator
from zoo.translator.output_folder import EXPORT_COMMAND

AVERAGED_FILE = "model.averaged.keras"


def select_model(
    best_path, out, val, tokenizers, *, average_last, translator_settings, say, progress=False,
    best_by="loss",
):  # fmt: skip
    """Chooses between `best_path` (the trainer's model.keras) and the mean of the newest
    `average_last` checkpoints in `out/checkpoints`, by validation BLEU.

    Args:
        best_path: the trainer's best model file.
        out: the run's output folder (the averaged model is written there).
        val: the validation `Corpus` (its `source` and `target` lists).
        tokenizers: (source, target) tokenizers.
        average_last: how many checkpoints to average; below 2, no averaging.
        translator_settings: `Translator` keyword arguments (beam_size, length_penalty, ...).
        say: print for the chief.
        progress: show progress bars while translating the validation split.
        best_by: the validation metric `best_path` is the best model by ("loss" or "bleu":
            `zoo.training.VALIDATION_METRICS`), for the run's log.

    Returns:
        (translator, selection): the `Translator` of the chosen model, and a dict with
        "model_file" (the file name inside `out`), "checkpoints" (the averaged files) and
        "val_bleu" ({file name: BLEU}; empty when nothing was compared).
    """
    best = keras.models.load_model(best_path)
    chosen = Translator(best, *tokenizers, **translator_settings)
    selection = {"model_file": MODEL_FILE, "checkpoints": [], "val_bleu": {}}
    if average_last < 2 or len(val) == 0:
        return chosen, selection
    averaged = keras.models.load_model(best_path)
    try:
        used = training.average_checkpoints(
            averaged, os.path.join(out, CHECKPOINT_DIR), average_last
        )
    except ValueError as error:  # no intact checkpoint: keep the best one
        say(f"Checkpoint averaging skipped: {error}")
        return chosen, selection
    if len(used) < 2:
        say("Checkpoint averaging skipped: fewer than 2 intact checkpoints.")
        return chosen, selection
    averaged.save(os.path.join(out, AVERAGED_FILE))
    candidates = {
        MODEL_FILE: chosen,
        AVERAGED_FILE: Translator(averaged, *tokenizers, **translator_settings),
    }
    beam = translator_settings.get("beam_size", 1)
    say(
        f"Choosing the model on {val.name} {val.split} (beam {beam}): the best checkpoint by "
        f"validation {best_by}, or the mean of the last {len(used)} checkpoints"
    )
    for name, translator in candidates.items():
        hypotheses = translator.translate(val.source, progress=progress)
        selection["val_bleu"][name] = evaluation.corpus_scores(hypotheses, val.target)["bleu"]
        say(f"  {name}: validation BLEU {selection['val_bleu'][name]:.2f}")
    winner = max(candidates, key=lambda name: (selection["val_bleu"][name], name == MODEL_FILE))
    say(f"  keeping {winner}")
    selection["model_file"] = winner
    selection["checkpoints"] = [os.path.basename(p) for p in used]
    return candidates[winner], selection


# The files a run writes in its output folder, besides the translator's own (model,
# tokenizers, translator.json, serving/): the names that --help, the run's last line and
# the scripts reading a run (bench/paper_table.py) take from here.
METRICS_FILE = "metrics.json"  # written by zoo.workflow.run from what evaluate_and_report returns
TRANSLATIONS_FILE = "translations.{split}.{search}.txt"  # search: "greedy" or "beam"
BLEU_BY_LENGTH = "bleu_by_length.{extension}"  # png, tsv, md
ATTENTION_PLOT = "attention_{index}.png"
VOCABULARY_FILE = "vocab.{lang}.txt"  # written by zoo.workflow.data: one piece a line


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line.replace("\n", " ") + "\n")


def write_bleu_by_length(out, tables):
    """`bleu_by_length.tsv` and `.md` with one BLEU column per system in `tables`; the
    Markdown table brackets the BLEU of buckets too small to trust (`evaluation.format_table`).
    Returns the two paths, keyed as the report's `files`."""
    labels = list(tables)
    first = tables[labels[0]]
    tsv = ["\t".join(["source_length", "sentences", *(f"bleu_{label}" for label in labels)])]
    for i, row in enumerate(first):
        values = [tables[label][i]["bleu"] for label in labels]
        tsv.append(
            "\t".join(
                [
                    row["bin"],
                    str(row["sentences"]),
                    *("" if v is None else f"{v:.2f}" for v in values),
                ]
            )
        )
    paths = {ext: os.path.join(out, BLEU_BY_LENGTH.format(extension=ext)) for ext in ("tsv", "md")}
    write_lines(paths["tsv"], tsv)
    write_lines(paths["md"], evaluation.format_table(tables).splitlines())
    return {f"bleu_by_length_{ext}": path for ext, path in paths.items()}


def _timed_translate(translator, sentences, beam_size, say):
    start = time.perf_counter()
    hypotheses = translator.translate(sentences, beam_size=beam_size, progress=bool(say.enabled))
    seconds = time.perf_counter() - start
    return list(hypotheses), seconds


def _attention_candidates(sources, count, longest=25):
    """Indices of up to `count` test sentences short enough for a readable heatmap."""
    chosen = [i for i, s in enumerate(sources) if 3 <= len(s.split()) <= longest]
    return chosen[:count]


def plot_attention_examples(out, translator, sources, count, beam_size, say):
    """Draws `attention_<i>.png` for up to `count` test sentences; returns the paths."""
    if count <= 0:
        return []
    indices = _attention_candidates(sources, count)
    if not indices:
        return []
    translations = translator.translate_with_attention(
        [sources[i] for i in indices], beam_size=beam_size
    )
    paths = []
    for index, item in zip(indices, translations, strict=True):
        weights = np.asarray(item.weights, dtype=np.float32)
        if weights.size == 0 or not np.any(weights):
            say("  (no attention weights: this model has no attention; no heatmaps drawn)")
            return []
        path = os.path.join(out, ATTENTION_PLOT.format(index=index))
        evaluation.plot_attention(
            list(item.source_tokens),
            list(item.target_tokens),
            weights,
            path,
            title=f"test sentence {index}",
        )
        paths.append(path)
    return paths


def evaluate_and_report(
    model,
    translator,
    test,
    source_tokenizer,
    target_tokenizer,
    *,
    out,
    beam_size,
    length_penalty,
    batch_size,
    attention_plots,
    export,
    say,
    metadata=None,
):
    """Scores `model` on the `test` Corpus and writes the report files into `out`.

    `metadata` (e.g. data and languages) goes into translator.json beside the search
    settings, where `python -m zoo evaluate` reads its defaults.

    Returns a dict: `test` (loss, ppl, accuracy), `greedy` and `beam` (corpus_scores plus
    time_s and sentences_per_s), `bleu_by_length` (rows per system), `files`.
    """
    say(f"Evaluating on {test.name} {test.split} ({len(test)} sentences)")
    test_ds = make_dataset(
        test.source,
        test.target,
        source_tokenizer,
        target_tokenizer,
        batch_size=batch_size,
        max_length=None,
        shuffle=False,
        batching="plain",
    )
    test_metrics = training.evaluate(model, test_ds, verbose=int(say.enabled))
    say(
        f"  test perplexity {test_metrics['ppl']:.2f}, token accuracy {test_metrics['accuracy']:.3f}"
    )

    results = {}
    systems = {"greedy": 1, "beam": beam_size}
    for label, k in systems.items():
        say(f"  translating with {'greedy search' if k == 1 else f'beam search (K={k})'}")
        hypotheses, seconds = _timed_translate(translator, test.source, k, say)
        scores = evaluation.corpus_scores(hypotheses, test.target)
        scores.update(
            beam_size=k,
            length_penalty=length_penalty if k > 1 else 0.0,
            time_s=seconds,
            sentences_per_s=len(hypotheses) / max(seconds, 1e-9),
        )
        results[label] = (scores, hypotheses)
        path = os.path.join(out, TRANSLATIONS_FILE.format(split=test.split, search=label))
        write_lines(path, hypotheses)
        say(f"  {label}: BLEU {scores['bleu']:.2f}  chrF {scores['chrf']:.2f}  ({seconds:.1f} s)")

    tables = {
        "greedy": evaluation.bleu_by_length(test.source, results["greedy"][1], test.target),
        f"beam{beam_size}": evaluation.bleu_by_length(test.source, results["beam"][1], test.target),
    }
    files = {
        "bleu_by_length_png": evaluation.plot_bleu_by_length(
            tables,
            os.path.join(out, BLEU_BY_LENGTH.format(extension="png")),
            title=f"BLEU by source length ({test.name} {test.split})",
        )
    }
    files.update(write_bleu_by_length(out, tables))
    files["attention_png"] = plot_attention_examples(
        out, translator, test.source, attention_plots, beam_size, say
    )
    files["translator_json"] = translator.write_config(out, metadata)
    if export and not on_tensorflow():  # a SavedModel is TensorFlow's
        say(
            f"  serving/ not written: the SavedModel export needs Keras on TensorFlow, this "
            f"run is on {backend_name()}; export it there: " + EXPORT_COMMAND.replace("DIR", out)
        )
    elif export:
        serving = os.path.join(out, SERVING_DIR)
        say(f"  exporting the translator (beam {beam_size}) to {serving}")
        translator.export(serving, n_best=beam_size if beam_size > 1 else None, sampling={})
        files["serving"] = serving
    return {
        "test": test_metrics,
        "greedy": results["greedy"][0],
        "beam": results["beam"][0],
        "bleu_by_length": tables,
        "files": files,
    }
