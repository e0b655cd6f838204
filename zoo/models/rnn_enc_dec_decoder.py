"""The RNNencdec decoder (Cho et al. 2014), Bahdanau et al. 2014's baseline (§4.2, A.2)."""

import keras
from keras import ops

from zoo.checks import check_int
from zoo.models.gru_maxout_decoder import GRUMaxoutDecoder
from zoo.models.recurrence import gru_update, project


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
