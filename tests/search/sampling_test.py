"""Sampling (zoo.search.sampling, zoo.search.samplers) against the softmax it draws from: a chi-square test of
token frequencies, the support of top-k and top-p, reproducibility, keras-hub's names."""

import math

import numpy as np
import pytest
from search_toy import log_softmax, toy_model

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.search import search
from zoo.search.samplers import (
    BeamSampler,
    GreedySampler,
    RandomSampler,
    TopKSampler,
    TopPSampler,
)
from zoo.search.sampling import sample, shaped_logits

V = 7
# From START the next token has fixed probabilities (mix=0: a Markov chain of the previous
# token); after any word END is all but certain, so each draw is one token then END.
FIRST = np.array([0.0, 0.0, 0.10, 0.40, 0.25, 0.15, 0.10])  # PAD, START, END, words 3..6


def _chain():
    table = np.full((V, V), -1e4, "float32")
    table[START_ID, 2:] = np.log(FIRST[2:])
    table[3:, END_ID] = 0.0
    return toy_model(target_vocab=V, transition=table, mix=0.0)


@pytest.fixture(scope="module")
def chain():
    return _chain()


def _first_tokens(model, n, **options):
    sources = np.tile(np.array([[4, 5]], "int32"), (n, 1))
    result = sample(model, sources, seed=7, **options)
    return np.asarray(result.ids)[:, 0], result


def test_token_frequencies_match_the_softmax(chain):
    # Chi-square goodness of fit over the 5 allowed first tokens, 4 degrees of freedom:
    # 18.47 is the 0.999 quantile. A sampler that ignored the probabilities, or drew PAD or
    # START, fails it.
    n = 4000
    first, result = _first_tokens(chain, n)
    counts = np.bincount(first, minlength=V)
    assert counts[PAD_ID] == counts[START_ID] == 0
    expected = n * FIRST[2:]
    chi2 = float(((counts[2:] - expected) ** 2 / expected).sum())
    assert chi2 < 18.47, (counts, chi2)
    # Scores are the model's own log-probabilities of the drawn tokens.
    ids, lengths = np.asarray(result.ids), np.asarray(result.lengths)
    scores = np.asarray(result.log_probs)
    for row, n_tokens, score in zip(ids[:50], lengths[:50], scores[:50], strict=True):
        assert n_tokens == (1 if row[0] == END_ID else 2)  # a word, then END (p ~ 1)
        np.testing.assert_allclose(score, math.log(FIRST[row[0]]), atol=1e-3)


def test_top_k_and_top_p_draw_only_from_their_support(chain):
    first, _ = _first_tokens(chain, 600, top_k=2)
    assert set(first) == {3, 4}  # the two most likely
    first, _ = _first_tokens(chain, 600, top_p=0.6)  # 0.40 + 0.25 >= 0.6
    assert set(first) == {3, 4}
    first, _ = _first_tokens(chain, 600, top_p=0.3)  # the most likely alone holds 0.40
    assert set(first) == {3}
    first, _ = _first_tokens(chain, 600, temperature=0.05)  # nearly the arg-max
    assert set(first) == {3}


def test_shaped_logits_against_numpy():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 9)).astype("float32")
    shaped = np.asarray(shaped_logits(logits, temperature=2.0, top_k=3))
    reference = logits / 2.0
    reference[:, [PAD_ID, START_ID]] = -np.inf
    for row, ref in zip(shaped, reference, strict=True):
        keep = np.argsort(-ref)[:3]
        np.testing.assert_allclose(row[keep], ref[keep], rtol=1e-6)
        assert np.all(np.isneginf(np.delete(row, keep)))
    probs = np.exp(log_softmax(reference))
    nucleus = np.asarray(shaped_logits(logits, temperature=2.0, top_p=0.5))
    for row, p in zip(nucleus, probs, strict=True):
        order = np.argsort(-p)
        needed = int(np.searchsorted(np.cumsum(p[order]), 0.5) + 1)
        assert set(np.flatnonzero(np.isfinite(row))) == set(order[:needed])


def test_a_seed_reproduces_the_draws_and_lengths_are_bounded():
    model = toy_model(seed=5, end_bias=-3.0)
    sources = np.array([[4, 5, 6, 7], [7, 8, 0, 0]], "int32")
    a = sample(model, sources, seed=3, max_length_offset=4)
    b = sample(model, sources, seed=3, max_length_offset=4)
    np.testing.assert_array_equal(a.ids, b.ids)
    ids, lengths = np.asarray(a.ids), np.asarray(a.lengths)
    for row, n, limit in zip(ids, lengths, (10, 7), strict=True):  # ceil(1.5 n) + 4
        assert 1 <= n <= limit and row[n - 1] == END_ID and np.all(row[n:] == PAD_ID)
    others = [np.asarray(sample(model, sources, seed=s, max_length_offset=4).ids) for s in range(4)]
    assert any(o.shape != ids.shape or np.any(o != ids) for o in others)  # seeds differ


def test_keras_hub_names():
    model = toy_model(seed=2)
    sources = np.array([[4, 5, 6], [6, 7, 0]], "int32")
    greedy = search(model, sources, beam_size=1, return_attention=False)
    np.testing.assert_array_equal(GreedySampler()(model, sources).ids, greedy.ids)
    beam = search(model, sources, beam_size=3, length_penalty=1.0, return_attention=False)
    np.testing.assert_array_equal(BeamSampler(num_beams=3)(model, sources).ids, beam.ids)
    for sampler, options in (
        (RandomSampler(seed=1), {}),
        (TopKSampler(k=2, seed=1), {"top_k": 2}),
        (TopPSampler(p=0.5, seed=1), {"top_p": 0.5}),
    ):
        np.testing.assert_array_equal(
            sampler(model, sources).ids, sample(model, sources, seed=1, **options).ids
        )
    for bad in (dict(temperature=0.0), dict(top_k=0), dict(top_p=1.5), dict(top_p=0.0)):
        with pytest.raises(ValueError):
            sample(model, sources, **bad)
