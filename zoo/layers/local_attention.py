"""Local attention of Luong, Pham and Manning (2015): local-m and local-p."""

import keras
from keras import ops

from zoo.checks import check_int
from zoo.layers.attention_base import AttentionBase, masked_softmax
from zoo.layers.initializers import uniform_or_default
from zoo.layers.luong_attention import LuongAttention

MODES = ("monotonic", "predictive")
LOCAL_SCORES = ("dot", "general", "concat")
WINDOW = 10  # D, the half-width of the window: Luong et al. 2015 §3.2 (chosen empirically)


@keras.saving.register_keras_serializable(package="zoo")
class LocalAttention(AttentionBase):
    """Local attention: Luong et al. 2015, §3.2, eq. (9) and (10).

    Each target step `t` attends to a window `[p_t - D, p_t + D]` (`D = window`) of the
    source. Positions are 0-based and `S` is the number of unmasked source positions of
    the sentence.

    - `mode="monotonic"` (local-m): `p_t = min(t, S - 1)`; `t` comes from `positions`.
    - `mode="predictive"` (local-p): `p_t = S · sigmoid(v_p · tanh(q @ W_p))` (eq. 9).

    The weights are the softmax of the score (`"dot"`, `"general"` or `"concat"`, as in
    `LuongAttention`, eq. 8) over the unmasked positions `s` with `|s - p_t| <= D`;
    positions outside the window get zero weight. For local-p they are then multiplied by
    a Gaussian centred on `p_t` (eq. 10), `exp(-(s - p_t)^2 / (2 sigma^2))` with
    `sigma = D / 2`, so they do not sum to one, as in the paper.

    Args:
        window: the half-width `D` of the window (an int >= 1; the paper uses 10).
        mode: "predictive" (local-p) or "monotonic" (local-m).
        score: "dot", "general" or "concat".
        units: hidden size of `W_p` and of the "concat" score; defaults to the query size.
        init_scale: > 0 draws `W_p`, `v_p` and the score's weights uniformly in
            [-init_scale, init_scale] (Luong et al. 2015 §4.1: 0.1); 0 keeps Glorot for the
            matrices and uniform in [-0.1, 0.1] for `v_p`.

    Weights: `W_p (Dq, units)`, `v_p (units,)` (local-p only), and those of the score,
    held by a `LuongAttention` sublayer named "score" (`W_a`, `v_a`).

    Call: `context, weights = layer(query, memory, mask=None, keys=None, positions=None)`.
    `positions` is the target step `t` of each query: `(B,)` ints for a 2-D query (required
    by local-m), `(B, Tq)` for a 3-D query (defaults to `0..Tq-1`). Local-p ignores it.

    Example:

    >>> import numpy as np
    >>> layer = LocalAttention(window=2, mode="monotonic", score="dot")
    >>> q, m = np.ones((2, 4), "float32"), np.ones((2, 9, 4), "float32")
    >>> context, weights = layer(q, m, positions=np.array([0, 6]))
    >>> np.count_nonzero(np.asarray(weights), axis=-1).tolist()   # windows cut at 0
    [3, 5]

    Compiled with `jax.jit` in a JAX program (`KERAS_BACKEND=jax`, set before Keras is
    imported), the weights passed in as state:

    >>> import jax                                             # doctest: +SKIP
    >>> layer = LocalAttention(window=2, mode="predictive", score="general")  # doctest: +SKIP
    >>> _ = layer(q, m)  # builds W_p, v_p and W_a             # doctest: +SKIP
    >>> attend = jax.jit(lambda w, q, m: layer.stateless_call(w, [], q, m)[0])  # doctest: +SKIP
    >>> state = [v.value for v in layer.trainable_variables]  # doctest: +SKIP
    >>> context, weights = attend(state, q, m)                 # doctest: +SKIP
    >>> tuple(context.shape), tuple(weights.shape)             # doctest: +SKIP
    ((2, 4), (2, 9))
    """

    def __init__(
        self,
        window=WINDOW,
        mode="predictive",
        score="general",
        units=None,
        init_scale=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if mode not in MODES:
            raise ValueError(f"LocalAttention mode must be one of {MODES}; received {mode!r}.")
        if score not in LOCAL_SCORES:
            raise ValueError(
                f"LocalAttention score must be one of {LOCAL_SCORES}; received {score!r}."
            )
        self.window = check_int("LocalAttention", "window (D)", window)
        self.mode = mode
        self.score = score
        self.units = check_int("LocalAttention", "units", units, allow_none=True)
        self.init_scale = float(init_scale)
        uniform_or_default(self.init_scale, None)  # validates init_scale
        self.scorer = LuongAttention(  # units sizes W_p (local-p) and the concat score
            score=score,
            units=units if score == "concat" else None,
            init_scale=self.init_scale,
            dtype=self.dtype_policy,
            name="score",
        )

    def build(self, query_shape, memory_shape):
        self._check_ranks(query_shape, memory_shape)
        self.scorer.build(query_shape, memory_shape)
        if self.mode == "predictive":
            units = self.units or query_shape[-1]
            self.W_p = self.add_weight(
                name="W_p",
                shape=(query_shape[-1], units),
                initializer=uniform_or_default(self.init_scale, "glorot_uniform"),
            )
            self.v_p = self.add_weight(
                name="v_p",
                shape=(units,),
                initializer=uniform_or_default(
                    self.init_scale, keras.initializers.RandomUniform(-0.1, 0.1)
                ),
            )

    def compute_keys(self, memory):
        """Keys of the score (see `LuongAttention.compute_keys`)."""
        self._check_built("compute_keys")
        return self.scorer.compute_keys(memory)

    def aligned_positions(self, query, lengths, positions=None):
        """`p_t` as float32 `(B, Tq)` for a 3-D query; `lengths` is `S`, float32 `(B,)`."""
        if self.mode == "predictive":
            hidden = ops.tanh(ops.matmul(query, ops.cast(self.W_p, self.compute_dtype)))
            logit = ops.sum(hidden * ops.cast(self.v_p, self.compute_dtype), axis=-1)
            return ops.expand_dims(lengths, 1) * ops.sigmoid(ops.cast(logit, "float32"))
        positions = ops.cast(positions, "float32")
        return ops.minimum(positions, ops.expand_dims(lengths, 1) - 1.0)

    def call(self, query, memory, mask=None, keys=None, positions=None):
        self._check_ranks(query.shape, memory.shape)
        single_step = len(query.shape) == 2
        if positions is None:
            if self.mode == "monotonic" and single_step:
                raise ValueError(
                    "LocalAttention(mode='monotonic') with a 2-D query (one step) needs "
                    "positions=t, a (batch,) tensor of target steps; received positions=None."
                )
            if not single_step:
                steps = ops.arange(ops.shape(query)[1], dtype="int32")
                positions = ops.broadcast_to(
                    ops.expand_dims(steps, 0), (ops.shape(query)[0], ops.shape(query)[1])
                )
        if positions is not None:
            expected_rank = 1 if single_step else 2
            if len(positions.shape) != expected_rank:
                raise ValueError(
                    f"LocalAttention positions must have rank {expected_rank} for a query of "
                    f"rank {len(query.shape)}; received shape {tuple(positions.shape)}."
                )
            if single_step:
                positions = ops.expand_dims(positions, 1)  # (B, 1)

        def weights_fn(query, memory, mask):
            source_len = ops.shape(memory)[1]
            if mask is None:
                lengths = ops.full((ops.shape(memory)[0],), ops.cast(source_len, "float32"))
            else:
                lengths = ops.sum(ops.cast(mask, "float32"), axis=-1)
            p_t = self.aligned_positions(query, lengths, positions)  # (B, Tq)
            s = ops.cast(ops.arange(source_len), "float32")  # (Ts,)
            distance = s[None, None, :] - ops.expand_dims(p_t, -1)  # (B, Tq, Ts)
            in_window = ops.abs(distance) <= float(self.window)
            if mask is not None:
                in_window = ops.logical_and(in_window, ops.expand_dims(mask, 1))
            scores = self.scorer.scores(query, memory, keys)
            weights = masked_softmax(scores, in_window)
            if self.mode == "predictive":
                sigma = self.window / 2.0
                weights = weights * ops.exp(-ops.square(distance) / (2.0 * sigma * sigma))
            return weights

        return self._attend(query, memory, mask, weights_fn)

    def get_config(self):
        return {
            **super().get_config(),
            "window": self.window,
            "mode": self.mode,
            "score": self.score,
            "units": self.units,
            "init_scale": self.init_scale,
        }
