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
