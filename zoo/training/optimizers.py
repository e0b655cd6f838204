"""The optimizers of the papers and the recipes, and their learning-rate schedule.

`LuongSchedule`: Luong et al. (2015) learning-rate schedule, in optimizer steps.

The papers' optimisers, chosen by name, from one table: `OPTIMIZER_SETTINGS`.

- "bahdanau": the Adadelta of Bahdanau et al. 2014, appendix A.2.2;
- "luong": the SGD of Luong et al. 2015, section 4.1, with its halving rule;
- "adam": Adam, for quick runs (not the papers' choice).

The table holds their numbers (learning rate, rho and epsilon, gradient-norm clipping, the
halving rule, the loss normalisation they are meant for, the source) and nothing else does:
`make_optimizer` builds from it, `default_loss_normalization` and `luong_decay_after` read
it, and `describe_optimizer` renders the one-line descriptions of help texts and run logs
(`zoo.training.settings.OPTIMIZER_DESCRIPTIONS`). `decay_after_epochs=N` gives any of them
Luong's halving rule: the learning rate is halved every epoch after the first N (for "luong"
it replaces the paper's own). Uniform initialisation in [-0.1, 0.1] belongs to the model
presets, not here.

All three are the optimizers Keras ships (`keras.optimizers.Adadelta`, `SGD`, `Adam`): a
hand-fused update measured no faster over the whole training step (bench/RESULTS.md,
Training speed), so Keras's own serve.

Create the optimizer inside `strategy.scope()` when training with a distribution strategy.
"""

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


OPTIMIZER_SETTINGS = {
    "bahdanau": {
        "keras_class": "Adadelta",
        "learning_rate": 1.0,
        "arguments": {"rho": 0.95, "epsilon": 1e-6},
        "clipnorm": 1.0,
        "decay_after": None,
        "decay_after_with_dropout": None,
        "loss_normalization": "sentences",
        "source": "Bahdanau et al. 2014, appendix A.2.2",
    },
    "luong": {
        "keras_class": "SGD",
        "learning_rate": 1.0,
        "arguments": {},
        "clipnorm": 5.0,
        "decay_after": 5,
        "decay_after_with_dropout": 8,
        "loss_normalization": "sentences",
        "source": "Luong et al. 2015, section 4.1",
    },
    "adam": {
        "keras_class": "Adam",
        "learning_rate": 1e-3,
        "arguments": {},
        "clipnorm": 1.0,
        "decay_after": None,
        "decay_after_with_dropout": None,
        "loss_normalization": "tokens",
        "source": None,
    },
}
"""Each optimizer name's settings: the Keras optimizer (`keras_class`), its initial
`learning_rate` and other `arguments`, the global gradient-norm threshold (`clipnorm`), its
own halving rule (`decay_after` full-rate epochs, `decay_after_with_dropout` for a model
with dropout; None: a constant rate), the loss normalisation it is meant for
(`losses.loss_denominator`: the papers' SGD and Adadelta on a sentence's summed loss) and
the paper it comes from (`source`; None: not the papers' choice)."""

OPTIMIZERS = tuple(OPTIMIZER_SETTINGS)

# How `describe_optimizer` names the Keras arguments of the table.
_ARGUMENT_NAMES = {"rho": "rho", "epsilon": "eps"}


def _settings(name):
    if name not in OPTIMIZER_SETTINGS:
        raise ValueError(f"Unknown optimizer {name!r}; expected one of {OPTIMIZERS}.")
    return OPTIMIZER_SETTINGS[name]


def default_loss_normalization(name):
    """ "tokens" or "sentences": the loss normalisation optimizer `name` is meant for."""
    return _settings(name)["loss_normalization"]


def own_decay_after(name, dropout=0.0):
    """The full-rate epochs of optimizer `name`'s own halving rule for a model with
    `dropout`, or None when its rate stays constant."""
    settings = _settings(name)
    if dropout and dropout > 0 and settings["decay_after_with_dropout"] is not None:
        return settings["decay_after_with_dropout"]
    return settings["decay_after"]


def luong_decay_after(dropout):
    """Epochs before Luong's SGD starts halving, later when the model has dropout (§4.1)."""
    return own_decay_after("luong", dropout)


def format_number(value):
    """A setting as the descriptions write it: 1, 0.95, 1e-3, 2.5e-4."""
    value = float(value)
    if value and abs(value) < 0.01:
        mantissa, exponent = f"{value:e}".split("e")
        return f"{float(mantissa):g}e{int(exponent)}"
    return f"{value:g}"


def describe_optimizer(name):
    """One line on optimizer `name`, rendered from `OPTIMIZER_SETTINGS`, e.g. "Adam (learning
    rate 1e-3), gradient norm clipped at 1 (not the papers' choice)"."""
    settings = _settings(name)
    numbers = [f"learning rate {format_number(settings['learning_rate'])}"]
    numbers += [
        f"{_ARGUMENT_NAMES.get(key, key)} {format_number(value)}"
        for key, value in settings["arguments"].items()
    ]
    parts = [f"{settings['keras_class']} ({', '.join(numbers)})"]
    if settings["decay_after"] is not None:
        rule = f"halved every epoch after epoch {settings['decay_after']}"
        if settings["decay_after_with_dropout"] is not None:
            rule += f" (after {settings['decay_after_with_dropout']} with dropout)"
        parts.append(rule)
    parts.append(f"gradient norm clipped at {format_number(settings['clipnorm'])}")
    source = settings["source"] or "not the papers' choice"
    return f"{', '.join(parts)} ({source})"


def make_optimizer(
    name,
    *,
    steps_per_epoch=None,
    dropout=0.0,
    learning_rate=None,
    clipnorm=None,
    decay_after_epochs=None,
):
    """Returns the Keras optimizer called `name`, as `OPTIMIZER_SETTINGS` sets it.

    Args:
        name: "bahdanau", "luong" or "adam".
        steps_per_epoch: optimizer steps per epoch; required for "luong" and with
            `decay_after_epochs` (the halving is counted in steps).
        dropout: the model's dropout rate; "luong" starts halving later when it is > 0
            (`decay_after_with_dropout`).
        learning_rate: overrides the initial learning rate (a float).
        clipnorm: overrides the global gradient-norm clipping threshold.
        decay_after_epochs: halve the learning rate every epoch after this many epochs
            (`LuongSchedule`, counted in steps, so it needs `steps_per_epoch`). None keeps
            the optimizer's own rule (the table's `decay_after`; None: a constant rate).
    """
    settings = _settings(name)
    if decay_after_epochs is None:
        decay_after_epochs = own_decay_after(name, dropout)
    initial = settings["learning_rate"] if learning_rate is None else learning_rate
    if decay_after_epochs is not None:
        if steps_per_epoch is None:
            raise ValueError(
                f"The {name!r} optimizer with decay_after_epochs={decay_after_epochs!r} "
                "halves its learning rate per epoch and needs steps_per_epoch (an int > 0); "
                "received None."
            )
        initial = LuongSchedule(
            steps_per_epoch=steps_per_epoch,
            initial_learning_rate=initial,
            decay_after_epochs=decay_after_epochs,
        )
    optimizer_class = getattr(keras.optimizers, settings["keras_class"])
    return optimizer_class(
        learning_rate=initial,
        global_clipnorm=settings["clipnorm"] if clipnorm is None else clipnorm,
        **settings["arguments"],
    )
