"""What the two GRU encoders of Bahdanau et al. (2014) share: embeddings, GRU layers, masks."""

import keras
from keras import ops

from zoo.checks import check_rate
from zoo.constants import PAD_ID
from zoo.models.checks import check_ids_rank, check_sizes
from zoo.models.tied_output import source_embedding


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
