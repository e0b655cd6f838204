"""The search settings every caller shares, in one place.

`zoo.search.search`, `search_function`, the `Translator`, the recipes' evaluation and
export, the command line (`python -m zoo translate|evaluate|serve`) and the tuner take their
defaults from here; the command line's `--help` renders these values.

The length penalty was chosen by validation BLEU with beam 5 on Multi30k for both papers'
models (docs/benchmarks.md lists the measurements); 0 ranks hypotheses by log-probability
alone, which favours short translations.
"""

BEAM_SIZE = 5
"""Beam size K of a translator and of the recipes' evaluation; 1 is greedy search."""

LENGTH_PENALTY = 1.0
"""GNMT's length penalty alpha: scores are log P / ((5 + |Y|) / 6) ** alpha."""

COVERAGE_PENALTY = 0.0
"""GNMT's coverage penalty beta (beam search only); 0 turns it off."""

MAX_LENGTH_RATIO = 1.5
MAX_LENGTH_OFFSET = 10
"""A source of n tokens gets at most ceil(MAX_LENGTH_RATIO * n) + MAX_LENGTH_OFFSET target
tokens, END included."""

BATCH_SIZE = 64
"""Sentences per search call of a translator (sorted by length first)."""

MIN_LENGTH = 0
"""Tokens a translation has at least before END; 0 turns the control off."""

BAN_UNKNOWN = False
"""Whether the search never emits the unknown-word token (UNK_ID)."""

NO_REPEAT_NGRAM_SIZE = 0
"""n: no n-gram occurs twice in a translation (Paulus et al. 2017); 0 turns it off."""

TEMPERATURE = 1.0
"""Sampling's temperature: logits are divided by it before the draw; 1 samples the model's
own distribution."""

SEARCH_DEFAULTS = {
    "beam_size": BEAM_SIZE,
    "length_penalty": LENGTH_PENALTY,
    "batch_size": BATCH_SIZE,
    "max_length_ratio": MAX_LENGTH_RATIO,
    "max_length_offset": MAX_LENGTH_OFFSET,
    "coverage_penalty": COVERAGE_PENALTY,
}
"""The settings above by `Translator` keyword (what translator.json records)."""

CONTROL_DEFAULTS = {
    "min_length": MIN_LENGTH,
    "ban_unknown": BAN_UNKNOWN,
    "no_repeat_ngram_size": NO_REPEAT_NGRAM_SIZE,
}
"""The decoding controls (`zoo.search.search`'s keywords), all off by default."""
