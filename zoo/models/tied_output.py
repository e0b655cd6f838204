"""Tied output embeddings (Press and Wolf 2017; Inan et al. 2017): the decoder's output
layer reads the target embedding matrix E (V, m) instead of a weight of its own,

    logits = x E^T + b                  when the readout x has m features,
    logits = (x W_p) E^T + b            else, through a projection W_p (d, m) without bias

(the readout x is Luong's attentional vector h~_t, size `units`, or Bahdanau's maxout
output t_i, size `maxout_units`). The decoder owns the bias b (V,) and W_p; E stays the
embedding layer's one variable, so the output layer adds V x m fewer weights (less the
projection's d x m).
"""

import keras
from keras import ops


def readout_projection(readout_dim, embedding_dim, kernel_initializer, dtype):
    """W_p, the Dense (readout_dim -> embedding_dim, no bias) that maps the readout to the
    embedding size before the tied output layer; None when the sizes are equal."""
    if readout_dim == embedding_dim:
        return None
    return keras.layers.Dense(
        embedding_dim,
        use_bias=False,
        kernel_initializer=kernel_initializer,
        dtype=dtype,
        name="W_p",
    )


def tied_logits(x, embedding, bias, projection, dtype):
    """logits (..., V) = [x W_p] E^T + b for x (..., d), E the `embedding` layer's matrix."""
    if projection is not None:
        x = projection(x)  # (..., m)
    matrix = ops.cast(embedding.embeddings, dtype)  # E (V, m)
    return ops.matmul(x, ops.transpose(matrix)) + ops.cast(bias, dtype)
