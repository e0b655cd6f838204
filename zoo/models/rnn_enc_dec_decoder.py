"""The RNNencdec decoder (Cho et al. 2014), Bahdanau et al. 2014's baseline (§4.2, A.2)."""

import keras
from keras import ops

from zoo.checks import check_int, check_rate
from zoo.models.decoder_base import DecoderBase
from zoo.models.maxout import Maxout
from zoo.models.recurrence import gru_params, gru_update, project


@keras.saving.register_keras_serializable(package="zoo")
class RNNEncDecDecoder(DecoderBase):
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

    Call and step: see `DecoderBase`. encoder_states [h_Tx (B, n_enc)]; cache: memory, mask,
    context c (B, context_units), s_0 (B, units); state: (s_{i-1},).

    Example:
        decoder = RNNEncDecDecoder(30000, 620, 1000, 500, name="decoder")
        logits = decoder(target_ids, *GRUEncoder(30000, 620, 1000)(source_ids))
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        maxout_units,
        context_units=None,
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
        if context_units is not None:
            check_int(name, "context_units", context_units)
        self.context_units = context_units
        self.reset_after = bool(reset_after)
        self.dropout = check_rate(name, "dropout", dropout)
        policy = self.dtype_policy
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, dtype=policy, name="E")
        self.V = keras.layers.Dense(
            context_units or units, activation="tanh", dtype=policy, name="V"
        )
        self.V_prime = keras.layers.Dense(units, activation="tanh", dtype=policy, name="V_prime")
        self.cell = keras.layers.GRUCell(
            units, reset_after=self.reset_after, dtype=policy, name="gru_cell"
        )
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
                f"RNNEncDecDecoder expects encoder_states [h_Tx], got {len(encoder_states_shape)} "
                "tensors."
            )
        context_dim = self.context_units or self.units
        self.embedding.build(target_ids_shape)
        self.V.build((None, encoder_states_shape[0][-1]))
        self.V_prime.build((None, context_dim))
        self.cell.build((None, self.embedding_dim + context_dim))
        self.U_o.build((None, self.units))
        self.V_o.build((None, self.embedding_dim))
        self.C_o.build((None, context_dim))
        self.W_o.build((None, self.maxout_units))

    def prepare(self, memory, source_mask, encoder_states):
        """cache: memory, mask (B, Ts), context c = tanh(V h_Tx), s_0 = tanh(V' c), and
        c_projection = c @ K_c + b (B, 3 units), c's constant share of the GRU input."""
        context = self.V(encoder_states[0])  # (B, context_units)
        gru = self.loop_params()["gru"]
        return {
            "memory": memory,
            "mask": ops.cast(source_mask, "bool"),
            "context": context,
            "c_projection": project(
                ops.cast(context, self.compute_dtype), gru["kernels"][1], gru["input_bias"]
            ),
            "s_0": self.V_prime(context),
        }

    def initial_state(self, cache):
        return (ops.cast(cache["s_0"], self.compute_dtype),)

    def loop_params(self):
        """The GRU's weights split for [E y; c]: kernels [K_E, K_c] (K = [K_E; K_c])."""
        context_dim = self.cell.kernel.shape[0] - self.embedding_dim
        sizes = [self.embedding_dim, context_dim]
        return {"gru": gru_params(self.cell, sizes, self.compute_dtype)}

    def _step_inputs(self, ids, params, training=None):
        """E y (B, [Tt,] m) and E y @ K_E (B, [Tt,] 3 units)."""
        embedded = self.embedding_dropout(self.embedding(ids), training=training)
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
        readout = self.U_o(s_prev) + self.V_o(embedded) + context  # t~_i
        t = self.readout_dropout(self.maxout(readout), training=training)  # t_i (..., l)
        return self.W_o(t)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "maxout_units": self.maxout_units,
            "context_units": self.context_units,
            "reset_after": self.reset_after,
            "dropout": self.dropout,
        }
