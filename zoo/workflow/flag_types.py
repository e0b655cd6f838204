"""What the recipes' flag modules share: the [0, 1) number type and the library's defaults."""

import argparse
import inspect

from zoo.checks import non_negative_float


def rate(text):
    """An argparse type: a number in [0, 1) (dropout, label smoothing)."""
    value = non_negative_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {value}")
    return value


def library_default(function, name):
    """The default of `function`'s argument `name`: a flag shows and passes the library's
    value instead of keeping a copy of it."""
    return inspect.signature(function).parameters[name].default
