"""What every `zoo` attention layer shares: argument checks, masked softmax, context.

Shapes used in this package:
    B  batch size          Tq  query (target) steps     Ts  source (memory) positions
    Dq query features      Dm  memory features
"""

import keras
from keras import ops

# Added to the scores of masked positions. Scores are cast to float32 before this is
# added, so the constant is safe under mixed_float16 (whose largest finite value is 65504).
MASK_SCORE = -1e9


def masked_softmax(scores, mask=None):
    """Softmax over the last axis in float32, with `mask` (True = keep) applied.

    A row whose mask is all False gets all-zero weights (never NaN).

    Args:
        scores: `(B, Tq, Ts)` scores, any float dtype.
        mask: boolean, broadcastable to `scores`, or None.

    Returns:
        float32 weights of the shape of `scores`.
    """
    scores = ops.cast(scores, "float32")
    if mask is None:
        return ops.softmax(scores, axis=-1)
    scores = ops.where(mask, scores, MASK_SCORE)
    weights = ops.softmax(scores, axis=-1)
    # All-masked rows: the softmax above is uniform over MASK_SCORE; zero it out.
    return weights * ops.cast(mask, "float32")


class AttentionBase(keras.layers.Layer):
    """Base class of the attention layers: input checks and the weighted sum.

    Subclasses implement `compute_keys(memory)` (the query-independent part of the
    score, computed once per sentence) and `_weights(query, memory, mask, keys, ...)`
    returning float32 weights `(B, Tq, Ts)` for a 3-D query.

    Call contract, shared by all attention layers so that decoders can swap them:

        context, weights = layer(query, memory, mask=None, keys=None)

    - `query`: `(B, Dq)` for one decoder step or `(B, Tq, Dq)` for all steps.
    - `memory`: `(B, Ts, Dm)`; `mask`: boolean `(B, Ts)`, True = real source position.
    - `keys`: `layer.compute_keys(memory)`, or None to compute it in the call.
    - returns `context` `(B, [Tq,] Dm)` with `context = sum_s weights_s * memory_s`, and
      `weights` `(B, [Tq,] Ts)`, both in the layer's compute dtype.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # `mask` is the source mask, given explicitly; the outputs carry no Keras mask.
        self.supports_masking = True

    def compute_mask(self, query, previous_mask=None):
        return None

    def _check_ranks(self, query_shape, memory_shape):
        if len(query_shape) not in (2, 3):
            raise ValueError(
                f"{type(self).__name__} expects a query of rank 2 (batch, query_dim) or 3 "
                f"(batch, steps, query_dim); received shape {tuple(query_shape)}."
            )
        if len(memory_shape) != 3:
            raise ValueError(
                f"{type(self).__name__} expects memory of rank 3 (batch, source_len, "
                f"memory_dim); received shape {tuple(memory_shape)}."
            )
        if query_shape[-1] is None or memory_shape[-1] is None:
            raise ValueError(
                f"{type(self).__name__} needs known feature sizes; received query shape "
                f"{tuple(query_shape)} and memory shape {tuple(memory_shape)}."
            )

    def _check_mask(self, mask, memory):
        if mask is None:
            return None
        if len(mask.shape) != 2:
            raise ValueError(
                f"{type(self).__name__} expects a boolean mask of shape (batch, source_len); "
                f"received shape {tuple(mask.shape)}."
            )
        for axis, what in ((0, "batch size"), (1, "source length")):
            got, expected = mask.shape[axis], memory.shape[axis]
            if got is not None and expected is not None and got != expected:
                raise ValueError(
                    f"{type(self).__name__} received a mask of shape {tuple(mask.shape)} for "
                    f"memory of shape {tuple(memory.shape)}: the {what} differs."
                )
        return ops.cast(mask, "bool")

    def compute_keys(self, memory):
        """The query-independent part of the score, `(B, Ts, ·)`; once per sentence."""
        raise NotImplementedError

    def _check_built(self, method):
        """A ValueError for `method` on a layer whose weights are not made yet."""
        if not self.built:
            raise ValueError(
                f"{type(self).__name__}.{method} needs the layer's weights: call the layer "
                "once, or build it with layer.build(query_shape, memory_shape), first; "
                "received an unbuilt layer."
            )

    def _attend(self, query, memory, mask, weights_fn):
        """Shared body of `call`: rank handling, dtype casts, weighted sum."""
        self._check_ranks(query.shape, memory.shape)
        mask = self._check_mask(mask, memory)
        query = ops.cast(query, self.compute_dtype)
        memory = ops.cast(memory, self.compute_dtype)
        single_step = len(query.shape) == 2
        if single_step:
            query = ops.expand_dims(query, 1)  # (B, 1, Dq)
        weights = weights_fn(query, memory, mask)  # (B, Tq, Ts) float32
        weights = ops.cast(weights, self.compute_dtype)
        context = ops.matmul(weights, memory)  # (B, Tq, Dm)
        if single_step:
            return ops.squeeze(context, 1), ops.squeeze(weights, 1)
        return context, weights

    def compute_output_shape(self, query_shape, memory_shape):
        self._check_ranks(query_shape, memory_shape)
        leading = tuple(query_shape[:-1])
        return leading + (memory_shape[-1],), leading + (memory_shape[1],)
