"""The RNNsearch decoder of Bahdanau, Cho and Bengio (2014), §3.1 and appendix A.2.2."""

import keras
from keras import ops

from zoo.checks import check_int
from zoo.layers import BahdanauAttention
from zoo.models.gru_maxout_decoder import GRUMaxoutDecoder
from zoo.models.recurrence import gru_update, project


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
