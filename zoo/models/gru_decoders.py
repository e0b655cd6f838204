"""The GRU decoders of Bahdanau et al. (2014), over the base they share (a GRU reading
[E y; c] and the maxout deep output of appendix A.2.2; `Maxout`, Goodfellow et al. 2013):
`BahdanauDecoder`, RNNsearch's (§3.1, appendix A.2.2), and `RNNEncDecDecoder`, the
RNNencdec baseline's (Cho et al. 2014; §4.2, A.2).
"""

import keras
from keras import ops

from zoo.checks import check_int, check_rate, check_sizes
from zoo.layers import BahdanauAttention
from zoo.models.decoder_base import DecoderBase
from zoo.models.recurrence import gru_params, gru_update, project
from zoo.models.tying import readout_projection, tied_logits


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


class GRUMaxoutDecoder(DecoderBase):
    """Base class of `BahdanauDecoder` (RNNsearch) and `RNNEncDecDecoder` (RNNencdec).

    Both run a GRU over [E y_{i-1}; c_i] and read out through a maxout layer:

        s_i  = GRU([E y_{i-1}; c_i], s_{i-1})
        t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i,  t_i = maxout(t~_i),  logits_i = W_o t_i

    with dropout (rate `dropout`, in training) on E y and on t_i. With `tie_embeddings` the
    output layer reads the target embeddings instead of W_o (Press and Wolf 2017):
    logits_i = [t_i W_p] E^T + b, through a projection W_p (maxout_units -> embedding_dim,
    no bias) only when the sizes differ (`zoo.models.tying`). They differ in the context
    c_i (attention over the source, or one fixed vector) and in s_0. The state is (s_{i-1},).

    A subclass creates its layers in this order (under a seed, the order of creation fixes
    the initial weights):

        super().__init__(vocab_size, embedding_dim, units, maxout_units, reset_after,
                         dropout, tie_embeddings, **kwargs)   # checks the arguments, creates E
        ...its context layers...
        self.cell = self._gru_cell()
        ...any other layer...
        self._add_deep_output()             # U_o, V_o, C_o, maxout, W_o (or W_p), dropouts

    and implements `_build_context_layers` (returns the size of c), `prepare`, `_step_inputs`,
    `_advance` and `_readout` (with `_deep_output`).
    """

    ENCODER_STATES = "[h]"  # what encoder_states holds, for the error message

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        maxout_units,
        reset_after,
        dropout,
        tie_embeddings=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.tie_embeddings = bool(tie_embeddings)
        name = type(self).__name__
        sizes = check_sizes(name, vocab_size, embedding_dim, units)
        self.vocab_size, self.embedding_dim, self.units = sizes
        self.maxout_units = check_int(name, "maxout_units", maxout_units)
        self.reset_after = bool(reset_after)
        self.dropout = check_rate(name, "dropout", dropout)
        self.embedding = keras.layers.Embedding(
            vocab_size, embedding_dim, dtype=self.dtype_policy, name="E"
        )

    def _gru_cell(self):
        return keras.layers.GRUCell(
            self.units, reset_after=self.reset_after, dtype=self.dtype_policy, name="gru_cell"
        )

    def _add_deep_output(self):
        """U_o, V_o, C_o (2l features each), maxout, W_o and the two dropout layers."""
        policy, features = self.dtype_policy, 2 * self.maxout_units
        self.U_o = keras.layers.Dense(features, dtype=policy, name="U_o")
        self.V_o = keras.layers.Dense(features, use_bias=False, dtype=policy, name="V_o")
        self.C_o = keras.layers.Dense(features, use_bias=False, dtype=policy, name="C_o")
        self.maxout = Maxout(2, dtype=policy, name="maxout")
        if self.tie_embeddings:  # logits = [t W_p] E^T + b: E is the output matrix
            self.W_p = readout_projection(
                self.maxout_units, self.embedding_dim, "glorot_uniform", policy
            )
        else:
            self.W_o = keras.layers.Dense(self.vocab_size, dtype=policy, name="W_o")
        # Dropout on E y and on t_i, both outside the recurrence (no per-step masks).
        self.embedding_dropout = keras.layers.Dropout(
            self.dropout, dtype=policy, name="embedding_dropout"
        )
        self.readout_dropout = keras.layers.Dropout(
            self.dropout, dtype=policy, name="readout_dropout"
        )

    def _build_context_layers(self, memory_shape, encoder_states_shape):
        """Builds the subclass's own layers; returns the size of the context c."""
        raise NotImplementedError

    def build(self, target_ids_shape, memory_shape, source_mask_shape, encoder_states_shape):
        self._check_call_inputs(target_ids_shape, memory_shape, source_mask_shape)
        if len(encoder_states_shape) != 1:
            raise ValueError(
                f"{type(self).__name__} expects encoder_states {self.ENCODER_STATES}, got "
                f"{len(encoder_states_shape)} tensors."
            )
        self.embedding.build(target_ids_shape)
        context_dim = self._build_context_layers(memory_shape, encoder_states_shape)
        self.cell.build((None, self.embedding_dim + context_dim))
        self.U_o.build((None, self.units))
        self.V_o.build((None, self.embedding_dim))
        self.C_o.build((None, context_dim))
        if not self.tie_embeddings:
            self.W_o.build((None, self.maxout_units))
            return
        if self.W_p is not None:
            self.W_p.build((None, self.maxout_units))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.vocab_size,), initializer="zeros"
        )

    def initial_state(self, cache):
        return (ops.cast(cache["s_0"], self.compute_dtype),)

    def loop_params(self, pretransposed=True):
        """The GRU's weights split for [E y; c]: kernels [K_E, K_c] (K = [K_E; K_c]).
        `pretransposed`: as for `zoo.models.recurrence.gru_params` (False where no gradient
        is taken)."""
        context_dim = self.cell.kernel.shape[0] - self.embedding_dim
        sizes = [self.embedding_dim, context_dim]
        return {"gru": gru_params(self.cell, sizes, self.compute_dtype, pretransposed)}

    def _embedded(self, ids, training):
        """drop(E y) (B, [Tt,] m)."""
        return self.embedding_dropout(self.embedding(ids), training=training)

    def _deep_output(self, s_prev, embedded, context_output, training):
        """logits W_o t_i from s_{i-1}, E y_{i-1} and C_o c_i (each (B, [Tt,] ...))."""
        readout = self.U_o(s_prev) + self.V_o(embedded) + context_output  # t~_i (.., 2l)
        t = self.readout_dropout(self.maxout(readout), training=training)  # t_i (..., l)
        if self.tie_embeddings:  # [t_i W_p] E^T + b
            return tied_logits(t, self.embedding, self.output_bias, self.W_p, self.compute_dtype)
        return self.W_o(t)  # W_o t_i: (..., V)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "maxout_units": self.maxout_units,
            "reset_after": self.reset_after,
            "dropout": self.dropout,
            "tie_embeddings": self.tie_embeddings,
        }


@keras.saving.register_keras_serializable(package="zoo")
class BahdanauDecoder(GRUMaxoutDecoder):
    """GRU decoder with additive attention and a maxout deep output (RNNsearch).

    Bahdanau et al. 2014, §3.1 eq. (4)-(6) and appendix A.2.2. At step i, with the previous
    target word y_{i-1} and the previous state s_{i-1}:

        c_i, alpha_i = attention(s_{i-1}, h)                          (eq. 5, 6)
        s_i  = GRU([E y_{i-1}; c_i], s_{i-1})                         (A.2.2, reset_after=False)
        t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i                  (A.2.2, 2l features)
        t_i  = [max(t~_{i,2j-1}, t~_{i,2j})]_j                         (maxout, l features)
        logits_i = W_o t_i                                            (V features)
        s_0  = tanh(W_s bwd_h_1)                                      (A.2.2)

    Args:
        vocab_size: target vocabulary size K_y.
        embedding_dim: m, target word embedding size.
        units: n, GRU decoder units.
        maxout_units: l, maxout outputs (the readout t~ has 2l features).
        attention_units: n', hidden size of the alignment model (default: units).
        reset_after: GRU variant; False (default) is the paper's gate order.
        dropout: rate in [0, 1) applied in training to the target embeddings E y and to the
            maxout output t_i before W_o (default 0.0: the paper mentions none; the base
            presets use 0.3, which small corpora such as Multi30k need).
        tie_embeddings: the output layer reads the target embeddings E instead of W_o
            (Press and Wolf 2017; see `GRUMaxoutDecoder`). Default False.

    Call: `logits = decoder(target_ids, memory, source_mask, encoder_states, training=None)`
        target_ids (B, Tt) int (START_ID first), memory (B, Ts, 2n_enc), source_mask (B, Ts),
        encoder_states [bwd_h_1 (B, n_enc)] -> logits (B, Tt, vocab_size).
    Step: see `DecoderBase` and `GRUMaxoutDecoder`. cache: memory, mask, keys (U_a h_j), s_0;
    state: (s_{i-1},).

    Example:
        decoder = BahdanauDecoder(30000, 620, 1000, 500, name="decoder")
        logits = decoder(target_ids, *encoder(source_ids))  # (B, Tt, 30000)
    """

    ENCODER_STATES = "[bwd_h_1]"

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        maxout_units,
        attention_units=None,
        reset_after=False,
        dropout=0.0,
        tie_embeddings=False,
        **kwargs,
    ):
        if attention_units is not None:
            check_int(type(self).__name__, "attention_units", attention_units)
        super().__init__(
            vocab_size,
            embedding_dim,
            units,
            maxout_units,
            reset_after,
            dropout,
            tie_embeddings=tie_embeddings,
            **kwargs,
        )
        self.attention_units = attention_units
        policy = self.dtype_policy
        self.attention = BahdanauAttention(attention_units or units, dtype=policy, name="attention")
        self.cell = self._gru_cell()
        self.W_s = keras.layers.Dense(units, activation="tanh", dtype=policy, name="W_s")
        self._add_deep_output()

    def _build_context_layers(self, memory_shape, encoder_states_shape):
        self.attention.build((None, self.units), memory_shape)
        self.W_s.build((None, encoder_states_shape[0][-1]))
        return memory_shape[-1]  # c_i has the memory's features

    def prepare(self, memory, source_mask, encoder_states):
        """cache: memory (B, Ts, Dm), mask (B, Ts), keys U_a h (B, Ts, n'), s_0 (B, n)."""
        return {
            "memory": memory,
            "mask": ops.cast(source_mask, "bool"),
            "keys": self.attention.compute_keys(memory),
            "s_0": self.W_s(encoder_states[0]),  # s_0 = tanh(W_s bwd_h_1)
        }

    def _step_inputs(self, ids, params, training=None):
        """E y (B, [Tt,] m) and its GRU input projection E y @ K_E + b (B, [Tt,] 3n)."""
        gru = params["gru"]
        embedded = self._embedded(ids, training)  # E y_{i-1}
        return embedded, project(embedded, gru["kernels"][0], gru["input_bias"])

    def _advance(self, inputs, state, cache, params, training=None):
        _, embedded_projection = inputs  # E y_{i-1} @ K_E + b (B, 3n)
        (s_prev,) = state  # (B, n)
        context, weights = self.attention(
            s_prev, cache["memory"], mask=cache["mask"], keys=cache["keys"]
        )  # c_i (B, Dm), alpha_i (B, Ts)
        context = ops.cast(context, self.compute_dtype)
        # s_i = GRU([E y_{i-1}; c_i], s_{i-1}): [E y; c] @ K = E y @ K_E + c @ K_c
        gru = params["gru"]
        x = embedded_projection + project(context, gru["kernels"][1], kernel_t=gru["kernels_t"][1])
        s_new = gru_update(self.cell, gru, x, s_prev)  # s_i (B, n)
        return (s_prev, context), (s_new,), weights

    def _readout(self, inputs, features, cache, training=None):
        embedded, _ = inputs
        s_prev, context = features
        return self._deep_output(s_prev, embedded, self.C_o(context), training)

    def get_config(self):
        return {**super().get_config(), "attention_units": self.attention_units}


@keras.saving.register_keras_serializable(package="zoo")
class RNNEncDecDecoder(GRUMaxoutDecoder):
    """GRU decoder conditioned on one fixed context vector (no attention): RNNencdec.

    Cho et al. 2014 §2.2 as used by Bahdanau et al. 2014 (§2.1, §4.2, appendix A.2.2 with a
    fixed c). With h_Tx the encoder's last state:

        c    = tanh(V h_Tx)                        (Cho et al. 2014, appendix A.1)
        s_0  = tanh(V' c)
        s_i  = GRU([E y_{i-1}; c], s_{i-1})
        t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c,  t_i = maxout(t~_i),  logits_i = W_o t_i

    Attention weights returned by `step` are zeros (B, Ts).

    Args:
        vocab_size: target vocabulary size.
        embedding_dim: target word embedding size.
        units: GRU decoder units.
        maxout_units: l (the readout has 2l features).
        context_units: size of c (default: units).
        reset_after: GRU variant; False (default) is the paper's gate order.
        dropout: rate in [0, 1) applied in training to the target embeddings E y and to the
            maxout output t_i before W_o (default 0.0: the paper mentions none; the base
            presets use 0.3, which small corpora such as Multi30k need).
        tie_embeddings: the output layer reads the target embeddings E instead of W_o
            (Press and Wolf 2017; see `GRUMaxoutDecoder`). Default False.

    Call and step: see `DecoderBase` and `GRUMaxoutDecoder`. encoder_states [h_Tx (B, n_enc)]; cache: memory, mask,
    context c (B, context_units), s_0 (B, units); state: (s_{i-1},).

    Example:
        decoder = RNNEncDecDecoder(30000, 620, 1000, 500, name="decoder")
        logits = decoder(target_ids, *GRUEncoder(30000, 620, 1000)(source_ids))
    """

    ENCODER_STATES = "[h_Tx]"

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        maxout_units,
        context_units=None,
        reset_after=False,
        dropout=0.0,
        tie_embeddings=False,
        **kwargs,
    ):
        if context_units is not None:
            check_int(type(self).__name__, "context_units", context_units)
        super().__init__(
            vocab_size,
            embedding_dim,
            units,
            maxout_units,
            reset_after,
            dropout,
            tie_embeddings=tie_embeddings,
            **kwargs,
        )
        self.context_units = context_units
        policy = self.dtype_policy
        self.V = keras.layers.Dense(
            context_units or units, activation="tanh", dtype=policy, name="V"
        )
        self.V_prime = keras.layers.Dense(units, activation="tanh", dtype=policy, name="V_prime")
        self.cell = self._gru_cell()
        self._add_deep_output()

    def _build_context_layers(self, memory_shape, encoder_states_shape):
        context_dim = self.context_units or self.units
        self.V.build((None, encoder_states_shape[0][-1]))
        self.V_prime.build((None, context_dim))
        return context_dim

    def prepare(self, memory, source_mask, encoder_states):
        """cache: memory, mask (B, Ts), context c = tanh(V h_Tx), s_0 = tanh(V' c), and
        c_projection = c @ K_c + b (B, 3 units), c's constant share of the GRU input."""
        context = self.V(encoder_states[0])  # (B, context_units)
        gru = self.loop_params(pretransposed=False)["gru"]
        return {
            "memory": memory,
            "mask": ops.cast(source_mask, "bool"),
            "context": context,
            "c_projection": project(
                ops.cast(context, self.compute_dtype), gru["kernels"][1], gru["input_bias"]
            ),
            "s_0": self.V_prime(context),
        }

    def _step_inputs(self, ids, params, training=None):
        """E y (B, [Tt,] m) and E y @ K_E (B, [Tt,] 3 units)."""
        embedded = self._embedded(ids, training)
        return embedded, project(embedded, params["gru"]["kernels"][0])

    def _advance(self, inputs, state, cache, params, training=None):
        _, embedded_projection = inputs
        (s_prev,) = state  # (B, n)
        # s_i = GRU([E y_{i-1}; c], s_{i-1}): [E y; c] @ K + b = E y @ K_E + (c @ K_c + b)
        x = embedded_projection + ops.cast(cache["c_projection"], self.compute_dtype)
        s_new = gru_update(self.cell, params["gru"], x, s_prev)
        weights = ops.zeros_like(cache["mask"], dtype=self.compute_dtype)  # (B, Ts)
        return (s_prev,), (s_new,), weights

    def _readout(self, inputs, features, cache, training=None):
        embedded, _ = inputs
        (s_prev,) = features  # (B, [Tt,] n)
        context = self.C_o(ops.cast(cache["context"], self.compute_dtype))  # C_o c (B, 2l)
        if len(s_prev.shape) == 3:
            context = ops.expand_dims(context, 1)  # the same c at every step
        return self._deep_output(s_prev, embedded, context, training)

    def get_config(self):
        return {**super().get_config(), "context_units": self.context_units}
