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
"""

import os

import keras

from zoo import evaluation, training
from zoo.constants import CHECKPOINT_DIR
from zoo.translator import MODEL_FILE, Translator

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
