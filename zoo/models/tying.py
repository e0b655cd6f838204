"""Tied embeddings (Press and Wolf 2017; Inan et al. 2017).

The decoder's output layer reads the target embedding matrix E (V, m) instead of a weight
of its own,

    logits = x E^T + b                  when the readout x has m features,
    logits = (x W_p) E^T + b            else, through a projection W_p (d, m) without bias

(the readout x is Luong's attentional vector h~_t, size `units`, or Bahdanau's maxout
output t_i, size `maxout_units`). The decoder owns the bias b (V,) and W_p; E stays the
embedding layer's one variable, so the output layer adds V x m fewer weights (less the
projection's d x m).

Three-way tied embeddings (Press and Wolf 2017, "three-way weight tying", `ThreeWayTiedModel`):
one matrix for the source embeddings, the target embeddings and the output layer, over one
vocabulary. `with_tied_embeddings` ties a recipe's model either way.
"""

import keras
from keras import ops

_SHARED = "_tied_source_embedding"  # an encoder's link to the decoder's E (not tracked)


def source_embedding(encoder):
    """The embedding layer an encoder reads the source with: its own, or with
    `shared_embedding=True` the decoder's target embedding (three-way tying), linked by
    `share_source_embedding` when the model is made."""
    if not encoder.shared_embedding:
        return encoder.embedding
    layer = encoder.__dict__.get(_SHARED)
    if layer is None:
        raise ValueError(
            f"{type(encoder).__name__} {encoder.name!r} has shared_embedding=True: it reads the "
            "decoder's target embeddings, which only a ThreeWayTiedModel links (made by "
            "zoo.models.build(..., tie_embeddings='three_way') or with_tied_embeddings)."
        )
    return layer


def share_source_embedding(encoder, decoder):
    """Links `encoder` (shared_embedding=True) to `decoder.embedding`: one matrix for the
    source, the target and the output. Refuses unequal vocabulary or embedding sizes."""
    if not (encoder.shared_embedding and decoder.tie_embeddings):
        raise ValueError(
            "Three-way tying needs an encoder with shared_embedding=True and a decoder with "
            f"tie_embeddings=True; got shared_embedding={encoder.shared_embedding}, "
            f"tie_embeddings={decoder.tie_embeddings}."
        )
    check_three_way(encoder.vocab_size, decoder.vocab_size, encoder.embedding_dim,
                    decoder.embedding_dim)  # fmt: skip
    # A plain attribute: the matrix stays the decoder's weight, saved and counted once.
    object.__setattr__(encoder, _SHARED, decoder.embedding)


def check_three_way(source_vocab_size, target_vocab_size, source_dim=None, target_dim=None):
    """ValueError unless the source and target vocabularies and embedding sizes are equal."""
    if source_vocab_size != target_vocab_size:
        raise ValueError(
            "Three-way tying (one matrix for the source and target embeddings and the output) "
            f"needs one vocabulary: got source vocabulary size {source_vocab_size} and target "
            f"vocabulary size {target_vocab_size}; train the tokenizers with "
            "--shared-vocabulary, or tie the target embeddings alone (tie_embeddings=True)."
        )
    if source_dim != target_dim:
        raise ValueError(
            "Three-way tying needs equal embedding sizes: got source embedding_dim "
            f"{source_dim} and target embedding_dim {target_dim}."
        )


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


@keras.saving.register_keras_serializable(package="zoo")
class ThreeWayTiedModel(keras.Model):
    """A functional translation model whose encoder reads the source with the decoder's
    target embedding matrix E, which the decoder's output layer also reads.

    Made like any functional model, from inputs and outputs, with an encoder built with
    `shared_embedding=True` and a decoder with `tie_embeddings=True` (the sizes must agree:
    one vocabulary, one embedding size, else a ValueError naming both). The link from the
    encoder to E is made here, when the model is made, and again when `keras.models.
    load_model` makes it from its configuration, so E is one weight, the decoder's, saved
    and counted once. `zoo.models.build(..., tie_embeddings="three_way")` and
    `zoo.models.with_tied_embeddings(model, three_way=True)` make one.

    Example:
        model = zoo.models.build("luong_global_general", "base", source_vocab_size=8000,
                                 target_vocab_size=8000, tie_embeddings="three_way")
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        share_source_embedding(self.get_layer("encoder"), self.get_layer("decoder"))


def with_tied_embeddings(model, three_way=False):
    """A new, untrained translation model: `model`'s configuration with the decoder's
    `tie_embeddings=True` (weights drawn anew), and with `three_way` the encoder's
    `shared_embedding=True` in a `ThreeWayTiedModel` (one vocabulary and embedding size,
    else a ValueError naming both). What `--tie-embeddings` does to a recipe's model,
    whatever builder made it; a model tied so already is returned as it is.

    Raises ValueError when `model` has no layer "decoder" taking `tie_embeddings` (or, for
    three_way, no layer "encoder" taking `shared_embedding`).
    """
    config = model.get_config()
    layers = {layer.get("name"): layer["config"] for layer in config.get("layers", ())}
    wanted = {"decoder": "tie_embeddings", **({"encoder": "shared_embedding"} if three_way else {})}
    if any(key not in layers.get(name, {}) for name, key in wanted.items()):
        raise ValueError(
            f"with_tied_embeddings needs a translation model whose layer 'decoder' takes "
            f"tie_embeddings (LuongDecoder, BahdanauDecoder, RNNEncDecDecoder)"
            f"{' and whose encoder takes shared_embedding' if three_way else ''}; got model "
            f"{model.name!r} with layers {[layer.name for layer in model.layers]}."
        )
    if all(layers[name][key] for name, key in wanted.items()):
        return model
    for name, key in wanted.items():
        layers[name][key] = True
    if not three_way:
        return type(model).from_config(config)
    encoder, decoder = layers["encoder"], layers["decoder"]
    check_three_way(
        encoder["vocab_size"], decoder["vocab_size"],
        encoder["embedding_dim"], decoder["embedding_dim"],
    )  # fmt: skip
    return ThreeWayTiedModel.from_config(config)
