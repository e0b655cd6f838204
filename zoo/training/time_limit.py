"""`TimeLimit`: stop training after a wall-clock budget, halving the learning rate before it."""

import json
import math
import os
import time

import keras

from zoo.checks import check_int
from zoo.json_files import write_json
from zoo.training.luong_schedule import LuongSchedule

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
