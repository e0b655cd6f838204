import random

import pytest

from zoo.data import assign_splits


def test_no_sentence_on_either_side_is_in_two_splits():
    rng = random.Random(0)
    english = [f"e{rng.randrange(300)}" for _ in range(3000)]
    other = [f"o{rng.randrange(2000)}" for _ in range(3000)]
    assignment = assign_splits(english, other, 0.1, 0.1, seed=3)
    for column in (english, other):
        where = {}
        for sentence, split in zip(column, assignment, strict=True):
            assert where.setdefault(sentence, split) == split


def test_deterministic_and_independent_of_order():
    english = [f"sentence {i % 500}" for i in range(2000)]
    other = [f"satz {i}" for i in range(2000)]
    first = assign_splits(english, other, seed=7)
    assert first == assign_splits(english, other, seed=7)
    order = list(range(2000))
    random.Random(1).shuffle(order)
    shuffled = assign_splits([english[i] for i in order], [other[i] for i in order], seed=7)
    assert shuffled == [first[i] for i in order]
    assert first != assign_splits(english, other, seed=8)


def test_fractions_are_respected_roughly():
    english = [f"s{i}" for i in range(20000)]
    assignment = assign_splits(english, english, val_fraction=0.1, test_fraction=0.2)
    assert abs(assignment.count("val") / 20000 - 0.1) < 0.01
    assert abs(assignment.count("test") / 20000 - 0.2) < 0.01


@pytest.mark.parametrize("val, test", [(-0.1, 0.1), (0.6, 0.5), (1.0, 0.0)])
def test_bad_fractions(val, test):
    with pytest.raises(ValueError, match="fraction"):
        assign_splits(["a"], ["b"], val, test)
