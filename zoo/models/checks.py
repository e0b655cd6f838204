"""Argument checks shared by encoders and decoders (clear ValueErrors, never asserts)."""

from zoo.checks import check_int


def check_ids_rank(owner, name, shape):
    if len(shape) != 2:
        raise ValueError(
            f"{owner} expects {name} of shape (batch, length) int ids, got shape {tuple(shape)}."
        )


def check_sizes(owner, vocab_size, embedding_dim, units):
    """(vocab_size, embedding_dim, units), each checked to be an int >= 1 (`check_int`)."""
    return (
        check_int(owner, "vocab_size", vocab_size),
        check_int(owner, "embedding_dim", embedding_dim),
        check_int(owner, "units", units),
    )
