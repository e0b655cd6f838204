"""The GRU encoders of Bahdanau et al. (2014), over the base they share (embeddings, GRU
layers, masks): `GRUEncoder`, RNNencdec's unidirectional encoder (Cho et al. 2014;
Bahdanau et al. 2014 §2.1), and `BidirectionalGRUEncoder`, RNNsearch's (§3.2).
"""

import keras
from keras import ops

from zoo.checks import check_ids_rank, check_rate, check_sizes
from zoo.constants import PAD_ID
from zoo.models.recurrence import lengths_from_mask, reverse_padded, run_rnn
from zoo.models.tying import source_embedding


class GRUEncoderBase(keras.layers.Layer):
    """Base class of `GRUEncoder` (RNNencdec) and `BidirectionalGRUEncoder` (RNNsearch).

    Creates the source embedding E, dropout on it, and one Keras GRU layer of `units` per name
    in the class attribute `GRU_NAMES` (in that order), all reading the embedded source.
    `MEMORY_FACTOR` is the memory's features per unit (2 when two directions are concatenated).
    The subclass writes `call` with `_embedded_source` and `_masked`; its encoder_states are
    one (B, units) tensor.

    Args: vocab_size, embedding_dim, units, reset_after (GRU variant; True is the one cuDNN
    runs), dropout (on the source embeddings in training), as the subclasses document;
    shared_embedding: no E of its own, the decoder's target embeddings read the source
    (three-way tying, `zoo.models.ThreeWayTiedModel`).
    """

    GRU_NAMES = ()  # the subclass's GRU layers: attribute and layer names
    MEMORY_FACTOR = 1

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        reset_after=True,
        dropout=0.0,
        shared_embedding=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        sizes = check_sizes(name, vocab_size, embedding_dim, units)
        self.vocab_size, self.embedding_dim, self.units = sizes
        self.reset_after = bool(reset_after)
        self.dropout = check_rate(name, "dropout", dropout)
        self.shared_embedding = bool(shared_embedding)
        if not self.shared_embedding:
            self.embedding = keras.layers.Embedding(
                vocab_size, embedding_dim, dtype=self.dtype_policy, name="E"
            )
        self.embedding_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="embedding_dropout"
        )
        for gru_name in self.GRU_NAMES:
            gru = keras.layers.GRU(
                units,
                return_sequences=True,
                return_state=True,
                reset_after=self.reset_after,
                dtype=self.dtype_policy,
                name=gru_name,
            )
            setattr(self, gru_name, gru)

    def build(self, source_ids_shape):
        check_ids_rank(type(self).__name__, "source_ids", source_ids_shape)
        if not self.shared_embedding:
            self.embedding.build(source_ids_shape)
        sequence_shape = (source_ids_shape[0], source_ids_shape[1], self.embedding_dim)
        for gru_name in self.GRU_NAMES:
            getattr(self, gru_name).build(sequence_shape)

    def _embedded_source(self, source_ids, training):
        """The source mask, bool (B, Ts), and the embedded source drop(E x) (B, Ts, m)."""
        source_ids = ops.cast(source_ids, "int32")
        mask = ops.not_equal(source_ids, PAD_ID)  # (B, Ts)
        embedded = source_embedding(self)(source_ids)
        return mask, self.embedding_dropout(embedded, training=training)

    @staticmethod
    def _masked(memory, mask):
        """memory (B, Ts, D) with zeros at padding."""
        return memory * ops.cast(mask, memory.dtype)[:, :, None]

    def compute_output_spec(self, source_ids, training=None):
        batch, length = source_ids.shape
        features = self.MEMORY_FACTOR * self.units
        return (
            keras.KerasTensor((batch, length, features), dtype=self.compute_dtype),
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
            "shared_embedding": self.shared_embedding,
        }


@keras.saving.register_keras_serializable(package="zoo")
class GRUEncoder(GRUEncoderBase):
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

    GRU_NAMES = ("gru",)

    def call(self, source_ids, training=None):
        mask, x = self._embedded_source(source_ids, training)  # (B, Ts), (B, Ts, m)
        memory, h_last = run_rnn(self.gru, x, mask, training=training)  # (B, Ts, n), (B, n)
        return self._masked(memory, mask), mask, [h_last]


@keras.saving.register_keras_serializable(package="zoo")
class BidirectionalGRUEncoder(GRUEncoderBase):
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

    GRU_NAMES = ("forward_gru", "backward_gru")
    MEMORY_FACTOR = 2  # h_j = [fwd_h_j; bwd_h_j]

    def call(self, source_ids, training=None):
        mask, x = self._embedded_source(source_ids, training)  # (B, Ts), (B, Ts, m)
        lengths = lengths_from_mask(mask)  # (B,)
        forward, _ = run_rnn(self.forward_gru, x, mask, training=training)  # (B, Ts, n)
        backward_in = reverse_padded(x, lengths)  # x_Tx .. x_1, padding kept at the end
        backward, bwd_h_1 = run_rnn(self.backward_gru, backward_in, mask, training=training)
        backward = reverse_padded(backward, lengths)  # backward[:, j] = bwd_h_j
        memory = ops.concatenate([forward, backward], axis=-1)  # (B, Ts, 2n)
        return self._masked(memory, mask), mask, [bwd_h_1]
