"""Early stopping: the validation metric a run is judged by, its best value and patience.

`train(..., validation_metric="bleu", early_stopping=PATIENCE)` validates after each epoch,
keeps the model of the best value of the metric in `model.keras` and stops once PATIENCE
epochs in a row have not improved it (Prechelt 1998, "Early stopping - but when?"). The
record lives in the run's state, so a checkpoint keeps it and a resumed run goes on
counting (a run that stopped stays stopped: `--no-resume` starts over).

    record = new_record()
    for epoch, value in enumerate(values, start=1):
        improved = update_record(record, value, "bleu", epoch=epoch, patience=2)
        if record["stopped"]:
            break
"""

import math

from zoo.checks import check_int

VALIDATION_METRICS = {"loss": "lower", "bleu": "higher"}
"""The metrics `train` can judge a run by, and which way is better: the validation split's
cross-entropy per target token, or the corpus BLEU of its greedy translations."""


def check_validation_metric(value):
    """`value` if it is a key of VALIDATION_METRICS, else a ValueError naming it."""
    if value not in VALIDATION_METRICS:
        raise ValueError(
            f"validation_metric must be one of {tuple(VALIDATION_METRICS)}; received {value!r}."
        )
    return value


def check_patience(value):
    """`value` (epochs without improvement before stopping) as an int >= 1, or None (no
    early stopping); else a ValueError."""
    return check_int(None, "early_stopping", value, allow_none=True)


def new_record():
    """The record of a run not yet validated (JSON, kept in checkpoints)."""
    return {
        "best": None,
        "best_epoch": None,  # None: the best came from a validation between epoch ends
        "best_step": None,
        "epochs_without_improvement": 0,
        "stopped": None,  # the epoch after which the run stopped
    }


def improves(value, best, metric):
    """Whether `value` of `metric` is better than `best` (None: nothing yet); a value that
    is not finite never is."""
    if value is None or not math.isfinite(value):
        return False
    if best is None:
        return True
    return value < best if VALIDATION_METRICS[metric] == "lower" else value > best


def update_record(record, value, metric, *, epoch=None, patience=None, step=None):
    """Records a validation `value` of `metric`; returns True when it is the best so far.

    `epoch` (1-based) is given at an epoch end: an epoch that does not improve the metric
    counts towards `patience`, and the record is marked `stopped` (the epoch) when the count
    reaches it. A validation between epoch ends (a run stopped by a step or time limit)
    passes `epoch=None`: it may be the best, but does not count. `step` (the optimizer
    step validated) is recorded with the best value."""
    improved = improves(value, record["best"], metric)
    if improved:
        record.update(best=float(value), best_epoch=epoch, best_step=step)
    if epoch is None:
        return improved
    record["epochs_without_improvement"] = (
        0 if improved else record["epochs_without_improvement"] + 1
    )
    if patience is not None and record["epochs_without_improvement"] >= patience:
        record["stopped"] = epoch
    return improved


def stopping_epoch(values, metric, patience):
    """The epoch (1-based) after which a run whose validations give `values`, one per epoch,
    stops; None when it trains them all."""
    record = new_record()
    for epoch, value in enumerate(values, start=1):
        update_record(record, value, metric, epoch=epoch, patience=patience)
        if record["stopped"]:
            return epoch
    return None
