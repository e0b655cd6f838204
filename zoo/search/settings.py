"""What a search is given, checked once: its settings (`SearchSettings`), the source ids
(`check_source`) and the model (`check_model`).

`SearchSettings` is the one description of a search's settings and their one set of checks:
`search` and `search_function` take one (`settings_of`: a `SearchSettings`, or the library
defaults of `zoo.search.defaults`, with options given by field name replacing its fields);
the beam and greedy samplers hold one; the `Translator` holds its own, which the command
line and the server reach through its keywords. A new option is one field here and its
check. `SearchResult` is what a search returns.
"""

import dataclasses
from typing import Any, NamedTuple

import numpy as np
from keras import ops

from zoo.checks import check_int, check_non_negative_float, check_non_negative_ids
from zoo.constants import INT32_MAX
from zoo.search import defaults

MAX_BEAM_SIZE = 1024  # memory grows with it: B * K decoder states and attention rows

# The search holds (B * K, L, Ts) buffers of tokens, back-pointers and attention, where L is
# the longest output allowed, ceil(max_length_ratio * Ts) + max_length_offset: these bound L
# (a translation rarely has more than 2-3 times its source's tokens; a character-level target
# of a word-level source some 7 times).
MAX_LENGTH_RATIO_LIMIT = 16.0
MAX_LENGTH_OFFSET_LIMIT = 1024


def _check_int32(name, value):
    """`value` (checked >= 0 already) when int32 holds it; else a ValueError."""
    if value > INT32_MAX:
        raise ValueError(
            f"{name} must be in [0, 2**31 - 1] (the search counts in int32); received {value!r}."
        )
    return value


def _check_at_most(name, value, limit):
    """`value` (checked >= 0 already) when at most `limit`; else a ValueError naming the range."""
    if value > limit:
        raise ValueError(
            f"{name} must be in [0, {limit:g}]; received {value!r}: the longest output "
            "allowed, ceil(max_length_ratio * source tokens) + max_length_offset, is the "
            "length of buffers the search holds for every hypothesis."
        )
    return value


def _check_count(name, value):
    """`value` as an int in [0, 2**31 - 1]; else a ValueError."""
    return _check_int32(name, check_int(None, name, value, minimum=0))


def _check_control(check, name, value, dtype):
    """A decoding control: a Python value checked by `check(name, value)`, or a scalar
    tensor of `dtype` (a traced search's input, checked before it was made) as it is."""
    if not ops.is_tensor(value):
        return check(name, value)
    if tuple(value.shape) != () or ops.dtype(value) != dtype:
        raise ValueError(
            f"{name} as a tensor must be a {dtype} scalar; received shape "
            f"{tuple(value.shape)} and dtype {ops.dtype(value)}."
        )
    return value


def _check_bool(name, value):
    """`value` as a bool when it is one (NumPy's included); else a ValueError."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False; received {value!r}.")
    return bool(value)


@dataclasses.dataclass(frozen=True)
class SearchSettings:
    """The settings of a greedy or beam search, checked and normalised when made.

    Frozen and hashable: compiled searches are cached by them.

    Attributes:
        beam_size: K >= 1 (at most `MAX_BEAM_SIZE`); 1 is greedy search (exactly the
            arg-max decoder).
        length_penalty: alpha >= 0 of GNMT's `((5 + |Y|) / 6) ** alpha`; 0 ranks by the
            plain sum of log-probabilities.
        max_length_ratio, max_length_offset: sentence b emits at most
            `max(1, ceil(ratio * n_b) + offset)` tokens, END included (n_b: its number of
            non-pad source ids); ratio in [0, `MAX_LENGTH_RATIO_LIMIT`], offset in
            [0, `MAX_LENGTH_OFFSET_LIMIT`].
        return_attention: also return the attention weights of the chosen hypotheses.
        jit_compile: run the search loop compiled with XLA (TensorFlow; on JAX the search
            is always compiled with `jax.jit`, on PyTorch it runs eagerly either way).
        n_best: None for the best hypothesis of each sentence; an int 1 <= n <= beam_size
            for its n best, best first (the search then runs until none of them can change).
        coverage_penalty: beta >= 0 of GNMT's `cp = beta * sum_j log(min(c_j, 1))` (Wu et
            al. 2016, eq. 14; c_j: a hypothesis' attention on source word j summed over its
            steps, END included, floored at `COVERAGE_FLOOR`), added to the rank of finished
            hypotheses in beam search; it favours translations that cover the source.
        min_length: int >= 0: a translation has at least this many tokens before END
            (END's log-probability is -inf at the steps before), as fairseq's
            `--min-len`. The length limit wins: a sentence whose limit `L_b` is at most
            `min_length` ends at `L_b`. 0 (the default) is off.
        ban_unknown: never emit `UNK_ID` (its log-probability is -inf at every step).
        no_repeat_ngram_size: n >= 1: a hypothesis never emits a token that completes an
            n-gram it already contains (Paulus et al. 2017; fairseq's
            `--no-repeat-ngram-size`); 1 forbids any token twice. 0 (the default) is off.
            The graph is the same for every n, and an n longer than the output so far
            compares nothing, so any int32 value is answered at once.
        min_length, ban_unknown and no_repeat_ngram_size may also be scalar tensors (int32,
        bool, int32) inside a traced function, its inputs: one graph then serves every
        value (the `Translator`'s searches with controls take them so). Such settings are
        not hashable and run uncompiled (`jit_compile=False`).
        With every control off the search runs exactly the graph it runs without them;
        a control that leaves a hypothesis no token but END (a tiny vocabulary) lets it
        end, before `min_length` too (`zoo.search.controls`).

    Example:
        >>> SearchSettings(beam_size=1).length_penalty == defaults.LENGTH_PENALTY
        True
    """

    beam_size: int = defaults.BEAM_SIZE
    length_penalty: float = defaults.LENGTH_PENALTY
    max_length_ratio: float = defaults.MAX_LENGTH_RATIO
    max_length_offset: int = defaults.MAX_LENGTH_OFFSET
    return_attention: bool = True
    jit_compile: bool = False
    n_best: int | None = None
    coverage_penalty: float = defaults.COVERAGE_PENALTY
    min_length: int = defaults.MIN_LENGTH
    ban_unknown: bool = defaults.BAN_UNKNOWN
    no_repeat_ngram_size: int = defaults.NO_REPEAT_NGRAM_SIZE

    def __post_init__(self):
        beam_size = check_int(None, "beam_size", self.beam_size)
        if beam_size > MAX_BEAM_SIZE:
            raise ValueError(
                f"beam_size must be at most {MAX_BEAM_SIZE}; received {beam_size}: the search "
                "holds beam_size hypotheses per sentence, each with its decoder state and "
                "attention (beams above 10-20 rarely translate better)."
            )
        n_best = self.n_best
        if n_best is not None and (
            isinstance(n_best, bool)
            or not isinstance(n_best, int | np.integer)
            or not 1 <= n_best <= beam_size
        ):
            raise ValueError(
                f"n_best must be None or an int in [1, beam_size={beam_size}]; received "
                f"{n_best!r}: beam search keeps beam_size finished hypotheses per sentence."
            )
        checked = {
            "beam_size": beam_size,
            "length_penalty": check_non_negative_float(None, "length_penalty", self.length_penalty),
            "max_length_ratio": _check_at_most(
                "max_length_ratio",
                check_non_negative_float(None, "max_length_ratio", self.max_length_ratio),
                MAX_LENGTH_RATIO_LIMIT,
            ),
            "max_length_offset": _check_at_most(
                "max_length_offset",
                check_int(None, "max_length_offset", self.max_length_offset, minimum=0),
                MAX_LENGTH_OFFSET_LIMIT,
            ),
            "return_attention": bool(self.return_attention),
            "jit_compile": bool(self.jit_compile),
            "n_best": None if n_best is None else int(n_best),
            "coverage_penalty": check_non_negative_float(
                None, "coverage_penalty", self.coverage_penalty
            ),
            "min_length": _check_control(_check_count, "min_length", self.min_length, "int32"),
            "ban_unknown": _check_control(_check_bool, "ban_unknown", self.ban_unknown, "bool"),
            "no_repeat_ngram_size": _check_control(
                _check_count, "no_repeat_ngram_size", self.no_repeat_ngram_size, "int32"
            ),
        }
        tensors = [name for name in defaults.CONTROL_DEFAULTS if ops.is_tensor(checked[name])]
        if tensors and checked["jit_compile"]:
            raise ValueError(
                f"jit_compile=True compiles a search per settings, and {tensors[0]} is a "
                "tensor: give the controls as Python values, or jit_compile=False."
            )
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def replace(self, **options):
        """These settings with `options` (fields by name) changed, checked; a TypeError
        naming the fields for a name that is not one."""
        unknown = sorted(set(options) - set(FIELDS))
        if unknown:
            raise TypeError(
                f"Unknown search option(s) {unknown}; the options are the fields of "
                f"zoo.search.SearchSettings: {list(FIELDS)}."
            )
        return dataclasses.replace(self, **options) if options else self

    @property
    def controls(self):
        """The decoding controls (min_length, ban_unknown, no_repeat_ngram_size) by name."""
        return {name: getattr(self, name) for name in defaults.CONTROL_DEFAULTS}


FIELDS = tuple(field.name for field in dataclasses.fields(SearchSettings))
"""The names of the search options, in order."""


def settings_of(settings=None, options=None):
    """The `SearchSettings` of a call: `settings` (None: the library defaults,
    `zoo.search.defaults`) with `options` (a dict of fields by name) changed.

    Example:
        >>> settings_of(None, {"beam_size": 2}).beam_size
        2
    """
    if settings is None:
        settings = SearchSettings()
    elif not isinstance(settings, SearchSettings):
        raise TypeError(
            f"settings must be a zoo.search.SearchSettings or None; received "
            f"{type(settings).__name__} {settings!r}. Give single options by name "
            "(beam_size=4)."
        )
    return settings.replace(**(options or {}))


def check_source(source_ids):
    """`source_ids` as a (B, Ts) int32 tensor; a ValueError for another rank or dtype."""
    if not hasattr(source_ids, "shape") or not hasattr(source_ids, "dtype"):
        source_ids = np.asarray(source_ids)
    shape = tuple(source_ids.shape)
    if len(shape) != 2:
        raise ValueError(
            f"source_ids must have shape (batch, source_len), got shape {shape} "
            f"(rank {len(shape)}). Wrap a single sentence as [ids]."
        )
    dtype = str(getattr(source_ids.dtype, "name", source_ids.dtype))
    if "int" not in dtype:
        raise ValueError(f"source_ids must hold integer token ids, got dtype {dtype}.")
    check_non_negative_ids(source_ids, "source_ids")
    return ops.cast(source_ids, "int32")


def check_model(model):
    """The model's (encoder, decoder) layers; a ValueError when it lacks them or the decoder
    lacks the step functions search needs (docs/design.md)."""
    try:
        encoder = model.get_layer("encoder")
        decoder = model.get_layer("decoder")
    except (ValueError, AttributeError) as error:
        raise ValueError(
            "search expects a keras.Model with layers named 'encoder' and 'decoder' "
            f"(docs/design.md), got {type(model).__name__}: {error}"
        ) from None
    missing = [name for name in ("prepare", "initial_state", "step") if not hasattr(decoder, name)]
    if missing:
        raise ValueError(
            f"the decoder layer {type(decoder).__name__} lacks {missing}; search needs "
            "prepare/initial_state/step (docs/design.md)."
        )
    return encoder, decoder


class SearchResult(NamedTuple):
    """The best hypothesis per source sentence, as found by greedy or beam search.

    A `NamedTuple`, so it passes through `tf.function` and `tf.nest` unchanged.

    Fields (B = batch size, T = the length of the longest returned hypothesis
    (END included), Ts = padded source length):
        ids: (B, T) int32. Each row is the hypothesis' tokens, ending with `END_ID`,
            then `PAD_ID` up to T. The start token is not included.
        scores: (B,) float32. The score the hypothesis was ranked by:
            `log_probs / ((5 + lengths) / 6) ** length_penalty` (GNMT, Wu et al. 2016,
            eq. 14); with `length_penalty=0` it equals `log_probs`.
        attention: (B, T, Ts) float32, the decoder's attention weights at each output
            step of the returned hypothesis (zero after the END step and at padded source
            positions), or `None` when the search ran with `return_attention=False`.
        lengths: (B,) int32, the number of tokens in `ids` up to and including `END_ID`.
        log_probs: (B,) float32, the sum of the model's token log-probabilities
            `log p(y_t | y_<t, x)` over the `lengths` tokens (END included), computed with
            a float32 log-softmax over the full vocabulary.

    Example:
        >>> result = zoo.search.search(model, source_ids, beam_size=5)  # doctest: +SKIP
        >>> result.ids.shape, result.scores.shape                         # doctest: +SKIP
        (TensorShape([2, 14]), TensorShape([2]))
    """

    ids: Any
    scores: Any
    attention: Any
    lengths: Any
    log_probs: Any
