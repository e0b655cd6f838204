"""zoo.search: greedy and beam search over a model's decoder step (docs/design.md)."""

from zoo.search.decoding import (
    beam_search,
    greedy_search,
    length_penalty_factor,
    search,
    search_function,
)
from zoo.search.search_result import SearchResult

__all__ = [
    "SearchResult",
    "beam_search",
    "greedy_search",
    "length_penalty_factor",
    "search",
    "search_function",
]
