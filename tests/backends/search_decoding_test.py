"""Greedy and beam search (`zoo.search.search`) on the backend this process runs, against a
plain arg-max loop and brute force over every output of a tiny vocabulary: the finished
pool, n-best lists, the length and coverage penalties, the decoding controls and a prefix.

The models are tiny presets with peaked random weights (`zoo.testing.search_probe`), so that
no two of the best hypotheses tie within float32 rounding."""

import functools
import math

import keras
import numpy as np
import pytest

from zoo.constants import END_ID, PAD_ID, UNK_ID
from zoo.search import search
from zoo.search.loop import COVERAGE_FLOOR
from zoo.testing.search_probe import (
    SOURCES,
    TARGET_VOCAB,
    all_hypotheses,
    as_numpy,
    build_probe,
    greedy_reference,
    random_weights,
    source_length,
    teacher_forced_log_probs,
)

# A Luong model with input feeding (a bidirectional first layer) and Bahdanau's RNNsearch.
PRESETS = ("luong_global_general", "bahdanau_rnnsearch")
OFFSET = 4  # with max_length_ratio=0 every output has at most 4 tokens: 40 outputs in all
HYPOTHESES = list(all_hypotheses(TARGET_VOCAB, OFFSET))


@functools.cache
def probe(name):
    model = build_probe(name)
    model.set_weights(random_weights(model, seed=1))
    return model


def brute_force(model, alpha):
    """Per source sentence: the teacher-forced log-probabilities of every output and their
    ranks `log_probs / lp(length)`."""
    lengths = np.array([len(h) for h in HYPOTHESES])
    out = []
    for row in SOURCES:
        log_probs = teacher_forced_log_probs(model, row, HYPOTHESES)
        out.append((log_probs, log_probs / ((5.0 + lengths) / 6.0) ** alpha))
    return out


@pytest.mark.parametrize("name", PRESETS)
def test_greedy_is_beam_1_and_the_plain_arg_max_loop(name):
    model, ratio, offset = probe(name), 1.0, 3
    found = search(model, SOURCES, beam_size=1, max_length_ratio=ratio, max_length_offset=offset)
    if keras.backend.backend() == "torch":  # searched under torch.no_grad
        assert not found.scores.requires_grad and not found.attention.requires_grad
    result = as_numpy(found)
    for i, row in enumerate(SOURCES):
        n = source_length(row)
        limit = max(1, math.ceil(ratio * n) + offset)
        expected, total = greedy_reference(model, row[:n], limit)
        length = int(result["lengths"][i])
        assert list(result["ids"][i, :length]) == expected
        assert np.all(result["ids"][i, length:] == PAD_ID)
        np.testing.assert_allclose(result["log_probs"][i], total, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, alpha", [(PRESETS[0], 1.0), (PRESETS[1], 0.0)])
def test_a_wide_beam_finds_the_brute_force_n_best(name, alpha):
    # 48 keeps every candidate of every step (at most 27 alive): the search is exhaustive,
    # and its pool holds the best outputs of all 40, best first.
    model = probe(name)
    n_best = as_numpy(
        search(model, SOURCES, beam_size=48, n_best=5, length_penalty=alpha,
               max_length_ratio=0.0, max_length_offset=OFFSET)
    )  # fmt: skip
    for i, (log_probs, ranks) in enumerate(brute_force(model, alpha)):
        order = np.argsort(-ranks, kind="stable")[:5]
        length = int(n_best["lengths"][i, 0])
        sums = attention_sums(n_best["attention"][i, 0], length)
        np.testing.assert_allclose(sums, 1.0, atol=1e-5)
        for rank, index in enumerate(order):
            m = int(n_best["lengths"][i, rank])
            assert list(n_best["ids"][i, rank, :m]) == HYPOTHESES[index]
            np.testing.assert_allclose(n_best["scores"][i, rank], ranks[index], rtol=1e-5,
                                       atol=1e-5)  # fmt: skip
            np.testing.assert_allclose(n_best["log_probs"][i, rank], log_probs[index],
                                       rtol=1e-5, atol=1e-5)  # fmt: skip


def attention_sums(attention, length):
    """Each output step's attention summed over the source, then the rows after END."""
    sums = attention[:length].sum(-1)
    assert np.all(attention[length:] == 0.0)
    return sums


def test_the_coverage_penalty_is_gnmts_on_the_returned_attention():
    model, alpha, beta = probe(PRESETS[1]), 0.6, 0.4
    result = as_numpy(
        search(model, SOURCES, beam_size=3, length_penalty=alpha, coverage_penalty=beta,
               max_length_offset=OFFSET)
    )  # fmt: skip
    for i, row in enumerate(SOURCES):
        n, length = source_length(row), int(result["lengths"][i])
        coverage = result["attention"][i, :length, :n].sum(0)
        cp = beta * np.log(np.clip(coverage, COVERAGE_FLOOR, 1.0)).sum()
        expected = result["log_probs"][i] / ((5.0 + length) / 6.0) ** alpha + cp
        np.testing.assert_allclose(result["scores"][i], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, beam_size", [(PRESETS[0], 3), (PRESETS[1], 1)])
def test_controls_and_a_prefix_shape_the_output(name, beam_size):
    model, prefix = probe(name), [[4], [], [5, 4]]
    result = as_numpy(
        search(model, SOURCES, beam_size=beam_size, min_length=3, ban_unknown=True,
               prefix=prefix, max_length_offset=OFFSET)
    )  # fmt: skip
    for i, row in enumerate(SOURCES):
        length = int(result["lengths"][i])
        output = list(result["ids"][i, :length])
        assert length >= 4 and output[: len(prefix[i])] == prefix[i]
        assert UNK_ID not in output
        expected = teacher_forced_log_probs(model, row, [output])[0]
        np.testing.assert_allclose(result["log_probs"][i], expected, rtol=1e-5, atol=1e-5)


def test_no_repeat_ngram_size_1_never_repeats_a_token():
    result = as_numpy(search(probe(PRESETS[0]), SOURCES, beam_size=3, no_repeat_ngram_size=1))
    for ids, length in zip(result["ids"], result["lengths"], strict=True):
        words = list(ids[: int(length) - 1])
        assert len(set(words)) == len(words)


def test_every_output_holds_its_constraints():
    constraints = [[[5, 4]], [], [[3], [5]]]
    result = as_numpy(search(probe(PRESETS[1]), SOURCES, beam_size=4, constraints=constraints))
    for ids, length, phrases in zip(result["ids"], result["lengths"], constraints, strict=True):
        output = list(ids[: int(length)])
        assert output[-1] == END_ID
        for phrase in phrases:
            assert any(output[j : j + len(phrase)] == phrase for j in range(len(output)))


@pytest.mark.skipif(keras.backend.backend() == "tensorflow", reason="TensorFlow traces it")
def test_search_function_names_the_backend_it_needs():
    from zoo.search import search_function

    with pytest.raises(ValueError, match="compile_search"):
        search_function(probe(PRESETS[0]), beam_size=2)
