"""The bidirectional RNN encoder of RNNsearch (Bahdanau et al. 2014, §3.2)."""

import keras
from keras import ops

from zoo.checks import check_int, check_rate
from zoo.constants import PAD_ID
from zoo.models.checks import check_ids_rank
from zoo.models.recurrence import run_rnn
from zoo.models.reversal import lengths_from_mask, reverse_padded


@keras.saving.register_keras_serializable(package="zoo")
class BidirectionalGRUEncoder(keras.layers.Layer):
    """Bidirectional GRU encoder: Bahdanau et al. 2014, §3.2 and appendix A.2.1.

    The forward GRU reads x_1..x_Tx, the backward GRU reads x_Tx..x_1, and the annotation of
    source word j is h_j = [fwd_h_j; bwd_h_j]. The backward direction reverses each sentence
    within its own length (padding stays at the end), so that padding never enters a real
    annotation and right-padded batches keep cuDNN usable.

    Args:
        vocab_size: source vocabulary size (ids 0-3 reserved, 0 = padding).
        embedding_dim: m, the size of the source word embeddings E x_j.
        units: n, GRU units per direction (memory has 2n features).
        reset_after: GRU variant; True (the default) is the one cuDNN runs.
        dropout: rate in [0, 1) on the source embeddings in training (default 0.0: the paper
            mentions none; the base presets use 0.3).

    Call: `memory, source_mask, encoder_states = encoder(source_ids, training=None)`
        source_ids (B, Ts) int, right-padded with 0;
        memory (B, Ts, 2n) (zeros at padding), source_mask bool (B, Ts),
        encoder_states [bwd_h_1 (B, n)]: the backward state at the first word, from which
        the decoder computes s_0 = tanh(W_s bwd_h_1) (appendix A.2.2).

    Example:
        encoder = BidirectionalGRUEncoder(30000, 620, 1000, name="encoder")
        memory, mask, states = encoder(source_ids)  # (B, Ts, 2000), (B, Ts), [(B, 1000)]
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
        self.forward_gru = keras.layers.GRU(
            units,
            return_sequences=True,
            return_state=True,
            reset_after=self.reset_after,
            dtype=self.dtype_policy,
            name="forward_gru",
        )
        self.backward_gru = keras.layers.GRU(
            units,
            return_sequences=True,
            return_state=True,
            reset_after=self.reset_after,
            dtype=self.dtype_policy,
            name="backward_gru",
        )

    def build(self, source_ids_shape):
        check_ids_rank(type(self).__name__, "source_ids", source_ids_shape)
        self.embedding.build(source_ids_shape)
        sequence_shape = (source_ids_shape[0], source_ids_shape[1], self.embedding_dim)
        self.forward_gru.build(sequence_shape)
        self.backward_gru.build(sequence_shape)

    def call(self, source_ids, training=None):
        source_ids = ops.cast(source_ids, "int32")
        mask = ops.not_equal(source_ids, PAD_ID)  # (B, Ts)
        lengths = lengths_from_mask(mask)  # (B,)
        x = self.embedding_dropout(self.embedding(source_ids), training=training)  # (B, Ts, m)
        forward, _ = run_rnn(self.forward_gru, x, mask, training=training)  # (B, Ts, n)
        backward_in = reverse_padded(x, lengths)  # x_Tx .. x_1, padding kept at the end
        backward, bwd_h_1 = run_rnn(self.backward_gru, backward_in, mask, training=training)
        backward = reverse_padded(backward, lengths)  # backward[:, j] = bwd_h_j
        memory = ops.concatenate([forward, backward], axis=-1)  # (B, Ts, 2n)
        memory = memory * ops.cast(mask, memory.dtype)[:, :, None]
        return memory, mask, [bwd_h_1]

    def compute_output_spec(self, source_ids, training=None):
        batch, length = source_ids.shape
        return (
            keras.KerasTensor((batch, length, 2 * self.units), dtype=self.compute_dtype),
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
