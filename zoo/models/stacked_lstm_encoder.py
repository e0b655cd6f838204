"""The stacked LSTM encoder of Luong, Pham and Manning (2015), §2 and §4.1, and the parts of
the stacked LSTMs that the encoder and the decoder share: the argument check of the depth,
the embedding, the layers and their dropouts.
"""

import keras
from keras import ops

from zoo.checks import check_ids_rank, check_int, check_rate, check_sizes
from zoo.constants import PAD_ID
from zoo.layers.initializers import uniform_or_default
from zoo.models.recurrence import lengths_from_mask, reverse_padded, run_rnn
from zoo.models.tying import source_embedding

MAX_LAYERS = 4  # the paper's range: 1 to 4 layers


def check_num_layers(owner, num_layers):
    """num_layers, an int from 1 to MAX_LAYERS (else a ValueError naming `owner`)."""
    check_int(owner, "num_layers", num_layers)
    if num_layers > MAX_LAYERS:
        raise ValueError(
            f"{owner}: num_layers must be 1 to {MAX_LAYERS} (the paper's range), got {num_layers}."
        )
    return num_layers


def uniform_embedding(vocab_size, embedding_dim, init_scale, dtype):
    """The embedding "E", drawn uniformly in [-init_scale, init_scale] (Keras's default
    when init_scale is 0)."""
    return keras.layers.Embedding(
        vocab_size,
        embedding_dim,
        embeddings_initializer=uniform_or_default(init_scale, "uniform"),
        dtype=dtype,
        name="E",
    )


def stack_lstm(units, name, kernel_initializer, recurrent_initializer, dtype):
    """One layer of a stack: a Keras LSTM returning its sequence and final states."""
    return keras.layers.LSTM(
        units,
        return_sequences=True,
        return_state=True,
        kernel_initializer=kernel_initializer,
        recurrent_initializer=recurrent_initializer,
        dtype=dtype,
        name=name,
    )


def stack_dropouts(rate, num_layers, dtype):
    """`dropout_0` .. `dropout_{L-1}`: dropouts[0] on the embeddings (layer 1's input),
    dropouts[i] on layer i+1's input."""
    return [keras.layers.Dropout(rate, dtype=dtype, name=f"dropout_{i}") for i in range(num_layers)]


@keras.saving.register_keras_serializable(package="zoo")
class StackedLSTMEncoder(keras.layers.Layer):
    """Stacked LSTM encoder: Luong et al. 2015, §2 (stacking LSTM layers, fig. 1) and §4.1
    (1-4 layers, source reversal, dropout 0.2, uniform init in [-0.1, 0.1]).

    With `bidirectional=True` (not the paper's: its encoder reads one way) layer 1 is two
    LSTMs of units / 2, one reading the sentence forwards and one backwards, whose states are
    concatenated, [fwd_h_j; bwd_h_j], as in Bahdanau et al. 2014 §3.2 and OpenNMT's `brnn`
    encoder; its final states are the two directions' final states concatenated. Layers 2..L
    read that sequence as before, so every size the decoder sees stays `units`.

    With `reverse_source=True` each sentence is reversed within its own length before the
    LSTMs read it (Sutskever et al. 2014), and the top layer's outputs are reversed back, so
    that memory[:, j] is always the state at source word j (what local attention's positions
    and the attention plots assume). Dropout is applied to every non-recurrent connection
    (Zaremba et al. 2015, which Luong et al. §4.1 follow): the embeddings' output (the input
    of layer 1) and the input of layers 2..L.

    Args:
        vocab_size: source vocabulary size (0 = padding).
        embedding_dim: size of the source word embeddings.
        units: LSTM units per layer.
        num_layers: 1 to 4 stacked layers.
        dropout: dropout rate on the embeddings and between layers, in [0, 1).
        reverse_source: read each sentence backwards (within its length).
        init_scale: > 0 draws embeddings and LSTM kernels uniformly in [-init_scale,
            init_scale] (the paper: 0.1); 0 keeps the Keras defaults.
        bidirectional: layer 1 reads both ways (units / 2 per direction; units must be even).
        shared_embedding: no embedding of its own: the source is read with the decoder's
            target embedding matrix (three-way tying, `zoo.models.ThreeWayTiedModel`).

    Call: `memory, source_mask, encoder_states = encoder(source_ids, training=None)`
        memory (B, Ts, units): top layer states aligned with source positions (zeros at
        padding); source_mask bool (B, Ts); encoder_states [h_1, c_1, ..., h_L, c_L], each
        (B, units): the final states of every layer, the decoder's initial states.

    Example:
        encoder = StackedLSTMEncoder(50000, 1000, 1000, num_layers=4, dropout=0.2,
                                     reverse_source=True, init_scale=0.1, name="encoder")
        memory, mask, states = encoder(source_ids)  # (B, Ts, 1000), (B, Ts), 8 x (B, 1000)
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        num_layers=1,
        dropout=0.0,
        reverse_source=False,
        init_scale=0.0,
        bidirectional=False,
        shared_embedding=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        sizes = check_sizes(name, vocab_size, embedding_dim, units)
        self.vocab_size, self.embedding_dim, self.units = sizes
        self.num_layers = check_num_layers(name, num_layers)
        self.dropout = check_rate(name, "dropout", dropout)
        self.reverse_source = bool(reverse_source)
        self.init_scale = float(init_scale)
        uniform_or_default(self.init_scale, None)  # validates init_scale
        self.bidirectional = bool(bidirectional)
        if self.bidirectional and units % 2:
            raise ValueError(
                f"{name}: a bidirectional layer 1 has units / 2 per direction, so units must "
                f"be even; got units={units}."
            )
        policy = self.dtype_policy
        self.shared_embedding = bool(shared_embedding)
        if not self.shared_embedding:
            self.embedding = uniform_embedding(vocab_size, embedding_dim, self.init_scale, policy)
        first = [("lstm_1_forward", units // 2), ("lstm_1_backward", units // 2)]
        layers = (first if self.bidirectional else [("lstm_1", units)]) + [
            (f"lstm_{i + 1}", units) for i in range(1, num_layers)
        ]
        self.lstms = [self._lstm(layer_name, layer_units) for layer_name, layer_units in layers]
        self.dropouts = stack_dropouts(self.dropout, num_layers, policy)

    def _lstm(self, name, units):
        """A layer with initializers of its own (each drawn from its own seed)."""
        kernel_initializer = uniform_or_default(self.init_scale, "glorot_uniform")
        recurrent_initializer = uniform_or_default(self.init_scale, "orthogonal")
        return stack_lstm(units, name, kernel_initializer, recurrent_initializer, self.dtype_policy)

    def build(self, source_ids_shape):
        check_ids_rank(type(self).__name__, "source_ids", source_ids_shape)
        if not self.shared_embedding:
            self.embedding.build(source_ids_shape)
        batch, length = source_ids_shape
        first = 2 if self.bidirectional else 1
        for lstm in self.lstms[:first]:
            lstm.build((batch, length, self.embedding_dim))
        for lstm in self.lstms[first:]:
            lstm.build((batch, length, self.units))

    def call(self, source_ids, training=None):
        source_ids = ops.cast(source_ids, "int32")
        mask = ops.not_equal(source_ids, PAD_ID)  # (B, Ts)
        lengths = lengths_from_mask(mask)
        if self.reverse_source:
            source_ids = reverse_padded(source_ids, lengths)  # backwards, padding at the end
        # The layers run time-major: no transposes between them, one for the memory.
        x = source_embedding(self)(ops.transpose(source_ids))  # (Ts, B, m)
        x = self.dropouts[0](x, training=training)
        if self.bidirectional:
            x, states = self._bidirectional_layer(x, mask, lengths, training)
        else:
            x, h, c = run_rnn(self.lstms[0], x, mask, training=training, time_major=True)
            states = [h, c]
        upper = self.lstms[2:] if self.bidirectional else self.lstms[1:]
        for dropout, lstm in zip(self.dropouts[1:], upper, strict=True):
            x = dropout(x, training=training)
            # (Ts, B, n), (B, n), (B, n)
            x, h, c = run_rnn(lstm, x, mask, training=training, time_major=True)
            states += [h, c]
        x = ops.swapaxes(x, 0, 1)  # (B, Ts, n)
        if self.reverse_source:
            x = reverse_padded(x, lengths)  # memory[:, j] belongs to source word j
        memory = x * ops.cast(mask, x.dtype)[:, :, None]
        return memory, mask, states

    def _bidirectional_layer(self, x, mask, lengths, training):
        """Layer 1 both ways: x (Ts, B, m) -> (Ts, B, n) = [fwd; bwd], states [h, c]."""
        forward, backward = self.lstms[0], self.lstms[1]
        fwd, fwd_h, fwd_c = run_rnn(forward, x, mask, training=training, time_major=True)
        # The backward LSTM reads each sentence from its last word (padding stays at the end).
        x_reversed = ops.swapaxes(reverse_padded(ops.swapaxes(x, 0, 1), lengths), 0, 1)
        bwd, bwd_h, bwd_c = run_rnn(backward, x_reversed, mask, training=training, time_major=True)
        bwd = ops.swapaxes(reverse_padded(ops.swapaxes(bwd, 0, 1), lengths), 0, 1)
        states = [ops.concatenate([fwd_h, bwd_h], -1), ops.concatenate([fwd_c, bwd_c], -1)]
        return ops.concatenate([fwd, bwd], axis=-1), states

    def compute_output_spec(self, source_ids, training=None):
        batch, length = source_ids.shape
        return (
            keras.KerasTensor((batch, length, self.units), dtype=self.compute_dtype),
            keras.KerasTensor((batch, length), dtype="bool"),
            [  # distinct objects: the functional graph tells outputs apart by identity
                keras.KerasTensor((batch, self.units), dtype=self.compute_dtype)
                for _ in range(2 * self.num_layers)
            ],
        )

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
            "reverse_source": self.reverse_source,
            "init_scale": self.init_scale,
            "bidirectional": self.bidirectional,
            "shared_embedding": self.shared_embedding,
        }
