"""Argument checks shared by encoders and decoders (clear ValueErrors, never asserts)."""


def check_ids_rank(owner, name, shape):
    if len(shape) != 2:
        raise ValueError(
            f"{owner} expects {name} of shape (batch, length) int ids, got shape {tuple(shape)}."
        )
