"""The unidirectional GRU encoder of RNNencdec (Cho et al. 2014; Bahdanau et al. 2014 §2.1)."""

import keras
from keras import ops

from zoo.checks import check_int, check_rate
from zoo.constants import PAD_ID
from zoo.models.checks import check_ids_rank
from zoo.models.recurrence import run_rnn


@keras.saving.register_keras_serializable(package="zoo")
class GRUEncoder(keras.layers.Layer):
    """Unidirectional GRU encoder of the RNNencdec baseline (Bahdanau et al. 2014 §2.1, §4.2;
    Cho et al. 2014 §2.2): h_t = f(x_t, h_{t-1}); the decoder turns the last state h_Tx into
    the fixed context vector c = tanh(V h_Tx) (see `RNNEncDecDecoder`).

    Args:
        vocab_size: source vocabulary size (0 = padding).
        embedding_dim: size of the source word embeddings.
        units: GRU units.
        reset_after: GRU variant; True (the default) is the one cuDNN runs.
        dropout: rate in [0, 1) on the source embeddings in training (default 0.0: the paper
            mentions none; the base presets use 0.3).

    Call: `memory, source_mask, encoder_states = encoder(source_ids, training=None)`
        memory (B, Ts, units) (zeros at padding), source_mask bool (B, Ts),
        encoder_states [h_Tx (B, units)], the state after each sentence's last real word.

    Example:
        memory, mask, [h_last] = GRUEncoder(30000, 620, 1000, name="encoder")(source_ids)
    """

    def __init__(self, vocab_size, embedding_dim, units, reset_after=True, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.vocab_size = check_int(name, "vocab_size", vocab_size)
        self.embedding_dim = check_int(name, "embedding_dim", embedding_dim)
        self.units = check_int(name, "units", units)
        self.reset_after = bool(reset_after)
        self.dropout = check_rate(name, "dropout", dropout)
        self.embedding = keras.layers.Embedding(
            vocab_size, embedding_dim, dtype=self.dtype_policy, name="E"
        )
        self.embedding_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="embedding_dropout"
        )
        self.gru = keras.layers.GRU(
            units,
            return_sequences=True,
            return_state=True,
            reset_after=self.reset_after,
            dtype=self.dtype_policy,
            name="gru",
        )

    def build(self, source_ids_shape):
        check_ids_rank(type(self).__name__, "source_ids", source_ids_shape)
        self.embedding.build(source_ids_shape)
        self.gru.build((source_ids_shape[0], source_ids_shape[1], self.embedding_dim))

    def call(self, source_ids, training=None):
        source_ids = ops.cast(source_ids, "int32")
        mask = ops.not_equal(source_ids, PAD_ID)  # (B, Ts)
        x = self.embedding_dropout(self.embedding(source_ids), training=training)  # (B, Ts, m)
        memory, h_last = run_rnn(self.gru, x, mask, training=training)  # (B, Ts, n), (B, n)
        memory = memory * ops.cast(mask, memory.dtype)[:, :, None]
        return memory, mask, [h_last]

    def compute_output_spec(self, source_ids, training=None):
        batch, length = source_ids.shape
        return (
            keras.KerasTensor((batch, length, self.units), dtype=self.compute_dtype),
            keras.KerasTensor((batch, length), dtype="bool"),
            [keras.KerasTensor((batch, self.units), dtype=self.compute_dtype)],
        )

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "reset_after": self.reset_after,
            "dropout": self.dropout,
        }
