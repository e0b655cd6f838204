"""bench/constraints_bench.py's phrases: taken from the reference, never overlapping, in the
reference's order, as many as asked where the reference allows."""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from constraints_bench import reference_phrases  # noqa: E402


def test_phrases_are_disjoint_spans_of_the_reference_in_order():
    reference = "a man in a blue shirt is riding a brown horse on the beach ."
    words = reference.split()
    for seed in range(50):
        phrases = reference_phrases(reference, 2, 3, random.Random(seed))
        assert len(phrases) == 2
        spans = []
        for phrase in phrases:
            length = len(phrase.split())
            assert 1 <= length <= 3
            starts = [i for i in range(len(words)) if words[i : i + length] == phrase.split()]
            spans.append(starts)
        # some choice of occurrences is disjoint and in order
        assert any(s1 + len(phrases[0].split()) <= s2 for s1 in spans[0] for s2 in spans[1]), (
            seed,
            phrases,
        )


def test_a_short_reference_gives_what_it_has():
    assert reference_phrases("", 2, 3, random.Random(0)) == []
    assert reference_phrases("dog", 2, 3, random.Random(0)) == ["dog"]
