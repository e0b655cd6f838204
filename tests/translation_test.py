"""Tests of zoo.translation's batching runner, which the Translator and the
SavedModelTranslator share: sorted batches, results in input order."""

import numpy as np
import pytest

from zoo.translation import check_sentences, run_in_batches


def test_batches_run_longest_first_and_results_come_back_in_input_order():
    sentences = ["bb", "a", "", "dddd", "cc", "eee", "ff"]
    seen = []

    def call(strings, start):
        texts = [s.decode() for s in strings.numpy()]
        seen.append((start, texts))
        return {"echo": np.array(texts, object), "length": np.array([len(t) for t in texts])}

    outputs = run_in_batches(sentences, 3, call)
    assert [o["echo"] for o in outputs] == sentences
    assert [int(o["length"]) for o in outputs] == [len(s) for s in sentences]
    # Longest first by characters; equal lengths keep their input order.
    assert seen == [(0, ["dddd", "eee", "bb"]), (3, ["cc", "ff", "a"]), (6, [""])]
    assert run_in_batches([], 3, call) == []
    # Lengths the caller counted (tokens) decide instead of characters.
    seen.clear()
    counted = run_in_batches(sentences, 4, call, lengths=[1, 1, 0, 1, 3, 1, 2])
    assert counted == outputs
    assert seen == [(0, ["cc", "ff", "bb", "a"]), (4, ["dddd", "eee", ""])]


def test_check_sentences_names_what_it_received():
    assert check_sentences(("a", "b")) == ["a", "b"]
    with pytest.raises(ValueError, match="single string"):
        check_sentences("a")
    with pytest.raises(ValueError, match="index 1"):
        check_sentences(["a", None])


def test_extras_follow_their_sentences_into_the_batches():
    sentences = ["bb", "a", "", "dddd", "cc"]
    extras = [f"extra of {s!r}" for s in sentences]

    def call(strings, start, rows):
        texts = [s.decode() for s in strings.numpy()]
        assert rows == [f"extra of {t!r}" for t in texts]
        return {"extra": np.array(rows, object)}

    outputs = run_in_batches(sentences, 2, call, extras=extras)
    assert [o["extra"] for o in outputs] == extras
    with pytest.raises(ValueError, match="2 values for 5 sentences"):
        run_in_batches(sentences, 2, call, extras=extras[:2])
