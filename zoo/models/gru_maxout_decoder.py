"""What the two GRU decoders of Bahdanau et al. (2014) share: a GRU reading [E y; c] and the
maxout deep output (appendix A.2.2)."""

import keras
from keras import ops

from zoo.checks import check_int, check_rate
from zoo.models.checks import check_sizes
from zoo.models.decoder_base import DecoderBase
from zoo.models.maxout import Maxout
from zoo.models.recurrence import gru_params
from zoo.models.tied_output import readout_projection, tied_logits


class GRUMaxoutDecoder(DecoderBase):
    """Base class of `BahdanauDecoder` (RNNsearch) and `RNNEncDecDecoder` (RNNencdec).

    Both run a GRU over [E y_{i-1}; c_i] and read out through a maxout layer:

        s_i  = GRU([E y_{i-1}; c_i], s_{i-1})
        t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i,  t_i = maxout(t~_i),  logits_i = W_o t_i

    with dropout (rate `dropout`, in training) on E y and on t_i. With `tie_embeddings` the
    output layer reads the target embeddings instead of W_o (Press and Wolf 2017):
    logits_i = [t_i W_p] E^T + b, through a projection W_p (maxout_units -> embedding_dim,
    no bias) only when the sizes differ (`zoo.models.tied_output`). They differ in the context
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
