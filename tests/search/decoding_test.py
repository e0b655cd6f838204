"""Greedy and beam search (zoo.search.search) against a toy model (search_toy.py), a plain
greedy loop and brute force."""

import math

import numpy as np
import pytest
import tensorflow as tf
from search_toy import (
    all_hypotheses,
    greedy_reference,
    log_softmax,
    sequence_log_probs,
    toy_model,
)

from zoo.constants import END_ID, PAD_ID
from zoo.search import (
    SearchResult,
    beam_search,
    greedy_search,
    length_penalty_factor,
    search,
    search_function,
)
from zoo.search.compile import padded_search, trim
from zoo.search.controls import top_k_allowed
from zoo.search.settings import SearchSettings

# Right-padded sources of lengths 4, 2, 3, 1 (ids 4..8 are words).
SOURCES = np.array([[4, 5, 6, 7], [7, 8, 0, 0], [5, 5, 4, 0], [6, 0, 0, 0]], "int32")


def source_length(row):
    return int((np.asarray(row) != PAD_ID).sum())


def max_length(row, ratio, offset):
    return max(1, math.ceil(np.float32(ratio) * np.float32(source_length(row))) + offset)


@pytest.fixture(scope="module")
def model():
    return toy_model(seed=2)


def check_well_formed(result, batch):
    """Every row: tokens, END at lengths-1, then PAD; attention zero from the END step on."""
    ids, lengths = np.asarray(result.ids), np.asarray(result.lengths)
    assert ids.dtype == np.int32 and ids.shape[0] == batch
    assert result.scores.shape == (batch,) and lengths.shape == (batch,)
    assert ids.shape[1] == lengths.max()  # the loop stops when all have finished
    for row, n in zip(ids, lengths, strict=True):
        assert row[n - 1] == END_ID
        assert END_ID not in row[: n - 1] and PAD_ID not in row[: n - 1]
        assert np.all(row[n:] == PAD_ID)
    if result.attention is not None:
        attention = np.asarray(result.attention)
        for a, n in zip(attention, lengths, strict=True):
            np.testing.assert_allclose(a[:n].sum(-1), 1.0, atol=1e-5)
            assert np.all(a[n:] == 0.0)


def test_beam_1_equals_a_plain_greedy_loop(model):
    ratio, offset = 1.0, 3
    result = search(model, SOURCES, beam_size=1, max_length_ratio=ratio, max_length_offset=offset)
    check_well_formed(result, len(SOURCES))
    for i, row in enumerate(SOURCES):
        expected, total = greedy_reference(
            model, row[: source_length(row)], max_length(row, ratio, offset)
        )
        got = np.asarray(result.ids[i])
        assert list(got[: len(expected)]) == expected
        np.testing.assert_allclose(result.log_probs[i], total, rtol=1e-5, atol=1e-5)
    wrapped = greedy_search(model, SOURCES, max_length_ratio=ratio, max_length_offset=offset)
    np.testing.assert_array_equal(wrapped.ids, result.ids)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_wide_beam_finds_the_brute_force_best(alpha):
    model = toy_model(target_vocab=6, seed=3, end_bias=-1.5)  # long hypotheses win
    offset = 4  # with ratio 0 every sentence may emit 4 tokens: 40 hypotheses in all
    hypotheses = list(all_hypotheses(6, offset))
    sources = SOURCES[:3]
    # 48 >= the number of finite candidates at any step, so the beam is exhaustive.
    result = beam_search(
        model,
        sources,
        beam_size=48,
        length_penalty=alpha,
        max_length_ratio=0.0,
        max_length_offset=offset,
    )
    check_well_formed(result, len(sources))
    for i, row in enumerate(sources):
        log_probs = sequence_log_probs(model, row, hypotheses)
        lengths = np.array([len(h) for h in hypotheses])
        ranked = log_probs / ((5.0 + lengths) / 6.0) ** alpha
        best = int(np.argmax(ranked))
        n = int(result.lengths[i])
        assert list(np.asarray(result.ids[i, :n])) == hypotheses[best]
        np.testing.assert_allclose(result.scores[i], ranked[best], rtol=1e-5, atol=1e-5)
        narrow = beam_search(
            model,
            row[None],
            beam_size=2,
            length_penalty=alpha,
            max_length_ratio=0.0,
            max_length_offset=offset,
        )
        assert float(narrow.scores[0]) <= float(result.scores[i]) + 1e-5


def markov_model(probabilities):
    """A toy whose next-token distribution depends only on the previous token (mix=0)."""
    vocab = 7
    table = np.full((vocab, vocab), -1e4, "float32")  # log-probs ~ -inf unless listed
    for prev, row in probabilities.items():
        for token, p in row.items():
            table[prev, token] = np.log(p)
    return toy_model(target_vocab=vocab, transition=table, mix=0.0)


def test_beam_escapes_the_greedy_garden_path():
    a, b, c, d = 3, 4, 5, 6
    model = markov_model(
        {
            1: {a: 0.5, b: 0.4, END_ID: 0.1},  # from START
            a: {END_ID: 0.3, a: 0.175, b: 0.175, c: 0.175, d: 0.175},
            b: {END_ID: 0.9, a: 0.025, b: 0.025, c: 0.025, d: 0.025},
            c: {END_ID: 1.0},
            d: {END_ID: 1.0},
            END_ID: {a: 1.0},
        }
    )
    source = [[4, 5]]
    greedy = greedy_search(model, source, length_penalty=0.0)
    assert list(np.asarray(greedy.ids[0])) == [a, END_ID]
    np.testing.assert_allclose(greedy.scores[0], math.log(0.5 * 0.3), rtol=1e-5)
    beam = beam_search(model, source, beam_size=2, length_penalty=0.0)
    assert list(np.asarray(beam.ids[0])) == [b, END_ID]
    np.testing.assert_allclose(beam.scores[0], math.log(0.4 * 0.9), rtol=1e-5)


def test_beam_keeps_its_best_finished_hypothesis():
    # The first step's [END] (p = 0.25, log -1.386) is beaten for a beam slot by two live
    # words (p = 0.375 each) whose every continuation ends far lower. A beam of 2 that kept
    # finished hypotheses among the live ones lost [END] and returned a worse one.
    a, b = 3, 4
    model = markov_model(
        {
            1: {a: 0.375, b: 0.375, END_ID: 0.25},
            a: {a: 0.5, b: 0.5},  # END ~ impossible: forced at the length limit
            b: {a: 0.5, b: 0.5},
        }
    )
    for alpha in (0.0, 1.0):
        beam = beam_search(model, [[4, 5]], beam_size=2, length_penalty=alpha)
        assert list(np.asarray(beam.ids[0])) == [END_ID]
        np.testing.assert_allclose(beam.log_probs[0], math.log(0.25), rtol=1e-5)
        np.testing.assert_allclose(beam.log_probs[0], -1.386, atol=1e-3)


def test_empty_sources_translate_to_end_alone(model):
    for beam_size in (1, 3):
        empty = search(model, np.zeros((2, 0), "int32"), beam_size=beam_size)
        np.testing.assert_array_equal(empty.ids, [[END_ID], [END_ID]])
        np.testing.assert_array_equal(empty.lengths, [1, 1])
        mixed = search(model, np.array([[0, 0], [4, 5]], "int32"), beam_size=beam_size)
        assert list(np.asarray(mixed.ids[0])[:1]) == [END_ID] and int(mixed.lengths[0]) == 1
        alone = search(model, np.array([[4, 5]], "int32"), beam_size=beam_size)
        n = int(alone.lengths[0])
        np.testing.assert_array_equal(np.asarray(mixed.ids[1])[:n], np.asarray(alone.ids[0])[:n])


def test_scores_are_teacher_forced_log_probs_with_length_penalty():
    model = toy_model(seed=4, end_bias=-20.0)  # END costly: the penalty favours long ones
    alpha = 0.7
    result = search(model, SOURCES, beam_size=5, length_penalty=alpha, max_length_offset=4)
    assert np.asarray(result.lengths).max() >= 4  # long enough for beams to be reordered
    check_well_formed(result, len(SOURCES))
    lengths = np.asarray(result.lengths)
    for i, row in enumerate(SOURCES):
        hypothesis = list(np.asarray(result.ids[i, : lengths[i]]))
        (expected,) = sequence_log_probs(model, row, [hypothesis])
        np.testing.assert_allclose(result.log_probs[i], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        result.scores, np.asarray(result.log_probs) / ((5.0 + lengths) / 6.0) ** alpha, rtol=1e-6
    )


def test_finished_hypotheses_stay_finished():
    # After END this model would continue with word 3 (p = 1); the search must only pad.
    rng = np.random.default_rng(0)
    table = rng.normal(size=(7, 7)).astype("float32")
    table[1, END_ID] = -1e4  # no empty translations, so that lengths differ
    table[END_ID, :] = -1e4
    table[END_ID, 3] = 0.0
    model = toy_model(target_vocab=7, transition=table, mix=0.3)
    greedy = search(model, SOURCES, beam_size=1, max_length_offset=6)
    check_well_formed(greedy, len(SOURCES))
    assert len(set(np.asarray(greedy.lengths))) > 1  # some ended while others continued
    # Beam search keeps finished hypotheses aside: its result is well formed too.
    check_well_formed(search(model, SOURCES, beam_size=4, max_length_offset=6), len(SOURCES))


def test_maximum_length_is_per_sentence_and_forces_end():
    never_end = {prev: {3: 0.6, 4: 0.4} for prev in range(7)}  # END has p ~ 0
    model = markov_model(never_end)
    ratio, offset = 1.5, 2
    expected = [max_length(row, ratio, offset) for row in SOURCES]  # 8, 5, 7, 4
    greedy = greedy_search(model, SOURCES, max_length_ratio=ratio, max_length_offset=offset)
    check_well_formed(greedy, len(SOURCES))
    np.testing.assert_array_equal(greedy.lengths, expected)  # END forced at each one's limit
    assert greedy.ids.shape[1] == max(expected)
    # Every hypothesis pays END's cost once: beam search returns the shortest, [END].
    beam = beam_search(
        model,
        SOURCES,
        beam_size=3,
        length_penalty=0.0,
        max_length_ratio=ratio,
        max_length_offset=offset,
    )
    check_well_formed(beam, len(SOURCES))
    np.testing.assert_array_equal(beam.lengths, [1, 1, 1, 1])


def test_length_penalty_factor_is_gnmt():
    lengths = np.array([1, 7, 20])
    for alpha in (0.0, 0.6, 1.0, 2.0):
        np.testing.assert_allclose(
            length_penalty_factor(lengths, alpha), ((5.0 + lengths) / 6.0) ** alpha, rtol=1e-6
        )
    assert float(length_penalty_factor(7, 1.0)) == 2.0


@pytest.mark.parametrize("beam_size", [1, 3])
def test_tf_function_and_xla_match_eager(model, beam_size):
    options = dict(beam_size=beam_size, length_penalty=0.6, max_length_offset=4)
    eager = search(model, SOURCES, **options)
    # search_function: a tf.function with input signature (None, None), for export.
    traced_fn = search_function(model, **options)
    traced = traced_fn(tf.constant(SOURCES))
    compiled = search(model, SOURCES, jit_compile=True, **options)  # XLA
    assert isinstance(traced, SearchResult) and isinstance(compiled, SearchResult)
    for other in (traced, compiled):
        np.testing.assert_array_equal(other.ids, eager.ids)
        np.testing.assert_array_equal(other.lengths, eager.lengths)
        np.testing.assert_allclose(other.scores, eager.scores, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(other.attention, eager.attention, atol=1e-5)
    alone = traced_fn(tf.constant(SOURCES[3:, :1]))  # another shape: no retracing
    assert len(traced_fn._list_all_concrete_functions()) == 1
    np.testing.assert_array_equal(alone.ids[0], eager.ids[3, : alone.ids.shape[1]])


def test_padding_and_batch_do_not_change_a_translation(model):
    # (greedy: covered by test_beam_1_equals_a_plain_greedy_loop, sentence by sentence)
    beam_size = 4
    wide = np.pad(SOURCES, ((0, 0), (0, 3)))  # extra all-pad columns
    batch = search(model, wide, beam_size=beam_size, length_penalty=0.5)
    for i, row in enumerate(SOURCES):
        n = source_length(row)
        alone = search(model, row[None, :n], beam_size=beam_size, length_penalty=0.5)
        t = alone.ids.shape[1]
        np.testing.assert_array_equal(batch.ids[i, :t], alone.ids[0])
        assert np.all(np.asarray(batch.ids[i, t:]) == PAD_ID)
        np.testing.assert_allclose(batch.scores[i], alone.scores[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(batch.attention[i, :t, :n], alone.attention[0], atol=1e-5)
        assert np.all(np.asarray(batch.attention[i, :, n:]) == 0.0)


def test_without_attention(model):
    result = search(model, SOURCES, beam_size=2, return_attention=False, max_length_offset=3)
    assert result.attention is None
    with_attention = search(model, SOURCES, beam_size=2, max_length_offset=3)
    np.testing.assert_array_equal(result.ids, with_attention.ids)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(source_ids=[4, 5, 6]), "shape \\(batch, source_len\\)"),
        (dict(source_ids=np.zeros((1, 2, 3), "int32")), "rank 3"),
        (dict(source_ids=np.array([[4.0, 5.0]])), "integer"),
        (dict(beam_size=0), "beam_size"),
        (dict(beam_size=2.0), "beam_size"),
        (dict(beam_size=10**6), "at most 1024"),
        (dict(length_penalty=-1.0), "length_penalty"),
        (dict(max_length_ratio=float("nan")), "max_length_ratio"),
        (dict(max_length_offset=-1), "max_length_offset"),
    ],
)
def test_bad_arguments_raise_value_error(model, kwargs, message):
    arguments = dict(source_ids=SOURCES)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        search(model, **arguments)


def test_model_without_encoder_and_decoder_is_rejected():
    import keras

    inputs = keras.Input((None,), dtype="int32")
    plain = keras.Model(inputs, keras.layers.Embedding(5, 2)(inputs))
    with pytest.raises(ValueError, match="'encoder' and 'decoder'"):
        search(plain, SOURCES)


@pytest.mark.parametrize("vocab_size, k", [(8000, 1), (8000, 5), (7931, 5), (7, 3), (640, 48)])
def test_top_k_allowed_equals_a_masked_top_k(vocab_size, k):
    rng = np.random.default_rng(vocab_size + k)
    rows = [rng.normal(size=vocab_size) * 3]
    rows.append(rng.integers(0, 4, size=vocab_size).astype(float))  # many ties
    peak = rng.normal(size=vocab_size)
    peak[[PAD_ID, 1]] = 50.0  # PAD and START would win; they are never emitted
    rows.append(peak)
    late = np.full(vocab_size, -3.0)
    late[-k:] = 1.0  # the best tokens in the last chunk
    rows.append(late)
    logits = np.stack(rows).astype("float32")
    values, ids, log_norm = top_k_allowed(tf.constant(logits), k, vocab_size)
    masked = logits.copy()
    masked[:, [PAD_ID, 1]] = -np.inf
    expected_ids = np.argsort(-masked, axis=1, kind="stable")[:, :k]  # ties: lowest id first
    np.testing.assert_array_equal(ids, expected_ids)
    reference = log_softmax(logits.astype("float64"))
    np.testing.assert_allclose(
        values, np.take_along_axis(reference, expected_ids, axis=1), rtol=1e-6, atol=1e-5
    )
    np.testing.assert_allclose(logits - np.asarray(log_norm), reference, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_stopping_once_decided_returns_what_running_to_the_end_returns(alpha):
    stopped_earlier = 0
    for seed in range(6):
        model = toy_model(target_vocab=9, seed=seed, end_bias=0.5 * (seed % 3))
        settings = SearchSettings(3 + seed % 3, alpha, 1.5, 6, True)
        early = padded_search(model, tf.constant(SOURCES), settings)
        full = padded_search(model, tf.constant(SOURCES), settings, stop_early=False)
        stopped_earlier += int(early["steps"]) < int(full["steps"])
        early, full = trim(early), trim(full)
        for name in ("ids", "lengths"):
            np.testing.assert_array_equal(getattr(early, name), getattr(full, name), err_msg=name)
        # The same hypotheses; their floats within rounding (on AVX2 a softmax row of the
        # attention sums to 1 - 6e-8 in one graph and to 1 in the other).
        for name in ("scores", "log_probs", "attention"):
            np.testing.assert_allclose(
                getattr(early, name), getattr(full, name), rtol=1e-6, atol=1e-6, err_msg=name
            )
    assert stopped_earlier > 0  # the check can tell the two apart


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_skipping_ended_rows_returns_what_computing_every_row_returns(alpha):
    """The step for live rows only (and decided sentences ended) changes nothing:
    against the same search over a decoder without `rows`, and with skipping off."""
    skipped_rows = 0
    for seed in range(4):
        kwargs = dict(target_vocab=9, seed=seed, end_bias=0.5 * (seed % 3))
        rows_model, plain_model = toy_model(**kwargs), toy_model(**kwargs, step_rows=False)
        plain_model.set_weights(rows_model.get_weights())
        settings = SearchSettings(1 + seed % 3, alpha, 1.5, 6, True)
        decoder = rows_model.get_layer("decoder")
        decoder.step_sizes.clear()
        skipped = trim(padded_search(rows_model, tf.constant(SOURCES), settings))
        batch_rows = len(SOURCES) * settings.beam_size
        skipped_rows += sum(batch_rows - size for size in decoder.step_sizes)
        for reference in (
            padded_search(plain_model, tf.constant(SOURCES), settings),
            padded_search(rows_model, tf.constant(SOURCES), settings, skip_ended=False),
        ):
            reference = trim(reference)
            for name in ("ids", "lengths"):
                np.testing.assert_array_equal(getattr(skipped, name), getattr(reference, name))
            for name in ("scores", "log_probs", "attention"):
                np.testing.assert_allclose(
                    getattr(skipped, name), getattr(reference, name), rtol=1e-5, atol=1e-6
                )
    assert skipped_rows > 0  # the steps did get fewer rows


@pytest.mark.parametrize("beam_size", [1, 2])
def test_chunked_top_k_search_equals_the_plain_one(monkeypatch, beam_size):
    import zoo.search.controls as top_k

    model = toy_model(target_vocab=512, seed=5)  # large enough for chunks of 64
    assert top_k.chunk_size(512, beam_size) is not None
    chunked = search(model, SOURCES, beam_size=beam_size, max_length_offset=3)
    monkeypatch.setattr(top_k, "CHUNK", 10**6)  # plain top-k over the vocabulary
    assert top_k.chunk_size(512, beam_size) is None
    plain = search(model, SOURCES, beam_size=beam_size, max_length_offset=3)
    np.testing.assert_array_equal(chunked.ids, plain.ids)
    np.testing.assert_allclose(chunked.scores, plain.scores, rtol=1e-6, atol=1e-6)
    if beam_size == 1:
        for i, row in enumerate(SOURCES):
            expected, _ = greedy_reference(
                model, row[: source_length(row)], max_length(row, 1.5, 3)
            )
            assert list(np.asarray(chunked.ids[i, : len(expected)])) == expected


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_n_best_equals_the_brute_force_ranking(alpha):
    # An exhaustive beam (as in the brute-force test above): its 5 best are the 5 best of
    # all hypotheses, in order, and each score is the teacher-forced log-probability.
    model = toy_model(target_vocab=6, seed=3, end_bias=-1.5)
    offset, n = 4, 5
    hypotheses = list(all_hypotheses(6, offset))
    sources = SOURCES[:3]
    options = dict(length_penalty=alpha, max_length_ratio=0.0, max_length_offset=offset)
    result = beam_search(model, sources, beam_size=48, n_best=n, **options)
    assert result.ids.shape[:2] == (3, n) and result.scores.shape == (3, n)
    best = beam_search(model, sources, beam_size=48, **options)
    np.testing.assert_array_equal(result.ids[:, 0, : best.ids.shape[1]], best.ids)
    for i, row in enumerate(sources):
        log_probs = sequence_log_probs(model, row, hypotheses)
        lengths = np.array([len(h) for h in hypotheses])
        ranked = log_probs / ((5.0 + lengths) / 6.0) ** alpha
        order = np.argsort(-ranked, kind="stable")[:n]
        for rank, index in enumerate(order):
            m = int(result.lengths[i, rank])
            assert list(np.asarray(result.ids[i, rank, :m])) == hypotheses[index]
            np.testing.assert_allclose(result.scores[i, rank], ranked[index], rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(
                result.log_probs[i, rank], log_probs[index], rtol=1e-5, atol=1e-5
            )
    with pytest.raises(ValueError, match="n_best must be"):
        beam_search(model, sources, beam_size=2, n_best=3)
    greedy = search(model, sources, beam_size=1, n_best=1)
    np.testing.assert_array_equal(greedy.ids[:, 0], search(model, sources, beam_size=1).ids)


def test_coverage_penalty_is_gnmts_on_the_returned_attention():
    # score = log_probs / lp + beta * sum_j log(min(max(c_j, 1e-6), 1)), c_j the returned
    # hypothesis' attention on source position j summed over its steps (END included).
    from zoo.search.loop import COVERAGE_FLOOR

    model = toy_model(seed=4, end_bias=-1.0)
    alpha, beta = 0.6, 0.4
    result = search(
        model, SOURCES, beam_size=4, length_penalty=alpha, coverage_penalty=beta,
        max_length_offset=4,
    )  # fmt: skip
    check_well_formed(result, len(SOURCES))
    lengths, attention = np.asarray(result.lengths), np.asarray(result.attention)
    for i, row in enumerate(SOURCES):
        n = source_length(row)
        coverage = attention[i, : lengths[i], :n].sum(0)
        cp = beta * np.log(np.clip(coverage, COVERAGE_FLOOR, 1.0)).sum()
        expected = result.log_probs[i] / ((5.0 + lengths[i]) / 6.0) ** alpha + cp
        np.testing.assert_allclose(result.scores[i], expected, rtol=1e-5, atol=1e-5)
    plain = search(model, SOURCES, beam_size=4, length_penalty=alpha, max_length_offset=4)
    explicit = search(
        model, SOURCES, beam_size=4, length_penalty=alpha, coverage_penalty=0.0,
        max_length_offset=4,
    )  # fmt: skip
    np.testing.assert_array_equal(plain.ids, explicit.ids)
    with pytest.raises(ValueError, match="coverage_penalty"):
        search(model, SOURCES, beam_size=4, coverage_penalty=-1.0)


def test_an_empty_batch_searches_and_samples_eagerly():
    """B = 0, eagerly: fields with a batch axis of 0, without running the loop."""
    from zoo.search import sample

    model = toy_model(seed=1)
    empty = np.zeros((0, 4), "int32")
    for beam_size, n_best in ((1, None), (2, None), (2, 2)):
        result = search(model, empty, beam_size=beam_size, n_best=n_best)
        lead = (0,) if n_best is None else (0, 2)
        assert tuple(result.ids.shape)[: len(lead)] == lead
        assert tuple(result.attention.shape) == (*lead, 0, 4)
    assert tuple(sample(model, empty, seed=0).ids.shape)[0] == 0
