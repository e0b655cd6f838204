"""Precision policies: "float32", "mixed_float16", "mixed_bfloat16".

Call `set_precision` *before* building the model: Keras layers read the global policy when
they are created. Under a mixed policy the layers compute in float16/bfloat16 with float32
variables; `zoo.training.losses` casts logits to float32 so softmax and loss stay float32,
and `zoo.training.train` wraps the optimizer in `keras.optimizers.LossScaleOptimizer` when
the model's policy is "mixed_float16" (bfloat16 has float32's range and needs no scaling).

Example:
    previous = set_precision("mixed_bfloat16")
    model = zoo.models.build(...)
    ...
    set_precision(previous)  # restore
"""

import keras

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")


def set_precision(name):
    """Sets the global Keras dtype policy to `name`; returns the previous policy's name."""
    if name not in PRECISIONS:
        raise ValueError(f"Unknown precision {name!r}; expected one of {PRECISIONS}.")
    previous = keras.config.dtype_policy().name
    keras.config.set_dtype_policy(name)
    return previous


def needs_loss_scaling(model):
    """True when `model` computes in float16 (its dtype policy is mixed_float16 or float16)."""
    return model.dtype_policy.compute_dtype == "float16"
