"""Maxout units (Goodfellow et al. 2013), used by Bahdanau's deep output (appendix A.2.2)."""

import keras
from keras import ops

from zoo.checks import check_int


@keras.saving.register_keras_serializable(package="zoo")
class Maxout(keras.layers.Layer):
    """Max over consecutive groups of `pool_size` features of the last axis.

    Bahdanau et al. (2014), appendix A.2.2: t_i = [max{t~_{i,2j-1}, t~_{i,2j}}]_j, i.e.
    `pool_size=2`. Input (..., D) with D divisible by pool_size; output (..., D // pool_size).

    Example:
        Maxout(2)(x)  # x (B, 1000) -> (B, 500)
    """

    def __init__(self, pool_size=2, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = check_int("Maxout", "pool_size", pool_size)

    def call(self, inputs):
        depth = inputs.shape[-1]
        if depth is None or depth % self.pool_size:
            raise ValueError(
                f"Maxout needs a last dimension divisible by pool_size={self.pool_size}, "
                f"got shape {inputs.shape}."
            )
        shape = ops.shape(inputs)
        pooled = ops.reshape(inputs, (*shape[:-1], depth // self.pool_size, self.pool_size))
        return ops.max(pooled, axis=-1)  # (..., D // pool_size)

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], input_shape[-1] // self.pool_size)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size}
