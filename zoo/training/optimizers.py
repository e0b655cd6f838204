"""The papers' optimisers, chosen by name.

| name       | optimizer                                          | clipping (global norm) |
|------------|----------------------------------------------------|------------------------|
| `bahdanau` | Adadelta(learning_rate=1.0, rho=0.95, epsilon=1e-6)| 1.0                    |
| `luong`    | SGD(LuongSchedule: 1.0, halved each epoch after    | 5.0                    |
|            | epoch 5, after epoch 8 when dropout > 0)           |                        |
| `adam`     | Adam(learning_rate=1e-3), for quick runs           | 1.0                    |

`decay_after_epochs=N` gives any of them Luong's halving rule: the learning rate is halved
every epoch after the first N (for `luong` it replaces the paper's 5 / 8).

Bahdanau et al. 2014, appendix A.2.2 (Adadelta, eps 1e-6, rho 0.95; gradient norm
renormalised to at most 1). Luong et al. 2015, section 4.1 (SGD, lr 1.0, 10 epochs, halving
after 5; 12 epochs and halving after 8 with dropout 0.2; gradient norm rescaled to 5).
Uniform initialisation in [-0.1, 0.1] belongs to the model presets, not here.

All three are the optimizers Keras ships (`keras.optimizers.Adadelta`, `SGD`, `Adam`). A
hand-fused Adam/Adadelta update was tried and removed: in one process, alternating, Keras's
own Adam made the whole training step faster, not slower (bench/RESULTS.md, session 8).

Create the optimizer inside `strategy.scope()` when training with a distribution strategy.
"""

import keras

from zoo.training.luong_schedule import LuongSchedule

OPTIMIZERS = ("bahdanau", "luong", "adam")


# Each optimizer's loss normalisation (`losses.loss_denominator`): the papers' SGD and
# Adadelta on a sentence's summed loss (Luong et al. 2015 §4.1 as tensorflow/nmt reproduced
# it; Bahdanau et al.'s GroundHog cost), Adam on the mean per token.
_LOSS_NORMALIZATION = {"adam": "tokens", "bahdanau": "sentences", "luong": "sentences"}


def default_loss_normalization(name):
    """ "tokens" or "sentences": the loss normalisation optimizer `name` is meant for."""
    if name not in OPTIMIZERS:
        raise ValueError(f"Unknown optimizer {name!r}; expected one of {OPTIMIZERS}.")
    return _LOSS_NORMALIZATION[name]


def luong_decay_after(dropout):
    """Epochs before Luong's SGD starts halving: 5, or 8 when the model has dropout (§4.1)."""
    return 8 if dropout and dropout > 0 else 5


def make_optimizer(
    name,
    *,
    steps_per_epoch=None,
    dropout=0.0,
    learning_rate=None,
    clipnorm=None,
    decay_after_epochs=None,
):
    """Returns the Keras optimizer called `name` (see the module table).

    Args:
        name: "bahdanau", "luong" or "adam".
        steps_per_epoch: optimizer steps per epoch; required for "luong" (its schedule is
            counted in steps).
        dropout: the model's dropout rate; "luong" starts halving after epoch 8 instead of 5
            when it is > 0.
        learning_rate: overrides the initial learning rate (a float).
        clipnorm: overrides the global gradient-norm clipping threshold.
        decay_after_epochs: halve the learning rate every epoch after this many epochs
            (`LuongSchedule`, counted in steps, so it needs `steps_per_epoch`). None keeps
            the optimizer's own rule: constant for "bahdanau" and "adam", 5 (8 with dropout)
            for "luong".
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"Unknown optimizer {name!r}; expected one of {OPTIMIZERS}.")
    if name == "luong" and decay_after_epochs is None:
        decay_after_epochs = luong_decay_after(dropout)
    initial = {"bahdanau": 1.0, "luong": 1.0, "adam": 1e-3}[name]
    initial = initial if learning_rate is None else learning_rate
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
    if name == "bahdanau":
        return keras.optimizers.Adadelta(
            learning_rate=initial,
            rho=0.95,
            epsilon=1e-6,
            global_clipnorm=1.0 if clipnorm is None else clipnorm,
        )
    if name == "luong":
        return keras.optimizers.SGD(
            learning_rate=initial, global_clipnorm=5.0 if clipnorm is None else clipnorm
        )
    return keras.optimizers.Adam(
        learning_rate=initial,
        global_clipnorm=1.0 if clipnorm is None else clipnorm,
    )
