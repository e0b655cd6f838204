"""Argument checks shared by the whole package (it imports nothing from `zoo`).

Each returns the value it accepts (as a plain Python int or float) and otherwise raises a
ValueError that names the owner, the argument, what was expected and what was received:
floats and bools are refused rather than truncated.

    >>> check_int("GRUEncoder", "units", 256)
    256
    >>> check_int("GRUEncoder", "units", 2.5)
    Traceback (most recent call last):
    ...
    ValueError: GRUEncoder: units must be an int >= 1; received 2.5.

Argument checks shared by encoders and decoders (clear ValueErrors, never asserts).
"""

import numpy as np


def _owned(owner, name):
    return f"{owner}: {name}" if owner else name


def check_int(owner, name, value, minimum=1, allow_none=False):
    """`value` as an int >= `minimum` (None passes when `allow_none`); else a ValueError.

    `owner` (a class or function name, or None) prefixes the message."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        expected = f"an int >= {minimum}" + (" or None" if allow_none else "")
        raise ValueError(f"{_owned(owner, name)} must be {expected}; received {value!r}.")
    return int(value)


def check_non_negative_float(owner, name, value):
    """`value` as a finite float >= 0 (an int is accepted); else a ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{_owned(owner, name)} must be a finite float >= 0; received {value!r}.")
    if not np.isfinite(float(value)) or value < 0:
        raise ValueError(f"{_owned(owner, name)} must be a finite float >= 0; received {value!r}.")
    return float(value)


def check_rate(owner, name, value):
    """`value` as a float in [0, 1) (a dropout rate); else a ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        valid = False
    else:
        valid = 0 <= value < 1
    if not valid:
        raise ValueError(f"{_owned(owner, name)} must be a float in [0, 1); received {value!r}.")
    return float(value)


def argparse_number(convert, minimum, strict, what, maximum=None):
    """An argparse `type`: `convert(text)`, finite and > (strict) or >= `minimum`, and at
    most `maximum` (None: no bound); a bad value is a usage error naming what was expected
    and what was received."""
    import argparse
    import math

    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        too_large = maximum is not None and value > maximum
        if (
            not math.isfinite(value)
            or value < minimum
            or (strict and value == minimum)
            or too_large
        ):
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


positive_int = argparse_number(int, 1, False, "a positive integer")
non_negative_int = argparse_number(int, 0, False, "an integer >= 0")
positive_float = argparse_number(float, 0.0, True, "a positive number")
non_negative_float = argparse_number(float, 0.0, False, "a number >= 0")
SEED_LIMIT = 2**32  # seeds below it: NumPy's range, which the random generators share
# A random seed, an integer in [0, 2**32).
seed_int = argparse_number(int, 0, False, "an integer in [0, 2**32)", maximum=SEED_LIMIT - 1)


def check_non_negative_ids(ids, name):
    """A ValueError naming the first negative id of `ids` (where its values are known: not
    a symbolic tensor), which no embedding has a row for."""
    try:
        values = np.asarray(ids)
    except (TypeError, ValueError, NotImplementedError):  # a symbolic tensor
        return
    if values.dtype == object or not values.size:
        return
    negative = np.argwhere(values < 0)
    if negative.size:
        where = tuple(int(i) for i in negative[0])
        raise ValueError(
            f"{name} must be token ids >= 0 (0: padding); received {int(values[where])} at "
            f"{list(where)}."
        )


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
