"""Initializer choice shared by the Luong attention layers and models (uniform in [-s, s], Luong et al. 2015 §4.1)."""

import keras


def uniform_or_default(init_scale, default):
    """RandomUniform(-init_scale, init_scale) when init_scale > 0, else `default`."""
    if init_scale < 0:
        raise ValueError(f"init_scale must be >= 0 (0 = Keras defaults), got {init_scale!r}.")
    if init_scale == 0:
        return default
    return keras.initializers.RandomUniform(-init_scale, init_scale)
