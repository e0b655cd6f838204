"""What every `zoo` decoder shares: the step contract and the teacher-forced loop over it."""

from collections.abc import Mapping

import keras
from keras import ops, tree

from zoo.checks import check_ids_rank
from zoo.models.recurrence import scan_steps


class DecoderBase(keras.layers.Layer):
    """Base class of the decoders: one step function, used by every decoding loop.

    The contract (docs/design.md):

        cache = decoder.prepare(memory, source_mask, encoder_states)   # dict of (B, ...) tensors
        state = decoder.initial_state(cache)                            # tuple of (B, ...) tensors
        logits, state, weights = decoder.step(prev_ids, state, cache, training=False,
                                              params=decoder.loop_params())
        logits = decoder(target_ids, memory, source_mask, encoder_states, training=None)

    A step is split in three private parts so that teacher forcing computes exactly what
    `step` computes while doing all the work that does not depend on the recurrent state
    outside the loop over time (one large matmul instead of Tt small ones):

        params = self.loop_params()        # kernel slices and casts, once per loop
        inputs = self._step_inputs(prev_ids, params, training)  # from the ids: E y, E y @ K_E
        noise = self._step_noise(ops.shape(prev_ids), training)  # masks, drawn before a loop
        features, state, weights = self._advance((*inputs, *noise), state, cache, params, training)
        logits = self._readout(inputs, features, cache, training)           # output layer

    `_step_inputs` and `_readout` accept a leading batch axis with or without a time axis,
    `(B, ...)` or `(B, Tt, ...)`; teacher forcing applies them once to all steps and runs only
    `_advance` in the loop (`zoo.models.recurrence.scan_steps`).

    Subclasses implement `prepare`, `initial_state`, `_step_inputs`, `_advance`, `_readout`
    and `build`, and `_step_noise` when a step draws random numbers (dropout inside the
    recurrence). Every tensor in `cache` and `state` is batch-leading, so beam search can
    tile them.
    """

    def prepare(self, memory, source_mask, encoder_states):
        raise NotImplementedError

    def initial_state(self, cache):
        raise NotImplementedError

    def loop_params(self, pretransposed=True):
        """Weight tensors every step reads (kernel row blocks, casts): a dict computed once
        per loop, outside it, so that slices and their gradients are not made per step.
        `pretransposed`: also the kernels' transposes for the backward pass
        (`zoo.models.recurrence.gru_params`); False where no gradient is taken."""
        return {}

    def _step_inputs(self, ids, params, training=None):
        raise NotImplementedError

    def _step_noise(self, leading_shape, training=None):
        """The random tensors `_advance` reads (dropout masks inside the recurrence), drawn
        before the loop over time: a tuple of tensors of shape `leading_shape + (...)`,
        `(Tt, B)` (time-major) in teacher forcing and `(B,)` in `step`; `_advance` receives
        them appended to its step inputs. () (the default): none.

        Drawn outside the loop because a seed update inside a traced loop body (JAX's
        `lax.scan`) would give every step the same mask; Keras's own JAX RNN draws its
        dropout masks before its loop for the same reason."""
        return ()

    def _advance(self, inputs, state, cache, params, training=None):
        raise NotImplementedError

    def _readout(self, inputs, features, cache, training=None):
        raise NotImplementedError

    def step(self, prev_ids, state, cache, training=False, params=None, rows=None):
        """One decoding step.

        Args:
            prev_ids: (B,) int, the previous target token (START_ID at the first step).
            state: the tuple from `initial_state` or the previous `step`.
            cache: the dict from `prepare`.
            params: optional `self.loop_params()`; a decoding loop computes it once before
                the loop and passes it to every step (else each step slices the kernels).
            rows: optional (R,) int row indices: step these rows only (search skips the
                recurrence, attention and output layer of hypotheses that have ended). The
                state and weights keep all B rows: the other rows' state as given, their
                weights zero.
        Returns:
            logits (B, V) (or (R, V) for `rows`), the new state tuple, attention weights
            (B, Ts).
        """
        if len(prev_ids.shape) != 1:
            raise ValueError(
                f"{type(self).__name__}.step expects prev_ids of shape (batch,), "
                f"got shape {tuple(prev_ids.shape)}."
            )
        params = self.loop_params() if params is None else params
        full_state = tuple(state)
        if rows is not None:
            prev_ids = ops.take(prev_ids, rows, axis=0)
            state = tree.map_structure(lambda x: ops.take(x, rows, axis=0), full_state)
            cache = _RowsOf(cache, rows)
        inputs = self._step_inputs(ops.cast(prev_ids, "int32"), params, training)
        noise = self._step_noise(ops.shape(prev_ids)[:1], training)  # dropout masks (B, ...)
        step_inputs = (*inputs, *noise) if noise else inputs
        features, state, weights = self._advance(step_inputs, tuple(state), cache, params, training)
        logits = self._readout(inputs, features, cache, training)
        if rows is not None:
            at = rows[:, None]
            state = tuple(
                tree.map_structure(
                    lambda full, new: ops.scatter_update(full, at, new), full_state, state
                )
            )
            if weights is not None:
                batch = ops.shape(full_state[0])[0]
                weights = ops.scatter_update(
                    ops.zeros((batch, ops.shape(weights)[1]), weights.dtype), at, weights
                )
        return logits, state, weights

    def _stepwise_logits(self, target_ids, cache, training, return_weights=True):
        """`step` over all target steps: the step inputs and the readout run once outside
        the loop, `_advance` inside `scan_steps`.

        Returns logits (B, Tt, V) and attention weights (B, Tt, Ts) (None unless
        return_weights).
        """
        params = self.loop_params(pretransposed=bool(training))
        target_ids = ops.cast(target_ids, "int32")
        inputs = self._step_inputs(target_ids, params, training)  # (B, Tt, ..)
        time_major = tree.map_structure(lambda x: ops.swapaxes(x, 0, 1), inputs)
        batch, length = ops.shape(target_ids)[0], ops.shape(target_ids)[1]
        noise = self._step_noise((length, batch), training)  # (Tt, B, ...), drawn here
        if noise:
            time_major = (time_major, noise)

        def body(state, inputs_t):
            if noise:  # each step reads its own slice of the masks drawn before the loop
                inputs_t, noise_t = inputs_t
                inputs_t = (*inputs_t, *noise_t)
            features, state, weights = self._advance(inputs_t, state, cache, params, training)
            return state, ((features, weights) if return_weights else features)

        _, outputs = scan_steps(body, self.initial_state(cache), time_major)
        outputs = tree.map_structure(lambda x: ops.swapaxes(x, 0, 1), outputs)  # (B, Tt, ...)
        features, weights = outputs if return_weights else (outputs, None)
        return self._readout(inputs, features, cache, training), weights

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
        logits, _ = self._stepwise_logits(target_ids, cache, training, return_weights=False)
        return logits

    def compute_output_spec(self, target_ids, memory, source_mask, encoder_states, training=None):
        batch, length = target_ids.shape
        return keras.KerasTensor((batch, length, self.vocab_size), dtype=self.compute_dtype)


class _RowsOf(Mapping):
    """A read-only view of a cache dict at some rows: each entry is gathered when first
    read (once), so a step that reads only some entries gathers only those."""

    def __init__(self, cache, rows):
        self._cache = cache
        self._rows = rows
        self._gathered = {}

    def __getitem__(self, key):
        if key not in self._gathered:
            self._gathered[key] = tree.map_structure(
                lambda x: ops.take(x, self._rows, axis=0), self._cache[key]
            )
        return self._gathered[key]

    def __iter__(self):
        return iter(self._cache)

    def __len__(self):
        return len(self._cache)
