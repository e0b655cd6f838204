"""Global attention of Luong, Pham and Manning (2015)."""

import keras
from keras import ops

from zoo.checks import check_int
from zoo.layers.attention_base import AttentionBase, masked_softmax
from zoo.layers.initializers import uniform_or_default

SCORES = ("dot", "general", "concat", "location")


@keras.saving.register_keras_serializable(package="zoo")
class LuongAttention(AttentionBase):
    """Global attention: Luong et al. 2015, §3.1, eq. (7) and (8).

    For a decoder top-layer state `q = h_t` and source states `m_s = h̄_s`
    (Keras orientation, `x @ W`), the score `e_s` is one of (eq. 8):

        "dot"       e_s = q · m_s                              (needs Dq == Dm)
        "general"   e_s = (q @ W_a) · m_s
        "concat"    e_s = v_a · tanh([q; m_s] @ W_a)
        "location"  e   = (q @ W_a)[:Ts]                      (location-based, eq. 9)

    and `a_t = softmax(e)` over unmasked source positions (eq. 7); the context is
    `c_t = sum_s a_t(s) m_s` (§3).

    Keys (`compute_keys`, once per sentence): "dot" uses the memory itself; "general"
    uses `m_s @ W_a^T`, so that a step costs `Ts·Dq` instead of `Dq·Dm` (the same
    numbers, as `(q @ W_a) · m_s = q · (m_s @ W_a^T)`); "concat" splits `W_a` into its
    query rows `W_a[:Dq]` and memory rows `W_a[Dq:]` and precomputes `m_s @ W_a[Dq:]`;
    "location" needs none.

    Args:
        score: "dot", "general", "concat" or "location".
        units: hidden size of the "concat" score; defaults to the query size (an error
            with the other scores).
        max_length: longest source the "location" score can address (its output size);
            required by "location", an error with the other scores.
        init_scale: > 0 draws every weight uniformly in [-init_scale, init_scale] (Luong
            et al. 2015 §4.1: 0.1 for all parameters); 0 keeps Glorot for `W_a` and
            uniform in [-0.1, 0.1] for `v_a`.

    Weights: "general" `W_a (Dq, Dm)`; "concat" `W_a (Dq + Dm, units)`, `v_a (units,)`;
    "location" `W_a (Dq, max_length)`; "dot" none.

    Call: `context, weights = layer(query, memory, mask=None, keys=None)`, see
    `AttentionBase`. The "location" score addresses the first `max_length` source
    positions: a longer source is read whole by the encoder, but its positions past
    `max_length` get zero weight (the same rule in training, search and export; the
    `Translator` warns when a sentence is cut this way).

    Example:

    >>> import numpy as np
    >>> layer = LuongAttention(score="general")
    >>> context, weights = layer(np.ones((2, 3, 4), "float32"), np.ones((2, 5, 6), "float32"))
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 3, 6), (2, 3, 5))

    In a PyTorch program (`KERAS_BACKEND=torch`, set before Keras is imported) it takes
    and returns torch tensors, and autograd reaches its weights:

    >>> import torch                                           # doctest: +SKIP
    >>> layer = LuongAttention(score="general")                # doctest: +SKIP
    >>> context, weights = layer(torch.ones(2, 4), torch.ones(2, 5, 6))  # doctest: +SKIP
    >>> context.sum().backward()                               # doctest: +SKIP
    >>> tuple(layer.W_a.value.grad.shape)                      # doctest: +SKIP
    (4, 6)
    """

    def __init__(self, score="general", units=None, max_length=None, init_scale=0.0, **kwargs):
        super().__init__(**kwargs)
        if score not in SCORES:
            raise ValueError(f"LuongAttention score must be one of {SCORES}; received {score!r}.")
        units = check_int("LuongAttention", "units", units, allow_none=True)
        if units is not None and score != "concat":
            raise ValueError(
                f"LuongAttention: units sizes the 'concat' score only; received units={units} "
                f"with score={score!r}. Leave units=None for this score."
            )
        if max_length is not None and score != "location":
            raise ValueError(
                f"LuongAttention: max_length sizes the 'location' score only; received "
                f"max_length={max_length!r} with score={score!r}. Leave max_length=None."
            )
        if score == "location":
            if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
                raise ValueError(
                    "LuongAttention(score='location') needs max_length, a positive int (the "
                    f"longest source it can address); received max_length={max_length!r}."
                )
        self.score = score
        self.units = units
        self.max_length = max_length
        self.init_scale = float(init_scale)
        uniform_or_default(self.init_scale, None)  # validates init_scale

    def build(self, query_shape, memory_shape):
        self._check_ranks(query_shape, memory_shape)
        query_dim, memory_dim = query_shape[-1], memory_shape[-1]
        init = uniform_or_default(self.init_scale, "glorot_uniform")
        if self.score == "dot" and query_dim != memory_dim:
            raise ValueError(
                "LuongAttention(score='dot') needs query and memory of equal size; received "
                f"query_dim={query_dim} and memory_dim={memory_dim}. Use score='general'."
            )
        if self.score == "general":
            self.W_a = self.add_weight(name="W_a", shape=(query_dim, memory_dim), initializer=init)
        elif self.score == "concat":
            units = self.units or query_dim
            self.W_a = self.add_weight(
                name="W_a", shape=(query_dim + memory_dim, units), initializer=init
            )
            self.v_a = self.add_weight(
                name="v_a",
                shape=(units,),
                initializer=uniform_or_default(
                    self.init_scale, keras.initializers.RandomUniform(-0.1, 0.1)
                ),
            )
        elif self.score == "location":
            self.W_a = self.add_weight(
                name="W_a", shape=(query_dim, self.max_length), initializer=init
            )
        self._query_dim = query_dim

    def compute_keys(self, memory):
        """The query-independent part of the score, `(B, Ts, ·)` (see the class docstring)."""
        self._check_built("compute_keys")
        memory = ops.cast(memory, self.compute_dtype)
        if self.score == "general":
            return ops.matmul(memory, ops.transpose(ops.cast(self.W_a, self.compute_dtype)))
        if self.score == "concat":
            w_memory = ops.cast(self.W_a, self.compute_dtype)[self._query_dim :]
            return ops.matmul(memory, w_memory)
        return memory  # "dot" and "location" (unused there)

    def scores(self, query, memory, keys=None):
        """Raw scores `e` `(B, Tq, Ts)` for a 3-D query, before any masking."""
        keys = self.compute_keys(memory) if keys is None else ops.cast(keys, self.compute_dtype)
        if self.score in ("dot", "general"):
            return ops.matmul(query, ops.transpose(keys, (0, 2, 1)))
        if self.score == "concat":
            w_query = ops.cast(self.W_a, self.compute_dtype)[: self._query_dim]
            hidden = ops.expand_dims(ops.matmul(query, w_query), 2) + ops.expand_dims(keys, 1)
            v_a = ops.expand_dims(ops.cast(self.v_a, self.compute_dtype), -1)  # (units, 1)
            return ops.squeeze(ops.matmul(ops.tanh(hidden), v_a), -1)
        # location: one score per source position, from the query alone. W_a has one
        # column per position up to max_length; later positions get a filler score here and
        # no weight in `call` (`reach`).
        scores = ops.matmul(query, ops.cast(self.W_a, self.compute_dtype))  # (B, Tq, max_length)
        batch, steps, source_len = ops.shape(query)[0], ops.shape(query)[1], ops.shape(memory)[1]
        filler = ops.zeros((batch, steps, source_len), scores.dtype)
        scores = ops.concatenate([scores, filler], axis=-1)  # (B, Tq, max_length + Ts)
        return ops.slice(scores, (0, 0, 0), (batch, steps, source_len))

    def reach(self, memory):
        """(Ts,) bool: the source positions the score can address (all but "location"'s
        positions past `max_length`)."""
        positions = ops.arange(ops.shape(memory)[1])
        if self.score != "location":
            return ops.greater_equal(positions, 0)
        return ops.less(positions, self.max_length)

    def call(self, query, memory, mask=None, keys=None):
        def weights_fn(query, memory, mask):
            scores = self.scores(query, memory, keys)
            keep = None if mask is None else ops.expand_dims(mask, 1)  # (B, 1, Ts)
            if self.score == "location":
                reach = self.reach(memory)[None, None, :]
                keep = reach if keep is None else ops.logical_and(keep, reach)
            return masked_softmax(scores, keep)

        return self._attend(query, memory, mask, weights_fn)

    def get_config(self):
        return {
            **super().get_config(),
            "score": self.score,
            "units": self.units,
            "max_length": self.max_length,
            "init_scale": self.init_scale,
        }
