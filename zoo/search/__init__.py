"""zoo.search: greedy and beam search (with n-best lists, length and coverage penalties, the
decoding controls min_length, ban_unknown and no_repeat_ngram_size, and forced target
prefixes) and sampling (temperature, top-k, top-p) over a model's decoder step
(docs/design.md).

`search(model, source_ids, ...)` is the entry, on TensorFlow, JAX and PyTorch alike;
`SearchSettings` lists its settings, whose defaults live in `zoo.search.defaults`;
`compile_search(model, settings)` is the search compiled for the Keras backend (what
`search` runs); the samplers (`GreedySampler`, `BeamSampler`, ...) take keras-hub's names.
"""

from zoo.search import defaults
from zoo.search.compile import compile_search, search_function
from zoo.search.decoding import (
    BeamSampler,
    GreedySampler,
    RandomSampler,
    TopKSampler,
    TopPSampler,
    beam_search,
    greedy_search,
    search,
)
from zoo.search.loop import length_penalty_factor
from zoo.search.sampling import check_sampling, sample
from zoo.search.settings import SearchResult, SearchSettings

__all__ = [
    "BeamSampler",
    "GreedySampler",
    "RandomSampler",
    "SearchResult",
    "SearchSettings",
    "TopKSampler",
    "TopPSampler",
    "beam_search",
    "check_sampling",
    "compile_search",
    "defaults",
    "greedy_search",
    "length_penalty_factor",
    "sample",
    "search",
    "search_function",
]
