"""The parts of Luong et al. (2015)'s stacked LSTMs that the encoder and the decoder share
(§2, §4.1): the argument check of the depth, the embedding, the layers and their dropouts."""

import keras

from zoo.checks import check_int
from zoo.layers.initializers import uniform_or_default

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
