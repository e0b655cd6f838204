"""Greedy and beam search over the decoder's step function (docs/design.md, "Search"):
`search`, the entry that checks its arguments and runs the search compiled for the Keras
backend (`zoo.search.compile.compile_search`: on TensorFlow eagerly, inside `tf.function`
or with XLA; `jax.jit` on JAX; `torch.no_grad` on PyTorch), and its two spellings
`greedy_search` and `beam_search`.

The parts: `settings` (the settings, checked once), `loop` (what greedy and beam share: the
encoded source, the decoder step, the length limits), `greedy` and `beam` (the two loops),
`controls` (the decoding controls and the forced prefix: what a step may emit, and the
chunked top-k of a step), `constraints` (lexically constrained beam search), `loop` also
holding GNMT's length and coverage penalties, `compile` (the fixed-size buffers, the search compiled per backend, the traced search).

keras-hub's sampler names (`keras_hub.samplers`) over `zoo.search.search` and
`zoo.search.sample`: `GreedySampler`, `BeamSampler(num_beams)`, `RandomSampler(temperature)`,
`TopKSampler(k)` and `TopPSampler(p)`; each is a callable
`sampler(model, source_ids) -> SearchResult`, its defaults those of `zoo.search.defaults`;
the search samplers hold their `SearchSettings`, checked once when made.

Example:
    >>> TopPSampler(p=0.9, seed=1)(model, source_ids).ids                   # doctest: +SKIP
"""

from zoo.search import defaults
from zoo.search.compile import compile_search, empty_result, trim
from zoo.search.constraints import check_constraints
from zoo.search.controls import check_prefix, target_vocab_size
from zoo.search.sampling import check_sampling, sample
from zoo.search.settings import SearchSettings, check_model, check_source, settings_of


def search(model, source_ids, settings=None, *, prefix=None, constraints=None, **options):
    """Translates a batch of source sentences with greedy (`beam_size=1`) or beam search.

    Args:
        model: a `zoo` translation model (a keras.Model with layers named "encoder" and
            "decoder" following docs/design.md).
        source_ids: (B, Ts) int source ids, right-padded with PAD_ID; sentence b's length
            is its number of non-pad ids.
        settings: a `SearchSettings`, which describes every option; None for the library
            defaults (`zoo.search.defaults`, the settings the recipes, the Translator and
            the command line use).
        options: fields of `SearchSettings` by name (beam_size=4, n_best=2,
            min_length=3, ...), replacing those of `settings`. With `jit_compile`
            (TensorFlow's XLA; JAX always compiles) the compiled search is cached per model
            and settings; it retraces per distinct source shape.
        prefix: None, or the target ids each output starts with, per sentence: a list of
            B lists of ids (an empty one for a sentence without a prefix), or a (B, P) int
            array or tensor right-padded with PAD_ID. The search forces those tokens, then
            searches on; their log-probabilities count in the score (as fairseq's
            `--prefix-size`), and a sentence's length limit is at least its prefix's
            length + 1. A sentence without one translates exactly as without `prefix`
            (`zoo.search.controls`).
        constraints: None, or the target phrases each output must contain, per sentence:
            a list of B lists of phrases (each a list of ids; an empty list for a sentence
            without constraints), or a (B, C, L) int array padded with PAD_ID. Beam search
            with dynamic beam allocation (Post & Vilar 2018, `zoo.search.constraints`);
            every output holds every phrase, and a sentence without constraints translates
            exactly as without them.
    Returns:
        a `SearchResult` (ids, scores, attention, lengths, log_probs); see its docstring.
        With `n_best=n` every field has an axis of n after the batch: ids (B, n, T),
        scores (B, n), ...; a sentence with fewer than n finished hypotheses (a tiny
        vocabulary) fills the rest with score -inf and length 0.

    Works on TensorFlow (eagerly and inside `tf.function`), JAX (`jax.jit`, cached per
    model and settings) and PyTorch (under `torch.no_grad`), with the same results. The
    modules `greedy`, `beam` and `loop` of `zoo.search` give the exact rules.

    Example:
        >>> result = search(model, [[5, 6, 7, 0]], beam_size=4)  # doctest: +SKIP
        >>> result.ids  # doctest: +SKIP
        <tf.Tensor: shape=(1, 5), dtype=int32, numpy=array([[9, 4, 8, 2, 0]])>
    """
    settings = settings_of(settings, options)
    check_model(model)
    source_ids = check_source(source_ids)
    if prefix is not None or constraints is not None:
        batch, vocab_size = source_ids.shape[0], target_vocab_size(model)
        prefix = check_prefix(prefix, batch, vocab_size)
        constraints = check_constraints(constraints, batch, vocab_size)
    if source_ids.shape[0] == 0:  # known to be empty (eagerly): nothing to search
        return empty_result(
            source_ids, n_best=settings.n_best, return_attention=settings.return_attention
        )
    padded = compile_search(model, settings)(source_ids, prefix, constraints)
    return trim(padded)


def greedy_search(model, source_ids, settings=None, **options):
    """`search` with `beam_size=1`: the arg-max token at every step."""
    if "beam_size" in options:
        raise ValueError("greedy_search has beam_size=1; use beam_search or search for others.")
    return search(model, source_ids, settings, **options, beam_size=1)


def beam_search(model, source_ids, beam_size=None, settings=None, **options):
    """`search` with a beam: `beam_size` hypotheses per sentence (None: the settings', by
    default `zoo.search.defaults.BEAM_SIZE`)."""
    if beam_size is not None:
        options["beam_size"] = beam_size
    return search(model, source_ids, settings, **options)


class BeamSampler:
    """keras-hub's name for beam search with `num_beams` hypotheses (`zoo.search.search`)."""

    def __init__(
        self,
        num_beams=defaults.BEAM_SIZE,
        length_penalty=defaults.LENGTH_PENALTY,
        max_length_ratio=defaults.MAX_LENGTH_RATIO,
        max_length_offset=defaults.MAX_LENGTH_OFFSET,
        coverage_penalty=defaults.COVERAGE_PENALTY,
    ):
        lengths = (max_length_ratio, max_length_offset)  # SearchSettings' fields 3 and 4
        self.settings = SearchSettings(
            num_beams, length_penalty, *lengths, return_attention=False,
            coverage_penalty=coverage_penalty,
        )  # fmt: skip

    @property
    def num_beams(self):
        """The beam size K (`settings.beam_size`)."""
        return self.settings.beam_size

    def __call__(self, model, source_ids):
        return search(model, source_ids, self.settings)


class GreedySampler(BeamSampler):
    """keras-hub's name for greedy search: the arg-max token at every step."""

    def __init__(
        self,
        max_length_ratio=defaults.MAX_LENGTH_RATIO,
        max_length_offset=defaults.MAX_LENGTH_OFFSET,
    ):
        super().__init__(1, max_length_ratio=max_length_ratio, max_length_offset=max_length_offset)


class RandomSampler:
    """Draws from the whole distribution (shaped by `temperature` only)."""

    def __init__(
        self,
        temperature=defaults.TEMPERATURE,
        seed=None,
        max_length_ratio=defaults.MAX_LENGTH_RATIO,
        max_length_offset=defaults.MAX_LENGTH_OFFSET,
    ):
        check_sampling(temperature, None, None)
        self.options = dict(
            temperature=temperature,
            seed=seed,
            max_length_ratio=max_length_ratio,
            max_length_offset=max_length_offset,
        )

    def __call__(self, model, source_ids):
        return sample(model, source_ids, **self.options)


class TopKSampler(RandomSampler):
    """Draws from the `k` most likely tokens (Fan et al. 2018)."""

    def __init__(
        self,
        k=5,
        temperature=defaults.TEMPERATURE,
        seed=None,
        max_length_ratio=defaults.MAX_LENGTH_RATIO,
        max_length_offset=defaults.MAX_LENGTH_OFFSET,
    ):
        super().__init__(temperature, seed, max_length_ratio, max_length_offset)
        check_sampling(temperature, k, None)
        self.options["top_k"] = k


class TopPSampler(RandomSampler):
    """Draws from the nucleus: the most likely tokens holding probability `p` (Holtzman et
    al. 2020)."""

    def __init__(
        self,
        p=0.9,
        temperature=defaults.TEMPERATURE,
        seed=None,
        max_length_ratio=defaults.MAX_LENGTH_RATIO,
        max_length_offset=defaults.MAX_LENGTH_OFFSET,
    ):
        super().__init__(temperature, seed, max_length_ratio, max_length_offset)
        check_sampling(temperature, None, p)
        self.options["top_p"] = p
