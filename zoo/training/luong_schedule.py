"""Luong et al. (2015) learning-rate schedule, in optimizer steps."""

import math

import keras
from keras import ops

from zoo.checks import check_int


@keras.saving.register_keras_serializable(package="zoo")
class LuongSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """Constant rate, then halved every epoch: Luong et al. 2015, section 4.1.

    "SGD ... learning rate 1 ... after 5 epochs, we begin to halve the learning rate every
    epoch" (after 8 epochs for the models trained with dropout). With 0-based
    `epoch = step // steps_per_epoch`:

        lr(step) = initial_learning_rate * decay_factor ** max(0, epoch - decay_after_epochs + 1)

    so epochs 1..5 (0-based 0..4) use 1.0, the 6th uses 0.5, the 7th 0.25, ...

    `decay_after_epochs` is held in a variable, so `set_decay_after_epochs` moves the start
    of the halving while training, also inside a compiled train step (`TimeLimit` does it
    when a time limit would stop training before the halving).

    Args:
        steps_per_epoch: optimizer steps in one epoch (> 0).
        initial_learning_rate: rate before decay starts (1.0 in the paper).
        decay_after_epochs: number of full-rate epochs (5; 8 with dropout).
        decay_factor: multiplier applied once per later epoch (0.5).

    Example:
        >>> schedule = LuongSchedule(steps_per_epoch=100)
        >>> float(schedule(499)), float(schedule(500)), float(schedule(600))
        (1.0, 0.5, 0.25)
    """

    def __init__(
        self,
        steps_per_epoch,
        initial_learning_rate=1.0,
        decay_after_epochs=5,
        decay_factor=0.5,
    ):
        steps_per_epoch = check_int("LuongSchedule", "steps_per_epoch", steps_per_epoch)
        decay_after_epochs = check_int(
            "LuongSchedule", "decay_after_epochs", decay_after_epochs, minimum=0
        )
        if not (math.isfinite(float(initial_learning_rate)) and initial_learning_rate > 0):
            raise ValueError(
                "initial_learning_rate must be a finite number > 0; received "
                f"{initial_learning_rate!r}."
            )
        if not 0.0 < float(decay_factor) <= 1.0:
            raise ValueError(f"decay_factor must be in (0, 1]; received {decay_factor!r}.")
        self.steps_per_epoch = int(steps_per_epoch)
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_factor = float(decay_factor)
        self._decay_start = keras.Variable(
            float(decay_after_epochs),
            dtype="float32",
            trainable=False,
            autocast=False,
            name="decay_after_epochs",
        )

    @property
    def decay_after_epochs(self):
        """The number of full-rate epochs (read from the variable the schedule computes with)."""
        return int(self._decay_start.numpy())

    def set_decay_after_epochs(self, decay_after_epochs):
        """Starts the halving after `decay_after_epochs` full-rate epochs (an int >= 0)."""
        decay_after_epochs = check_int(
            "LuongSchedule", "decay_after_epochs", decay_after_epochs, minimum=0
        )
        self._decay_start.assign(float(decay_after_epochs))

    def __call__(self, step):
        step = ops.cast(step, "int64")
        epoch = ops.cast(ops.floor_divide(step, self.steps_per_epoch), "float32")
        exponent = ops.maximum(epoch - self._decay_start + 1.0, 0.0)
        return self.initial_learning_rate * ops.power(
            ops.cast(self.decay_factor, "float32"), exponent
        )

    def get_config(self):
        return {
            "steps_per_epoch": self.steps_per_epoch,
            "initial_learning_rate": self.initial_learning_rate,
            "decay_after_epochs": self.decay_after_epochs,
            "decay_factor": self.decay_factor,
        }
