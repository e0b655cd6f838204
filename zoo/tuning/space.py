"""The search space of `zoo.tuning`: its dimensions, `--fix` parsing and model arguments.

Dimensions (names as used by keras-tuner, in the results table and by `--fix NAME=VALUE`):
`DIMENSIONS` (each one's kind and the parent values that make it active) and `declare`
(the values searched); docs/tuning.md, "The search space", lists them for users (a test
keeps the two equal). The attention values are the registry's
(`zoo.models.attention_presets()`: Bahdanau et al. 2014 §3.1, Luong et al. 2015 §3.1-3.2;
RNNsearch's is "bahdanau"); a fixed value may be any valid one, not only the searched
ones (any int >= 1 for `window`, `num_layers`, `embedding_dim` and `units`; a dropout in
[0, 1); a learning rate > 0).

Adadelta keeps Bahdanau et al.'s learning rate 1.0 (appendix A.2.2). For `bahdanau`, `units`
is the decoder's size; the encoder (per direction), maxout and alignment sizes keep the
preset's ratios to it. Sizes are from `zoo.models.preset_arguments(preset, size)`.

Example:
    >>> fixed = parse_fixed(["attention=luong_global_general", "units=64"])
    >>> fixed
    {'attention': 'luong_global_general', 'units': 64}
"""

import math

from zoo.models import SIZES, attention_presets, family, preset_arguments
from zoo.training import OPTIMIZERS

# attention value -> zoo.models preset: every attention preset (zoo.models is the registry);
# RNNsearch's value is "bahdanau".
ATTENTIONS = {
    ("bahdanau" if family(name) == "bahdanau" else name): name for name in attention_presets()
}
LUONG = tuple(name for name in ATTENTIONS if family(ATTENTIONS[name]) == "luong")
LOCAL = tuple(
    name for name in LUONG if preset_arguments(ATTENTIONS[name], "tiny")["attention"] != "global"
)
WINDOWS = (2, 5, 10)

# name -> (kind, parent dimension, parent values that make it active)
DIMENSIONS = {
    "attention": ("choice", None, None),
    "window": ("int", "attention", LOCAL),
    "input_feeding": ("bool", "attention", LUONG),
    "num_layers": ("int", "attention", LUONG),
    "dropout": ("dropout", "attention", LUONG),
    "embedding_dim": ("int", None, None),
    "units": ("int", None, None),
    "optimizer": ("choice", None, None),
    "adam_learning_rate": ("positive_float", "optimizer", ("adam",)),
    "sgd_learning_rate": ("positive_float", "optimizer", ("luong",)),
}
CHOICES = {"attention": tuple(ATTENTIONS), "optimizer": OPTIMIZERS}

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def _reference_sizes(size):
    if size not in SIZES:
        raise ValueError(f"Unknown size {size!r}; expected one of {SIZES}.")
    return preset_arguments("luong_global_general", size)


def sizes_help():
    """The embedding/hidden sizes the space is centred on at each size, for --size's help:
    "tiny: 16/32, base: 256/512, ..." (read from the presets)."""
    references = {size: _reference_sizes(size) for size in SIZES}
    return ", ".join(f"{s}: {r['embedding_dim']}/{r['units']}" for s, r in references.items())


def _convert(name, value):
    """`value` (a str from the command line, or a Python value) as dimension `name` needs it."""
    kind = DIMENSIONS[name][0]
    text = value.strip() if isinstance(value, str) else value
    if kind == "choice":
        if text not in CHOICES[name]:
            raise ValueError(
                f"--fix {name}={value!r}: unknown value; expected one of {', '.join(CHOICES[name])}."
            )
        return text
    if kind == "bool":
        if isinstance(text, bool):
            return text
        if isinstance(text, str) and text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise ValueError(f"--fix {name}={value!r}: expected true or false.")
    if kind == "int":
        try:
            number = int(text) if not isinstance(text, bool) else None
        except (TypeError, ValueError):
            number = None
        if number is None or number < 1 or (isinstance(text, float) and text != number):
            raise ValueError(f"--fix {name}={value!r}: expected an integer >= 1.")
        return number
    try:
        number = float(text) if not isinstance(text, bool) else None
    except (TypeError, ValueError):
        number = None
    if kind == "dropout":
        if number is None or not 0.0 <= number < 1.0:
            raise ValueError(f"--fix {name}={value!r}: expected a rate in [0, 1).")
        return number
    if number is None or not math.isfinite(number) or number <= 0.0:
        raise ValueError(f"--fix {name}={value!r}: expected a number > 0.")
    return number


def check_fixed(fixed):
    """Validates a dict `{dimension: value}` and returns it with converted values (a new dict).

    Raises ValueError for an unknown dimension, a bad value, or a dimension that can never be
    active given the other fixed values (e.g. `window` with `attention=bahdanau`).
    """
    if not isinstance(fixed, dict):
        raise ValueError(f"fixed must be a dict of dimension -> value, got {type(fixed).__name__}.")
    result = {}
    for name, value in fixed.items():
        if name not in DIMENSIONS:
            raise ValueError(
                f"--fix {name}=...: unknown dimension {name!r}; valid dimensions: "
                f"{', '.join(DIMENSIONS)}."
            )
        result[name] = _convert(name, value)
    for name, value in result.items():
        _, parent, parent_values = DIMENSIONS[name]
        if parent in result and result[parent] not in parent_values:
            raise ValueError(
                f"--fix {name}={value!r} has no effect with {parent}={result[parent]!r}: {name} "
                f"applies only when {parent} is one of {', '.join(parent_values)}."
            )
    return result


def parse_fixed(items):
    """Parses `--fix` strings `["NAME=VALUE", ...]` into a checked dict (see `check_fixed`).

    Raises ValueError for an item without "=", a repeated name, an unknown name or value.
    """
    fixed = {}
    for item in items or ():
        if not isinstance(item, str) or "=" not in item:
            raise ValueError(f"--fix expects NAME=VALUE (e.g. units=64), got {item!r}.")
        name, value = (part.strip() for part in item.split("=", 1))
        if name in fixed:
            raise ValueError(f"--fix {name} given twice ({fixed[name]!r} and {value!r}).")
        if not value:
            raise ValueError(f"--fix {name}= has no value.")
        fixed[name] = value
    return check_fixed(fixed)


def _sizes_around(value):
    return sorted({max(1, value // 2), value, value * 2})


def declare(hp, size="tiny", fixed=None):
    """Declares the space on keras-tuner `hp` and returns the active values (a dict).

    Fixed dimensions become `hp.Fixed`; the others are searched (docs/tuning.md lists them).
    Conditional dimensions live in `hp.conditional_scope`s of their parent.
    """
    fixed = check_fixed(fixed or {})
    reference = _reference_sizes(size)
    values = {}

    def dimension(name, make):
        _, parent, parent_values = DIMENSIONS[name]
        declare_one = (lambda: hp.Fixed(name, fixed[name])) if name in fixed else make
        if parent is None:
            values[name] = declare_one()
            return
        # Declared even when inactive: keras-tuner has to see every branch of the space.
        with hp.conditional_scope(parent, list(parent_values)):
            value = declare_one()
        if values.get(parent) in parent_values:
            values[name] = value

    dimension("attention", lambda: hp.Choice("attention", list(ATTENTIONS)))
    dimension("window", lambda: hp.Choice("window", list(WINDOWS)))
    dimension("input_feeding", lambda: hp.Boolean("input_feeding", default=True))
    dimension(
        "num_layers",
        lambda: hp.Int("num_layers", 1, max(2, reference["num_layers"]), default=1),
    )
    dimension("dropout", lambda: hp.Float("dropout", 0.0, 0.5, step=0.1, default=0.2))
    dimension(
        "embedding_dim",
        lambda: hp.Choice(
            "embedding_dim",
            _sizes_around(reference["embedding_dim"]),
            default=reference["embedding_dim"],
        ),
    )
    dimension(
        "units",
        lambda: hp.Choice("units", _sizes_around(reference["units"]), default=reference["units"]),
    )
    dimension("optimizer", lambda: hp.Choice("optimizer", list(OPTIMIZERS), default="adam"))
    dimension(
        "adam_learning_rate",
        lambda: hp.Float("adam_learning_rate", 1e-4, 1e-2, sampling="log", default=1e-3),
    )
    dimension(
        "sgd_learning_rate",
        lambda: hp.Float("sgd_learning_rate", 0.1, 1.0, sampling="log", default=1.0),
    )
    return values


def model_arguments(values, size="tiny", max_source_length=None):
    """`(preset, overrides)` for `zoo.models.build(preset, size, ..., **overrides)`.

    Args:
        values: the active values returned by `declare`.
        size: the preset size the space is centred on.
        max_source_length: longest source the model will read; `luong_global_location`
            gets `max_length = max(preset's, max_source_length)` so it can address it.
    """
    preset = ATTENTIONS[values["attention"]]
    reference = preset_arguments(preset, size)
    if values["attention"] == "bahdanau":
        units = int(values["units"])
        scale = units / reference["units"]
        overrides = {
            "embedding_dim": int(values["embedding_dim"]),
            "units": units,
            "encoder_units": max(1, round(reference["encoder_units"] * scale)),
            "maxout_units": max(1, round(reference["maxout_units"] * scale)),
            "attention_units": max(1, round(reference["attention_units"] * scale)),
        }
        return preset, overrides
    overrides = {
        "embedding_dim": int(values["embedding_dim"]),
        "units": int(values["units"]),
        "num_layers": int(values["num_layers"]),
        "dropout": float(values["dropout"]),
        "input_feeding": bool(values["input_feeding"]),
    }
    if values["attention"] in LOCAL:
        overrides["window"] = int(values["window"])
    if values["attention"] == "luong_global_location" and max_source_length:
        overrides["max_length"] = max(reference["max_length"], int(max_source_length))
    return preset, overrides


def optimizer_arguments(values):
    """`(name, learning_rate)` for `zoo.training.make_optimizer` from the active values."""
    name = values["optimizer"]
    if name == "adam":
        return name, float(values["adam_learning_rate"])
    if name == "luong":
        return name, float(values["sgd_learning_rate"])
    return name, None
