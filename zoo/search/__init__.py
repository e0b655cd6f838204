"""zoo.search: greedy and beam search (with n-best lists, length and coverage penalties) and
sampling (temperature, top-k, top-p) over a model's decoder step (docs/design.md)."""

from zoo.search.decoding import (
    beam_search,
    greedy_search,
    length_penalty_factor,
    search,
    search_function,
)
from zoo.search.sampling import (
    BeamSampler,
    GreedySampler,
    RandomSampler,
    TopKSampler,
    TopPSampler,
    check_sampling,
    sample,
)
from zoo.search.search_result import SearchResult

__all__ = [
    "BeamSampler",
    "GreedySampler",
    "RandomSampler",
    "SearchResult",
    "TopKSampler",
    "TopPSampler",
    "check_sampling",
    "sample",
    "beam_search",
    "greedy_search",
    "length_penalty_factor",
    "search",
    "search_function",
]
