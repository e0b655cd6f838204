"""Argument checks shared by encoders and decoders (clear ValueErrors, never asserts)."""


def check_positive_int(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}.")
    return value


def check_rate(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"{owner}: {name} must be a float in [0, 1), got {value!r}.")
    return float(value)


def check_ids_rank(owner, name, shape):
    if len(shape) != 2:
        raise ValueError(
            f"{owner} expects {name} of shape (batch, length) int ids, got shape {tuple(shape)}."
        )
