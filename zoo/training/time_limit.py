"""`TimeLimit`: stop training after a wall-clock budget (for benchmarks and quick runs)."""

import time

import keras


class TimeLimit(keras.callbacks.Callback):
    """Stops training once `minutes` of wall-clock time have passed since training began.

    The step in flight finishes; `zoo.training.train` then validates, keeps the best model
    and writes a checkpoint, so a later run (with `resume`) can continue. The budget counts
    from `on_train_begin` of this run, tracing and validation included.

    Args:
        minutes: the budget, a positive number.

    Example:
        training.train(model, data, val, out_dir=out, callbacks=[TimeLimit(60)])
    """

    def __init__(self, minutes):
        super().__init__()
        if not isinstance(minutes, int | float) or isinstance(minutes, bool) or minutes <= 0:
            raise ValueError(f"TimeLimit minutes must be a positive number; received {minutes!r}.")
        self.minutes = minutes
        self.started = None

    def on_train_begin(self, logs=None):
        self.started = time.monotonic()

    def on_train_batch_end(self, batch, logs=None):
        if time.monotonic() - self.started >= 60.0 * self.minutes:
            self.model.stop_training = True
