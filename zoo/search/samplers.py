"""keras-hub's sampler names (`keras_hub.samplers`) over `zoo.search.search` and
`zoo.search.sample`: `GreedySampler`, `BeamSampler(num_beams)`, `RandomSampler(temperature)`,
`TopKSampler(k)` and `TopPSampler(p)`; each is a callable
`sampler(model, source_ids) -> SearchResult`, its defaults those of `zoo.search.defaults`;
the search samplers hold their `SearchSettings`, checked once when made.

Example:
    >>> TopPSampler(p=0.9, seed=1)(model, source_ids).ids                   # doctest: +SKIP
"""

from zoo.search import defaults
from zoo.search.decoding import search
from zoo.search.sampling import check_sampling, sample
from zoo.search.settings import SearchSettings


class GreedySampler:
    """keras-hub's name for greedy search: the arg-max token at every step."""

    def __init__(
        self,
        max_length_ratio=defaults.MAX_LENGTH_RATIO,
        max_length_offset=defaults.MAX_LENGTH_OFFSET,
    ):
        self.settings = SearchSettings(
            beam_size=1,
            max_length_ratio=max_length_ratio,
            max_length_offset=max_length_offset,
            return_attention=False,
        )

    def __call__(self, model, source_ids):
        return search(model, source_ids, self.settings)


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
        self.num_beams = num_beams
        self.settings = SearchSettings(
            beam_size=num_beams,
            length_penalty=length_penalty,
            max_length_ratio=max_length_ratio,
            max_length_offset=max_length_offset,
            coverage_penalty=coverage_penalty,
            return_attention=False,
        )

    def __call__(self, model, source_ids):
        return search(model, source_ids, self.settings)


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
