"""Additive attention of Bahdanau, Cho and Bengio (2014)."""

import math

import keras
from keras import ops

from zoo.checks import check_int
from zoo.layers.attention_base import AttentionBase, masked_softmax


@keras.saving.register_keras_serializable(package="zoo")
class BahdanauAttention(AttentionBase):
    """Additive (MLP) attention: Bahdanau et al. 2014, §3.1 eq. (6) and appendix A.1.2.

    For a decoder state `q = s_{i-1}` and annotations `m_j = h_j` (Keras orientation,
    `x @ W`):

        e_ij     = v_a · tanh(q @ W_a + m_j @ U_a)          (eq. 6)
        alpha_ij = softmax_j(e_ij) over unmasked j          (eq. 6)
        c_i      = sum_j alpha_ij m_j                       (eq. 5)

    `m_j @ U_a` does not depend on `i`: `compute_keys(memory)` computes it once per
    sentence (the paper's appendix A.1.2 note) and the decoder passes it back as `keys`.

    With `normalize=True` the scoring vector is weight-normalised (Salimans & Kingma
    2016), as in tensorflow/nmt's `normed_bahdanau`:
    `e_ij = (g · v_a / ||v_a||) · tanh(q @ W_a + m_j @ U_a + b)`.

    Args:
        units: size of the hidden layer of the alignment model (`n'` in the paper).
        normalize: use the weight-normalised score.

    Weights: `W_a (Dq, units)`, `U_a (Dm, units)`, `v_a (units,)`, and with
    `normalize=True` also `g ()` and `b (units,)`.

    Call: `context, weights = layer(query, memory, mask=None, keys=None)`, see
    `AttentionBase`: query `(B, Dq)` or `(B, Tq, Dq)`, memory `(B, Ts, Dm)`,
    mask bool `(B, Ts)`; context `(B, [Tq,] Dm)`, weights `(B, [Tq,] Ts)`.

    Example:

    >>> import numpy as np
    >>> layer = BahdanauAttention(units=8)
    >>> query, memory = np.ones((2, 4), "float32"), np.ones((2, 5, 6), "float32")
    >>> mask = np.array([[True] * 5, [True, True, False, False, False]])
    >>> context, weights = layer(query, memory, mask=mask)
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 6), (2, 5))

    The same layer in a JAX program (`KERAS_BACKEND=jax`, set before Keras is imported):
    its weights as a pure function's arguments, differentiated by `jax.grad`:

    >>> import jax                                             # doctest: +SKIP
    >>> def total(weights, query):                             # doctest: +SKIP
    ...     (context, _), _ = layer.stateless_call(weights, [], query, memory)
    ...     return context.sum()
    >>> weights = [v.value for v in layer.trainable_variables]  # W_a, U_a, v_a  # doctest: +SKIP
    >>> [tuple(g.shape) for g in jax.grad(total)(weights, query)]  # doctest: +SKIP
    [(4, 8), (6, 8), (8,)]
    """

    def __init__(self, units, normalize=False, **kwargs):
        super().__init__(**kwargs)
        self.units = check_int("BahdanauAttention", "units", units)
        self.normalize = bool(normalize)

    def build(self, query_shape, memory_shape):
        self._check_ranks(query_shape, memory_shape)
        init = keras.initializers.GlorotUniform()
        self.W_a = self.add_weight(
            name="W_a", shape=(query_shape[-1], self.units), initializer=init
        )
        self.U_a = self.add_weight(
            name="U_a", shape=(memory_shape[-1], self.units), initializer=init
        )
        self.v_a = self.add_weight(
            name="v_a", shape=(self.units,), initializer=keras.initializers.RandomUniform(-0.1, 0.1)
        )
        if self.normalize:
            self.g = self.add_weight(
                name="g",
                shape=(),
                initializer=keras.initializers.Constant(math.sqrt(1.0 / self.units)),
            )
            self.b = self.add_weight(name="b", shape=(self.units,), initializer="zeros")

    def compute_keys(self, memory):
        """`U_a h_j` for every source position: `(B, Ts, units)`."""
        self._check_built("compute_keys")
        memory = ops.cast(memory, self.compute_dtype)
        return ops.matmul(memory, ops.cast(self.U_a, self.compute_dtype))

    def call(self, query, memory, mask=None, keys=None):
        def weights_fn(query, memory, mask):
            k = self.compute_keys(memory) if keys is None else ops.cast(keys, self.compute_dtype)
            q = ops.matmul(query, ops.cast(self.W_a, self.compute_dtype))  # (B, Tq, units)
            hidden = ops.expand_dims(q, 2) + ops.expand_dims(k, 1)  # (B, Tq, Ts, units)
            v = self.v_a
            if self.normalize:
                hidden = hidden + self.b
                v = self.g * v / ops.sqrt(ops.sum(ops.square(v)))
            # v_a · tanh(...) as one matmul over the last axis (one pass over the
            # (B, Tq, Ts, units) tensor instead of a multiply and a sum).
            v = ops.expand_dims(ops.cast(v, self.compute_dtype), -1)  # (units, 1)
            scores = ops.squeeze(ops.matmul(ops.tanh(hidden), v), -1)
            return masked_softmax(scores, None if mask is None else ops.expand_dims(mask, 1))

        return self._attend(query, memory, mask, weights_fn)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "normalize": self.normalize}
