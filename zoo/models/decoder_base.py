"""What every `zoo` decoder shares: the step contract and the teacher-forced loop over it."""

import keras
from keras import ops

from zoo.models.checks import check_ids_rank


class DecoderBase(keras.layers.Layer):
    """Base class of the decoders: one step function, used by every decoding loop.

    The contract (docs/design.md):

        cache = decoder.prepare(memory, source_mask, encoder_states)   # dict of (B, ...) tensors
        state = decoder.initial_state(cache)                            # tuple of (B, ...) tensors
        logits, state, weights = decoder.step(prev_ids, state, cache, training=False)
        logits = decoder(target_ids, memory, source_mask, encoder_states, training=None)

    A step is split in two private halves so that teacher forcing can run the output layer
    once over all steps (one large matmul instead of Tt small ones) and still compute exactly
    what `step` computes:

        readout, state, weights = self._advance(prev_ids, state, cache, training)  # recurrence
        logits = self._readout(readout, training)                                  # output layer

    Subclasses implement `prepare`, `initial_state`, `_advance`, `_readout` and `build`.
    Every tensor in `cache` and `state` is batch-leading, so beam search can tile them.
    """

    def prepare(self, memory, source_mask, encoder_states):
        raise NotImplementedError

    def initial_state(self, cache):
        raise NotImplementedError

    def _advance(self, prev_ids, state, cache, training=None):
        raise NotImplementedError

    def _readout(self, readout, training=None):
        raise NotImplementedError

    def step(self, prev_ids, state, cache, training=False):
        """One decoding step.

        Args:
            prev_ids: (B,) int, the previous target token (START_ID at the first step).
            state: the tuple from `initial_state` or the previous `step`.
            cache: the dict from `prepare`.
        Returns:
            logits (B, V), the new state tuple, attention weights (B, Ts).
        """
        if len(prev_ids.shape) != 1:
            raise ValueError(
                f"{type(self).__name__}.step expects prev_ids of shape (batch,), "
                f"got shape {tuple(prev_ids.shape)}."
            )
        readout, state, weights = self._advance(
            ops.cast(prev_ids, "int32"), tuple(state), cache, training
        )
        return self._readout(readout, training), state, weights

    def _stepwise_readouts(self, target_ids, cache, training):
        """Runs `_advance` over all target steps with `keras.ops.scan` (graph-friendly).

        Returns readouts (B, Tt, ·) and attention weights (B, Tt, Ts).
        """
        state = self.initial_state(cache)
        batch = ops.shape(target_ids)[0]
        source_len = ops.shape(cache["mask"])[1]
        # keras.ops.scan (TensorFlow backend) stacks outputs shaped like the carry, so the
        # carry also holds the last step's outputs.
        readout_dim = self._readout_dim()
        outputs = (
            ops.zeros((batch, readout_dim), dtype=self.compute_dtype),
            ops.zeros((batch, source_len), dtype=self.compute_dtype),
        )

        def body(carry, ids_t):
            state, _ = carry
            readout, state, weights = self._advance(ids_t, state, cache, training)
            outputs = (ops.cast(readout, self.compute_dtype), ops.cast(weights, self.compute_dtype))
            return (state, outputs), (state, outputs)

        ids = ops.transpose(ops.cast(target_ids, "int32"))  # (Tt, B)
        _, (_, (readouts, weights)) = ops.scan(body, (state, outputs), ids)
        return ops.transpose(readouts, (1, 0, 2)), ops.transpose(weights, (1, 0, 2))

    def _readout_dim(self):
        raise NotImplementedError

    def _check_call_inputs(self, target_ids_shape, memory_shape, source_mask_shape):
        name = type(self).__name__
        check_ids_rank(name, "target_ids", target_ids_shape)
        if len(memory_shape) != 3 or memory_shape[-1] is None:
            raise ValueError(
                f"{name} expects memory of shape (batch, source_len, features) with known "
                f"features, got shape {tuple(memory_shape)}."
            )
        if len(source_mask_shape) != 2:
            raise ValueError(
                f"{name} expects source_mask of shape (batch, source_len), "
                f"got shape {tuple(source_mask_shape)}."
            )

    def call(self, target_ids, memory, source_mask, encoder_states, training=None):
        """Teacher forcing: logits (B, Tt, V) for target_ids (B, Tt) starting with START_ID."""
        cache = self.prepare(memory, source_mask, encoder_states)
        readouts, _ = self._stepwise_readouts(target_ids, cache, training)
        return self._readout(readouts, training)

    def compute_output_spec(self, target_ids, memory, source_mask, encoder_states, training=None):
        batch, length = target_ids.shape
        return keras.KerasTensor((batch, length, self.vocab_size), dtype=self.compute_dtype)
