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


def with_tied_embeddings(model):
    """A new, untrained translation model: `model`'s configuration with the decoder's
    `tie_embeddings=True` (weights drawn anew). What `--tie-embeddings` does to a recipe's
    model, whatever builder made it; a model already tied is returned as it is.

    Raises ValueError when `model` has no layer "decoder" taking `tie_embeddings`.
    """
    config = model.get_config()
    decoders = [layer for layer in config.get("layers", ()) if layer.get("name") == "decoder"]
    if len(decoders) != 1 or "tie_embeddings" not in decoders[0]["config"]:
        raise ValueError(
            f"with_tied_embeddings needs a translation model whose layer 'decoder' takes "
            f"tie_embeddings (LuongDecoder, BahdanauDecoder, RNNEncDecDecoder); got model "
            f"{model.name!r} with layers {[layer.name for layer in model.layers]}."
        )
    if decoders[0]["config"]["tie_embeddings"]:
        return model
    decoders[0]["config"]["tie_embeddings"] = True
    return type(model).from_config(config)
