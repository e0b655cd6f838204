"""Lexically constrained beam search (zoo.search.search(..., constraints=)) against
exhaustive search over the sequences that contain every phrase, and its guarantees: every
output holds every phrase, sentences without constraints translate as without them."""

import numpy as np
import pytest
import tensorflow as tf
from search_toy import all_hypotheses, sequence_log_probs, toy_model

from zoo.constants import END_ID
from zoo.search import beam_search, search

SOURCES = np.array([[4, 5, 6, 7], [7, 8, 0, 0], [5, 5, 4, 0], [6, 0, 0, 0]], "int32")


def contains(tokens, phrase):
    n = len(phrase)
    return any(list(tokens[i : i + n]) == list(phrase) for i in range(len(tokens) - n + 1))


def as_list(row, length):
    return [int(x) for x in np.asarray(row)[:length]]


def repeating_toy():
    """A toy over 6 target ids (words 3, 4, 5) that likes to repeat its last token."""
    table = np.random.default_rng(3).normal(size=(6, 6)) + np.eye(6)
    table[:, END_ID] -= 1.0
    return toy_model(target_vocab=6, seed=3, transition=table)


# Per sentence of SOURCES[:3]: overlapping phrases, a repeated word, none.
CONSTRAINTS = [
    [[[4, 5]], [[3]], []],
    [[[5, 4], [4, 3]], [[4, 4]], [[3], [5]]],
]


@pytest.mark.parametrize("constraints", CONSTRAINTS, ids=["one", "two"])
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_a_wide_beam_is_the_best_sequence_that_contains_every_phrase(constraints, alpha):
    model = repeating_toy()
    offset = 5  # with ratio 0: at most 4 words and END, 121 hypotheses in all
    sources = SOURCES[:3]
    options = dict(length_penalty=alpha, max_length_ratio=0.0, max_length_offset=offset)
    result = beam_search(
        model, sources, beam_size=200, n_best=3, constraints=constraints, **options
    )
    plain = beam_search(model, sources, beam_size=200, **options)
    hypotheses = list(all_hypotheses(6, offset))
    changed = 0
    for i, row in enumerate(sources):
        log_probs = sequence_log_probs(model, row, hypotheses)
        lengths = np.array([len(h) for h in hypotheses])
        ranked = log_probs / ((5.0 + lengths) / 6.0) ** alpha
        valid = np.array([all(contains(h[:-1], p) for p in constraints[i]) for h in hypotheses])
        order = np.argsort(-np.where(valid, ranked, -np.inf), kind="stable")[:3]
        changed += not valid[int(np.argmax(ranked))]
        for rank, index in enumerate(order):
            n = int(result.lengths[i, rank])
            assert as_list(result.ids[i, rank], n) == hypotheses[index], (i, rank)
            np.testing.assert_allclose(result.scores[i, rank], ranked[index], rtol=1e-5, atol=1e-5)
        if not constraints[i]:  # no constraints: the plain search's best, bitwise
            n = int(plain.lengths[i])
            assert as_list(result.ids[i, 0], n) == as_list(plain.ids[i], n)
            np.testing.assert_array_equal(result.scores[i, 0], plain.scores[i])
    assert changed > 0  # the test can tell the constrained search from the plain one


@pytest.mark.parametrize("beam_size", [1, 2, 3, 5])
def test_every_output_holds_every_phrase_even_with_a_narrow_beam(beam_size):
    constraints = [[[4, 4], [3]], [], [[6]], [[5, 3, 4], [8, 8, 8]]]
    for seed in range(3):
        model = toy_model(target_vocab=9, seed=seed, end_bias=2.0)  # short outputs win
        result = search(
            model, SOURCES, beam_size=beam_size, constraints=constraints, max_length_offset=1,
            max_length_ratio=0.5, length_penalty=0.6,
        )  # fmt: skip
        plain = search(
            model, SOURCES, beam_size=beam_size, max_length_offset=1, max_length_ratio=0.5,
            length_penalty=0.6,
        )  # fmt: skip
        for i, phrases in enumerate(constraints):
            n = int(result.lengths[i])
            tokens = as_list(result.ids[i], n)
            assert tokens[-1] == END_ID and END_ID not in tokens[:-1]
            for phrase in phrases:
                assert contains(tokens[:-1], phrase), (seed, i, tokens, phrase)
            (expected,) = sequence_log_probs(model, SOURCES[i], [tokens])
            np.testing.assert_allclose(result.log_probs[i], expected, rtol=1e-5, atol=1e-5)
        # A sentence without constraints: exactly the plain search's (greedy's with K = 1).
        n = int(plain.lengths[1])
        assert int(result.lengths[1]) == n
        assert as_list(result.ids[1], n) == as_list(plain.ids[1], n)
        np.testing.assert_allclose(result.scores[1], plain.scores[1], rtol=1e-6, atol=1e-6)


def test_constraints_with_a_prefix_n_best_and_the_controls():
    model = toy_model(target_vocab=9, seed=4)
    constraints = [[[7, 8]], [[3]], [], [[4], [5]]]
    prefix = [[6], [], [5, 5], [4]]
    result = search(
        model, SOURCES, beam_size=4, n_best=2, constraints=constraints, prefix=prefix,
        no_repeat_ngram_size=3, coverage_penalty=0.2, max_length_offset=4,
    )  # fmt: skip
    for i in range(len(SOURCES)):
        for rank in range(2):
            n = int(result.lengths[i, rank])
            if n == 0:  # fewer finished hypotheses than n_best
                continue
            tokens = as_list(result.ids[i, rank], n)
            assert tokens[: len(prefix[i])] == prefix[i]
            assert all(contains(tokens[:-1], p) for p in constraints[i]), tokens
        assert float(result.scores[i, 0]) >= float(result.scores[i, 1])


@pytest.mark.parametrize("beam_size", [1, 3])
def test_constraints_compiled_and_in_tf_function_match_eager(beam_size):
    model = toy_model(seed=2)
    constraints = np.array(
        [[[4, 4], [3, 0]], [[0, 0], [0, 0]], [[6, 0], [0, 0]], [[5, 3], [4, 0]]], "int32"
    )
    options = dict(beam_size=beam_size, length_penalty=0.6, max_length_offset=4)
    eager = search(model, SOURCES, constraints=constraints, **options)
    compiled = search(model, SOURCES, constraints=constraints, jit_compile=True, **options)
    ragged = search(model, SOURCES, constraints=[[[4, 4], [3]], [], [6], [[5, 3], 4]], **options)

    @tf.function(
        input_signature=[
            tf.TensorSpec((None, None), tf.int32),
            tf.TensorSpec((None, None, None), tf.int32),
        ]
    )
    def traced(source_ids, phrases):
        return search(model, source_ids, constraints=phrases, **options)

    for other in (compiled, ragged, traced(tf.constant(SOURCES), tf.constant(constraints))):
        np.testing.assert_array_equal(other.ids, eager.ids)
        np.testing.assert_allclose(other.scores, eager.scores, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "constraints, message",
    [
        ([[[4]], [[5]]], "constraints has 2 rows for 4 source sentences"),
        ([[[4, END_ID]], [], [], []], "received id 2"),
        ([4, 5, 6, 7], "one list of phrases"),
        (np.zeros((4, 2), "int32"), "shape \\(batch, phrases, phrase_len\\)"),
        (np.zeros((4, 1, 2), "float32"), "integer"),
        ([[[4]], [], [[9, 4]], []], "below the model's target vocabulary size 7"),
        ([["dog"], [], [], []], "constraints must hold integer target ids"),
    ],
)
def test_bad_constraints_raise_value_error(constraints, message):
    model = toy_model(seed=2)
    with pytest.raises(ValueError, match=message):
        search(model, SOURCES, beam_size=2, constraints=constraints)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_a_phrase_the_controls_forbid_gives_no_translation(beam_size):
    model = toy_model(seed=2)
    constraints = [[[4, 4]], [], [[5]], []]
    result = search(
        model, SOURCES, beam_size=beam_size, constraints=constraints, no_repeat_ngram_size=1
    )
    assert int(result.lengths[0]) == 0 and float(result.scores[0]) == -np.inf
    assert np.all(np.asarray(result.ids[0]) == 0)
    for i in (1, 2, 3):
        assert int(result.lengths[i]) > 0 and np.isfinite(float(result.scores[i]))
