"""The RNNsearch decoder of Bahdanau, Cho and Bengio (2014), §3.1 and appendix A.2.2."""

import keras
from keras import ops

from zoo.checks import check_int, check_rate
from zoo.layers import BahdanauAttention
from zoo.models.decoder_base import DecoderBase
from zoo.models.maxout import Maxout
from zoo.models.recurrence import gru_params, gru_update, project


@keras.saving.register_keras_serializable(package="zoo")
class BahdanauDecoder(DecoderBase):
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

    Call: `logits = decoder(target_ids, memory, source_mask, encoder_states, training=None)`
        target_ids (B, Tt) int (START_ID first), memory (B, Ts, 2n_enc), source_mask (B, Ts),
        encoder_states [bwd_h_1 (B, n_enc)] -> logits (B, Tt, vocab_size).
    Step: see `DecoderBase`. cache: memory, mask, keys (U_a h_j), s_0; state: (s_{i-1},).

    Example:
        decoder = BahdanauDecoder(30000, 620, 1000, 500, name="decoder")
        logits = decoder(target_ids, *encoder(source_ids))  # (B, Tt, 30000)
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        maxout_units,
        attention_units=None,
        reset_after=False,
        dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.vocab_size = check_int(name, "vocab_size", vocab_size)
        self.embedding_dim = check_int(name, "embedding_dim", embedding_dim)
        self.units = check_int(name, "units", units)
        self.maxout_units = check_int(name, "maxout_units", maxout_units)
        if attention_units is not None:
            check_int(name, "attention_units", attention_units)
        self.attention_units = attention_units
        self.reset_after = bool(reset_after)
        self.dropout = check_rate(name, "dropout", dropout)
        policy = self.dtype_policy
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, dtype=policy, name="E")
        self.attention = BahdanauAttention(attention_units or units, dtype=policy, name="attention")
        self.cell = keras.layers.GRUCell(
            units, reset_after=self.reset_after, dtype=policy, name="gru_cell"
        )
        self.W_s = keras.layers.Dense(units, activation="tanh", dtype=policy, name="W_s")
        self.U_o = keras.layers.Dense(2 * maxout_units, dtype=policy, name="U_o")
        self.V_o = keras.layers.Dense(2 * maxout_units, use_bias=False, dtype=policy, name="V_o")
        self.C_o = keras.layers.Dense(2 * maxout_units, use_bias=False, dtype=policy, name="C_o")
        self.maxout = Maxout(2, dtype=policy, name="maxout")
        self.W_o = keras.layers.Dense(vocab_size, dtype=policy, name="W_o")
        # Dropout on E y and on t_i, both outside the recurrence (no per-step masks).
        self.embedding_dropout = keras.layers.Dropout(
            self.dropout, dtype=policy, name="embedding_dropout"
        )
        self.readout_dropout = keras.layers.Dropout(
            self.dropout, dtype=policy, name="readout_dropout"
        )

    def build(self, target_ids_shape, memory_shape, source_mask_shape, encoder_states_shape):
        self._check_call_inputs(target_ids_shape, memory_shape, source_mask_shape)
        if len(encoder_states_shape) != 1:
            raise ValueError(
                f"BahdanauDecoder expects encoder_states [bwd_h_1], got {len(encoder_states_shape)} "
                "tensors."
            )
        memory_dim = memory_shape[-1]
        self.embedding.build(target_ids_shape)
        self.attention.build((None, self.units), memory_shape)
        self.cell.build((None, self.embedding_dim + memory_dim))
        self.W_s.build((None, encoder_states_shape[0][-1]))
        self.U_o.build((None, self.units))
        self.V_o.build((None, self.embedding_dim))
        self.C_o.build((None, memory_dim))
        self.W_o.build((None, self.maxout_units))

    def prepare(self, memory, source_mask, encoder_states):
        """cache: memory (B, Ts, Dm), mask (B, Ts), keys U_a h (B, Ts, n'), s_0 (B, n)."""
        return {
            "memory": memory,
            "mask": ops.cast(source_mask, "bool"),
            "keys": self.attention.compute_keys(memory),
            "s_0": self.W_s(encoder_states[0]),  # s_0 = tanh(W_s bwd_h_1)
        }

    def initial_state(self, cache):
        return (ops.cast(cache["s_0"], self.compute_dtype),)

    def loop_params(self):
        """The GRU's weights split for [E y; c]: kernels [K_E, K_c] (K = [K_E; K_c])."""
        memory_dim = self.cell.kernel.shape[0] - self.embedding_dim
        sizes = [self.embedding_dim, memory_dim]
        return {"gru": gru_params(self.cell, sizes, self.compute_dtype)}

    def _step_inputs(self, ids, params, training=None):
        """E y (B, [Tt,] m) and its GRU input projection E y @ K_E + b (B, [Tt,] 3n)."""
        gru = params["gru"]
        embedded = self.embedding_dropout(self.embedding(ids), training=training)  # E y_{i-1}
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
        readout = self.U_o(s_prev) + self.V_o(embedded) + self.C_o(context)  # t~_i (.., 2l)
        t = self.readout_dropout(self.maxout(readout), training=training)  # t_i (..., l)
        return self.W_o(t)  # W_o t_i: (..., V)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "maxout_units": self.maxout_units,
            "attention_units": self.attention_units,
            "reset_after": self.reset_after,
            "dropout": self.dropout,
        }
