"""What stops or watches a training run: Ctrl-C and SIGTERM (a checkpoint first), early
stopping, validation BLEU and the time limit.

Ending a training run on SIGINT (Ctrl-C) or SIGTERM (a preempted machine) after the step
in flight, with a checkpoint of it: `TrainingInterrupted`.

Early stopping: the validation metric a run is judged by, its best value and patience.

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

`ValidationBleu`: the corpus BLEU of a model's greedy translations of a validation split,
the score `train(..., validation_metric="bleu")` judges a run by.

`TimeLimit`: stop training after a wall-clock budget, halving the learning rate before it.
"""

import json
import math
import os
import signal
import threading
import time

import keras

from zoo.checks import check_int
from zoo.json_files import write_json
from zoo.search.defaults import BATCH_SIZE
from zoo.training.optimizers import LuongSchedule


class TrainingInterrupted(KeyboardInterrupt):
    """Raised by `train` after SIGINT (Ctrl-C) or SIGTERM (a preempted machine): the step in
    flight finished and a checkpoint of it was written, so a re-run with `resume` loses
    nothing. `exit_code` is the shell's 128 + signal (130, 143). A `KeyboardInterrupt`, so
    that code catching `Exception` (keras-tuner's trial loop) lets it through."""

    def __init__(self, signum, step, checkpoint_dir):
        self.signum, self.step, self.checkpoint_dir = signum, step, checkpoint_dir
        self.exit_code = 128 + int(signum)
        name = signal.Signals(signum).name
        super().__init__(
            f"{name} at step {step}: checkpoint written in {checkpoint_dir}; run the same "
            "command again to resume from it."
        )


class DeferredSignals:
    """SIGINT and SIGTERM, while training, end the run after the current step (a second
    Ctrl-C stops at once). Only in the main thread, where Python runs signal handlers.

    A context manager: inside it, `received` is the first signal that arrived (or None)."""

    def __init__(self):
        self.received = None
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame):
        if signum == signal.SIGINT and self.received == signal.SIGINT:
            raise KeyboardInterrupt
        self.received = signum

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            if handler is not None:  # None: a handler installed from C, not restorable
                signal.signal(signum, handler)
        return False


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


class ValidationBleu:
    """`scorer(model) -> float`: sacreBLEU's corpus BLEU (`zoo.evaluation.corpus_scores`)
    of the greedy translations (`zoo.Translator` with beam size 1, the other search settings
    at their defaults) of `sources` against `references`.

    The translator is made on the first call and kept while the same model is scored: its
    traced search reads the model's current weights, so each epoch's score costs the
    translation alone.

    Example:
        bleu = ValidationBleu(source_tokenizer, target_tokenizer, val.source, val.target)
        train(model, train_ds, val_ds, out_dir=out, validation_metric="bleu",
              validation_bleu=bleu, early_stopping=3)

    Args:
        source_tokenizer, target_tokenizer: the model's tokenizers (`zoo.text`).
        sources, references: the validation split's sentences (lists of str, one
            reference per source).
        limit: score the first `limit` sentences only (None: all of them).
        batch_size: sentences translated per batch.
    """

    def __init__(
        self, source_tokenizer, target_tokenizer, sources, references, *, limit=None,
        batch_size=BATCH_SIZE,
    ):  # fmt: skip
        sources, references = list(sources), list(references)
        if len(sources) != len(references):
            raise ValueError(
                f"ValidationBleu: sources and references must be parallel; received "
                f"{len(sources)} sources and {len(references)} references."
            )
        limit = check_int("ValidationBleu", "limit", limit, allow_none=True)
        self.sources, self.references = sources[:limit], references[:limit]
        if not self.sources:
            raise ValueError("ValidationBleu: there is no validation sentence to translate.")
        self.tokenizers = (source_tokenizer, target_tokenizer)
        self.batch_size = check_int("ValidationBleu", "batch_size", batch_size)
        self.translator = None

    def __len__(self):
        return len(self.sources)

    def __call__(self, model):
        from zoo.evaluation.scores import corpus_scores  # noqa: PLC0415 (sacreBLEU, on use)
        from zoo.translator import Translator  # noqa: PLC0415 (only runs that score BLEU)

        if self.translator is None or self.translator.model is not model:
            self.translator = Translator(
                model, *self.tokenizers, beam_size=1, batch_size=self.batch_size
            )
        hypotheses = self.translator.translate(self.sources)
        return float(corpus_scores(hypotheses, self.references)["bleu"])


TIME_PLAN_FILE = "time_plan.json"
"""The file, in a run's `checkpoints/` folder, where `train` keeps `TimeLimit`'s plan."""


class TimeLimit(keras.callbacks.Callback):
    """Stops training once `minutes` of wall-clock time have passed since training began.

    The step in flight finishes; `zoo.training.train` then validates, keeps the best model
    and writes a checkpoint, so a later run (with `resume`) can continue. The budget counts
    from `on_train_begin` of this run, tracing and validation included.

    With `schedule` (a `LuongSchedule`), a limit that would stop training before the
    schedule's halving epochs does not leave the model at the full learning rate: at the
    second epoch end of this run, the callback times the whole epoch between its two epoch
    ends (so tracing is left out, and the epoch's validation is counted; a fresh run plans
    after epoch 2), estimates how many epochs fit in the budget and, if fewer than `epochs`
    do, shrinks the
    schedule to them (`plan_halving`): the full-rate epochs keep their share and the halved
    ones end at the limit (a budget-aware schedule, as in Li et al. 2020, "Budgeted
    Training"). It only ever moves the halving earlier. The plan is made once and written to
    `plan_path` (JSON). To resume such a run, `restore_time_plan` reads the file and applies
    the plan to the schedule; pass what it returns as `plan`, and the resumed run keeps its
    schedule instead of planning again.

    Args:
        minutes: the budget, a positive number.
        schedule: optional `LuongSchedule` of the optimizer to fit to the budget.
        epochs: the epochs training would run without the limit (needed with `schedule`).
        plan_path: optional JSON file for the plan (needs `schedule`).
        plan: the plan of an earlier run, as `restore_time_plan` returns it (None: plan
            anew). With one, the callback only keeps the time; it is accepted without a
            `schedule` (a worker that follows the chief's plan but does not plan).
        verbose: 1 prints the plan when it changes the schedule.

    Example:
        training.train(model, data, val, out_dir=out, callbacks=[TimeLimit(60)])

        schedule = training.halving_schedule(optimizer)
        plan = restore_time_plan(path, schedule) if resuming else None
        limit = TimeLimit(60, schedule=schedule, epochs=12, plan_path=path, plan=plan)
    """

    def __init__(self, minutes, schedule=None, epochs=None, plan_path=None, plan=None, verbose=1):
        super().__init__()
        if not isinstance(minutes, int | float) or isinstance(minutes, bool) or minutes <= 0:
            raise ValueError(f"TimeLimit minutes must be a positive number; received {minutes!r}.")
        if schedule is not None and not isinstance(schedule, LuongSchedule):
            raise ValueError(
                f"TimeLimit schedule must be a LuongSchedule (or None); received {schedule!r}."
            )
        if schedule is not None:
            epochs = check_int("TimeLimit", "epochs", epochs)
        elif plan_path is not None:
            raise ValueError("TimeLimit plan_path needs a schedule to plan; received none.")
        if plan is not None and not isinstance(plan, dict):
            raise ValueError(
                f"TimeLimit plan must be a dict from restore_time_plan (or None); received "
                f"{plan!r}."
            )
        self.minutes = minutes
        self.schedule = schedule
        self.epochs = epochs
        self.plan_path = plan_path
        self.verbose = verbose
        self.plan = plan  # made at the second epoch end, or restored (then never rewritten)
        self.started = None
        self.configured = None  # the schedule's decay_after_epochs when training began
        self.last_step = None
        self.epoch_end = None  # (step, time) at this run's last epoch end

    def on_train_begin(self, logs=None):
        self.started = time.monotonic()
        self.last_step = self.epoch_end = None
        if self.schedule is not None:
            self.configured = self.schedule.decay_after_epochs

    def on_train_batch_end(self, batch, logs=None):
        if self.schedule is not None:
            self.last_step = self._step(logs)
        if time.monotonic() - self.started >= 60.0 * self.minutes:
            self.model.stop_training = True

    def _step(self, logs):
        """Optimizer steps done so far: zoo's trainer logs them; under `model.fit`, the
        optimizer's counter."""
        step = (logs or {}).get("step")
        return int(step) if step is not None else int(self.model.optimizer.iterations.numpy())

    def on_epoch_end(self, epoch, logs=None):
        steps_per_epoch = (self.params or {}).get("steps")
        if self.schedule is None or self.plan is not None or not steps_per_epoch:
            return
        if self.last_step is None:
            return
        now = time.monotonic()
        previous, self.epoch_end = self.epoch_end, (self.last_step, now)
        if previous is None:
            return  # the run's first epoch end: its epoch held tracing, or was partial
        seconds_per_step = (now - previous[1]) / (self.last_step - previous[0])
        remaining = max(60.0 * self.minutes - (now - self.started), 0.0) / seconds_per_step
        fit = (self.last_step + remaining) / steps_per_epoch
        self.plan = plan_halving(fit, self.epochs, self.configured, epochs_done=epoch + 1)
        self.plan.update(minutes=self.minutes, seconds_per_step=round(seconds_per_step, 4))
        if self.plan["decay_after_epochs"] != self.configured:
            self.schedule.set_decay_after_epochs(self.plan["decay_after_epochs"])
            if self.verbose:
                print(
                    f"Time limit: {self.minutes:g} minutes fit about {fit:.1f} of "
                    f"{self.epochs} epochs; halving the learning rate after epoch "
                    f"{self.plan['decay_after_epochs']} instead of {self.configured}"
                )
        if self.plan_path:
            write_json(self.plan_path, self.plan, indent=1)


def plan_halving(epochs_fit, epochs, decay_after_epochs, epochs_done):
    """The halving plan for a run that has time for `epochs_fit` (fractional) epochs.

    Shrinks the schedule of `epochs` epochs to `epochs_fit`: the full-rate epochs keep their
    share, never fewer than the `epochs_done` already trained and never more than the
    schedule's own:

        decay_after = min(decay_after_epochs,
                          max(epochs_done, floor(decay_after_epochs * epochs_fit / epochs + 0.5)))

    when `epochs_fit < epochs` (else unchanged). Returns a dict: epochs_fit, epochs,
    configured_decay_after_epochs, decay_after_epochs.
    """
    decay_after = decay_after_epochs
    if epochs_fit < epochs and decay_after_epochs < epochs:
        shrunk = math.floor(decay_after_epochs * epochs_fit / epochs + 0.5)
        decay_after = min(decay_after_epochs, max(epochs_done, shrunk))
    return {
        "epochs_fit": round(float(epochs_fit), 2),
        "epochs": int(epochs),
        "configured_decay_after_epochs": int(decay_after_epochs),
        "decay_after_epochs": int(decay_after),
    }


def read_time_plan(path):
    """The plan `TimeLimit` wrote to `path`; a ValueError names a damaged file."""
    try:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
        check_int("time plan", "decay_after_epochs", plan["decay_after_epochs"], minimum=0)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{path} is not a time plan written by TimeLimit ({error}); delete it to plan again."
        ) from None
    return plan


def restore_time_plan(path, schedule):
    """Applies the plan in `path` (if any) to `schedule`; returns the plan or None."""
    if schedule is None or not path or not os.path.exists(path):
        return None
    plan = read_time_plan(path)
    schedule.set_decay_after_epochs(plan["decay_after_epochs"])
    return plan
