"""The decoding controls (min_length, ban_unknown, no_repeat_ngram_size) and the forced
prefix of zoo.search.search, against independent references: exhaustive search over the
sequences that follow the rule (a beam wide enough to be exhaustive), a NumPy greedy loop
that applies the rule at each step, and the rule itself on a real tiny model."""

import numpy as np
import pytest
import tensorflow as tf
from search_toy import all_hypotheses, log_softmax, sequence_log_probs, toy_model

from zoo.constants import END_ID, PAD_ID, START_ID, UNK_ID
from zoo.search import beam_search, greedy_search, search, search_function
from zoo.search.controls import StepControls

SOURCES = np.array([[4, 5, 6, 7], [7, 8, 0, 0], [5, 5, 4, 0], [6, 0, 0, 0]], "int32")


def source_length(row):
    return int((np.asarray(row) != PAD_ID).sum())


def repeats_an_ngram(tokens, n):
    """Whether some n-gram occurs twice in `tokens` (the words of a hypothesis)."""
    grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return len(grams) != len(set(grams))


def follows(hypothesis, min_length=0, ban_unknown=False, ngram=0, prefix=()):
    """Whether a hypothesis (ending with END) follows the controls' rules."""
    words = hypothesis[:-1]
    return (
        len(words) >= min_length
        and not (ban_unknown and UNK_ID in words)
        and not (ngram and repeats_an_ngram(words, ngram))
        and list(hypothesis[: len(prefix)]) == list(prefix)
    )


def as_list(row, length):
    return [int(x) for x in np.asarray(row)[:length]]


def greedy_with_controls(
    model, source, max_length, min_length=0, ban_unknown=False, ngram=0, prefix=()
):
    """A plain NumPy arg-max loop over decoder.step applying each rule at each step."""
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    cache = decoder.prepare(*encoder(np.asarray(source, "int32")[None]))
    state = decoder.initial_state(cache)
    max_length = max(max_length, len(prefix) + 1)
    prev, out, total = START_ID, [], 0.0
    for t in range(max_length):
        logits, state, _ = decoder.step(np.array([prev], "int32"), state, cache)
        log_probs = log_softmax(np.asarray(logits, "float64")[0])
        allowed = np.ones(len(log_probs), bool)
        allowed[[PAD_ID, START_ID]] = False
        if ban_unknown:
            allowed[UNK_ID] = False
        if ngram:
            for token in range(len(allowed)):
                if repeats_an_ngram(out + [token], ngram):
                    allowed[token] = False
        others = allowed.copy()
        others[END_ID] = False
        if t < min_length and others.any():
            allowed[END_ID] = False
        if t < len(prefix):
            allowed[:] = False
            allowed[prefix[t]] = True
        if t == max_length - 1:
            allowed[:] = False
            allowed[END_ID] = True
        prev = int(np.argmax(np.where(allowed, log_probs, -np.inf)))
        out.append(prev)
        total += log_probs[prev]
        if prev == END_ID:
            break
    return out, total


def repeating_toy():
    """A toy over 6 target ids (words 3, 4, 5) that likes to repeat its last token."""
    table = np.random.default_rng(3).normal(size=(6, 6)) + np.eye(6)
    table[:, END_ID] -= 1.0
    return toy_model(target_vocab=6, seed=3, transition=table)


CONTROLS = [
    dict(min_length=3),
    dict(ban_unknown=True),
    dict(no_repeat_ngram_size=1),
    dict(no_repeat_ngram_size=2),
    dict(min_length=2, ban_unknown=True, no_repeat_ngram_size=2),
]


def rule_of(controls):
    return dict(
        min_length=controls.get("min_length", 0),
        ban_unknown=controls.get("ban_unknown", False),
        ngram=controls.get("no_repeat_ngram_size", 0),
    )


@pytest.mark.parametrize("controls", CONTROLS + [dict(prefix=True)], ids=str)
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_a_wide_beam_is_the_best_sequence_that_follows_the_rule(controls, alpha):
    """Beam search with a beam wider than every step's candidates equals exhaustive search
    over the sequences that follow the rule; its 3 best are theirs, in order."""
    model = repeating_toy()
    offset = 5  # with ratio 0: at most 4 words and END, 121 hypotheses in all
    sources = SOURCES[:3]
    prefixes = [[4, 4], [], [5]]
    options = dict(length_penalty=alpha, max_length_ratio=0.0, max_length_offset=offset)
    if controls.get("prefix"):
        controls = dict(prefix=prefixes)
    result = beam_search(model, sources, beam_size=128, n_best=3, **options, **controls)
    hypotheses = list(all_hypotheses(6, offset))
    changed = 0
    for i, row in enumerate(sources):
        rule = rule_of(controls)
        if "prefix" in controls:
            rule["prefix"] = prefixes[i]
        log_probs = sequence_log_probs(model, row, hypotheses)
        lengths = np.array([len(h) for h in hypotheses])
        ranked = log_probs / ((5.0 + lengths) / 6.0) ** alpha
        valid = np.array([follows(h, **rule) for h in hypotheses])
        order = np.argsort(-np.where(valid, ranked, -np.inf), kind="stable")[:3]
        changed += not valid[np.argsort(-ranked, kind="stable")[:3]].all()  # the rule matters
        for rank, index in enumerate(order):
            n = int(result.lengths[i, rank])
            assert as_list(result.ids[i, rank], n) == hypotheses[index], (i, rank)
            np.testing.assert_allclose(result.scores[i, rank], ranked[index], rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(
                result.log_probs[i, rank], log_probs[index], rtol=1e-5, atol=1e-5
            )
    assert changed > 0  # the test can tell the controlled search from the plain one


@pytest.mark.parametrize("controls", CONTROLS + [dict(prefix=True)], ids=str)
@pytest.mark.parametrize("step_rows", [True, False])
def test_greedy_equals_a_numpy_loop_that_applies_the_rule(controls, step_rows):
    model = toy_model(seed=2, step_rows=step_rows)
    ratio, offset = 1.0, 4
    prefixes = [[3, 3, 4], [], [6], [5, 5, 5, 5, 5, 5, 5, 5, 5, 5]]  # the last one: past L_b
    if controls.get("prefix"):
        controls = dict(prefix=prefixes)
    result = greedy_search(
        model, SOURCES, max_length_ratio=ratio, max_length_offset=offset, **controls
    )
    for i, row in enumerate(SOURCES):
        n = source_length(row)
        rule = rule_of(controls)
        if "prefix" in controls:
            rule["prefix"] = prefixes[i]
        expected, total = greedy_with_controls(model, row[:n], int(ratio * n) + offset, **rule)
        assert as_list(result.ids[i], int(result.lengths[i])) == expected, i
        assert follows(expected, **{**rule, "min_length": min(rule["min_length"], n + offset - 1)})
        np.testing.assert_allclose(result.log_probs[i], total, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("step_rows", [False, True])
@pytest.mark.parametrize("beam_size", [1, 3])
def test_rows_without_a_prefix_translate_exactly_as_without_the_feature(beam_size, step_rows):
    model = toy_model(seed=4, end_bias=-1.0, step_rows=step_rows)
    # Bitwise, when each step computes every row; else to float rounding (the rows still
    # extending, whose output layer a step computes in one product, differ in number).
    tolerance = dict(rtol=1e-6, atol=1e-6) if step_rows else dict(rtol=0, atol=0)
    plain = search(model, SOURCES, beam_size=beam_size, max_length_offset=4)
    prefixed = search(
        model, SOURCES, beam_size=beam_size, max_length_offset=4, prefix=[[5, 6], [], [4], []]
    )
    for i in (1, 3):
        n = int(plain.lengths[i])
        assert int(prefixed.lengths[i]) == n
        np.testing.assert_array_equal(prefixed.ids[i, :n], plain.ids[i, :n])
        for name in ("scores", "log_probs"):
            np.testing.assert_allclose(
                getattr(prefixed, name)[i], getattr(plain, name)[i], **tolerance
            )
        np.testing.assert_allclose(prefixed.attention[i, :n], plain.attention[i, :n], **tolerance)
    for i, prefix in ((0, [5, 6]), (2, [4])):
        assert as_list(prefixed.ids[i], len(prefix)) == prefix
    # Forms of the same prefixes: a padded array, a tensor, a ragged tensor; all empty = none.
    padded = np.array([[5, 6], [0, 0], [4, 0], [0, 0]], "int32")
    ragged = tf.ragged.constant([[5, 6], [], [4], []], dtype=tf.int32)
    for other in (padded, tf.constant(padded), ragged):
        again = search(model, SOURCES, beam_size=beam_size, max_length_offset=4, prefix=other)
        np.testing.assert_array_equal(again.ids, prefixed.ids)
    none = search(model, SOURCES, beam_size=beam_size, max_length_offset=4, prefix=[[]] * 4)
    np.testing.assert_array_equal(none.ids, plain.ids)


def test_with_every_control_off_the_search_never_reaches_them(monkeypatch):
    """Off is the graph without controls: StepControls.top_k is never called (the
    conditionals are Python's), and explicit off values give bitwise the same result."""
    model = toy_model(seed=2)
    calls = []
    original = StepControls.top_k

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(StepControls, "top_k", counting)
    for beam_size in (1, 3):
        plain = search(model, SOURCES, beam_size=beam_size)
        off = search(
            model, SOURCES, beam_size=beam_size, min_length=0, ban_unknown=False,
            no_repeat_ngram_size=0, prefix=None,
        )  # fmt: skip
        for name in ("ids", "scores", "log_probs", "lengths", "attention"):
            np.testing.assert_array_equal(getattr(off, name), getattr(plain, name))
        search_function(model, beam_size=beam_size)(tf.constant(SOURCES))
    assert calls == []
    search(model, SOURCES, beam_size=2, ban_unknown=True)
    assert calls  # the check can fail


def test_ngram_blocking_on_a_real_tiny_model():
    from zoo import models

    model = models.build(
        "luong_global_general", size="tiny", source_vocab_size=12, target_vocab_size=11
    )
    sources = np.array([[5, 6, 7, 8, 9], [9, 4, 0, 0, 0], [6, 6, 5, 0, 0]], "int32")
    options = dict(max_length_ratio=3.0, max_length_offset=10)  # long: repeats are likely
    for n in (1, 2, 3):
        for beam_size in (1, 4):
            result = search(model, sources, beam_size=beam_size, no_repeat_ngram_size=n, **options)
            for i in range(len(sources)):
                words = as_list(result.ids[i], int(result.lengths[i]) - 1)
                assert not repeats_an_ngram(words, n), (n, beam_size, words)
            nbest = search(model, sources, beam_size=4, n_best=4, no_repeat_ngram_size=n, **options)
            for i in range(len(sources)):
                for rank in range(4):
                    length = int(nbest.lengths[i, rank])
                    if length:
                        words = as_list(nbest.ids[i, rank], length - 1)
                        assert not repeats_an_ngram(words, n), (n, words)
    for row in sources:  # greedy against the NumPy loop on the real model
        n = source_length(row)
        greedy = greedy_search(model, row[None, :n], no_repeat_ngram_size=2, **options)
        expected, _ = greedy_with_controls(model, row[:n], 3 * n + 10, ngram=2)
        assert as_list(greedy.ids[0], int(greedy.lengths[0])) == expected


def test_an_ngram_size_beyond_any_output_costs_no_graph_and_changes_nothing():
    """The n - 1 comparisons run in a loop of the graph: a graph of n = 500 is the size of
    one of n = 2, and n = 2**31 - 1 (longer than any output) is answered as n = 0."""
    model = toy_model(seed=2)

    def graph_size(n):
        traced = tf.function(
            lambda s: search(model, s, beam_size=2, no_repeat_ngram_size=n).ids
        ).get_concrete_function(tf.TensorSpec([None, None], tf.int32))
        graph = traced.graph.as_graph_def()
        return len(graph.node) + sum(len(f.node_def) for f in graph.library.function)

    assert graph_size(500) == graph_size(2)
    for beam_size in (1, 3):
        off = search(model, SOURCES, beam_size=beam_size)
        huge = search(model, SOURCES, beam_size=beam_size, no_repeat_ngram_size=2**31 - 1)
        np.testing.assert_array_equal(huge.ids, off.ids)


def test_the_toy_repeats_without_blocking():
    """(So that the blocking tests above can fail: the plain search repeats n-grams.)"""
    model = toy_model(seed=2)
    result = search(model, SOURCES, beam_size=1)
    words = as_list(result.ids[0], int(result.lengths[0]) - 1)
    assert repeats_an_ngram(words, 2)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_min_length_yields_to_the_length_limit_and_to_an_empty_vocabulary(beam_size):
    model = toy_model(seed=2, end_bias=3.0)  # END likely at once
    result = search(
        model, SOURCES, beam_size=beam_size, max_length_ratio=0.0, max_length_offset=3,
        min_length=10,
    )  # fmt: skip
    np.testing.assert_array_equal(result.lengths, [3, 3, 3, 3])  # the limit, 3, wins
    # Words 4, 5, 6 (UNK banned) used once each: only END is left after three.
    result = search(
        model, SOURCES, beam_size=beam_size, min_length=6, ban_unknown=True,
        no_repeat_ngram_size=1,
    )  # fmt: skip
    np.testing.assert_array_equal(result.lengths, [4, 4, 4, 4])
    for i in range(len(SOURCES)):
        assert sorted(as_list(result.ids[i], 3)) == [4, 5, 6]


def test_a_prefix_longer_than_the_limit_is_kept_whole():
    model = toy_model(seed=2)
    prefix = [[4, 5, 6, 4, 5, 6, 4], [], [3], []]
    for beam_size in (1, 3):
        result = search(
            model, SOURCES, beam_size=beam_size, max_length_ratio=0.0, max_length_offset=2,
            prefix=prefix,
        )  # fmt: skip
        assert as_list(result.ids[0], 8) == prefix[0] + [END_ID]
        assert int(result.lengths[0]) == 8
        assert int(result.lengths[2]) <= 2 and as_list(result.ids[2], 1) == [3]
        assert max(int(result.lengths[i]) for i in (1, 3)) <= 2
    empty = search(model, np.zeros((1, 3), "int32"), beam_size=2, prefix=[[4, 5]])
    assert as_list(empty.ids[0], 3) == [4, 5, END_ID]  # no source: the prefix, then END


@pytest.mark.parametrize("beam_size", [1, 3])
def test_controls_in_tf_function_and_xla_match_eager(beam_size):
    model = toy_model(seed=2)
    options = dict(
        beam_size=beam_size, length_penalty=0.6, max_length_offset=4, min_length=2,
        ban_unknown=True, no_repeat_ngram_size=2,
    )  # fmt: skip
    prefix = np.array([[5, 6], [0, 0], [4, 0], [0, 0]], "int32")
    eager = search(model, SOURCES, **options, prefix=prefix)
    compiled = search(model, SOURCES, jit_compile=True, **options, prefix=prefix)

    @tf.function(
        input_signature=[
            tf.TensorSpec((None, None), tf.int32),
            tf.TensorSpec((None, None), tf.int32),
        ]
    )
    def traced(source_ids, prefix_ids):
        return search(model, source_ids, **options, prefix=prefix_ids)

    for other in (compiled, traced(tf.constant(SOURCES), tf.constant(prefix))):
        np.testing.assert_array_equal(other.ids, eager.ids)
        np.testing.assert_allclose(other.scores, eager.scores, rtol=1e-5, atol=1e-6)
    function = search_function(model, **options)(tf.constant(SOURCES))
    plain = search(model, SOURCES, **options)
    np.testing.assert_array_equal(function.ids, plain.ids)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_controls_as_tensor_inputs_are_one_graph_for_every_value(beam_size):
    """min_length, ban_unknown and no_repeat_ngram_size as a traced function's inputs: one
    trace serves every value, each giving the search of the Python values (0 and False
    included: off)."""
    model = repeating_toy()
    options = dict(beam_size=beam_size, max_length_offset=5)

    @tf.function(
        input_signature=[
            tf.TensorSpec((None, None), tf.int32),
            tf.TensorSpec([], tf.int32),
            tf.TensorSpec([], tf.bool),
            tf.TensorSpec([], tf.int32),
        ]
    )
    def traced(source_ids, min_length, ban_unknown, ngram):
        return search(
            model, source_ids, **options, min_length=min_length, ban_unknown=ban_unknown,
            no_repeat_ngram_size=ngram,
        )  # fmt: skip

    values = [(0, False, 0), (3, False, 0), (0, True, 0), (0, False, 1), (2, True, 2),
              (0, False, 2**31 - 1)]  # fmt: skip
    outputs = set()
    for min_length, ban_unknown, ngram in values:
        got = traced(tf.constant(SOURCES), min_length, ban_unknown, ngram)
        expected = search(
            model, SOURCES, **options, min_length=min_length, ban_unknown=ban_unknown,
            no_repeat_ngram_size=ngram,
        )  # fmt: skip
        np.testing.assert_array_equal(got.ids, expected.ids)
        np.testing.assert_allclose(got.scores, expected.scores, rtol=1e-5, atol=1e-6)
        outputs.add(np.asarray(got.ids).tobytes())
    assert traced.experimental_get_tracing_count() == 1
    assert len(outputs) > 2  # the values change the outputs


def test_tensor_controls_are_refused_where_they_cannot_be():
    from zoo.search import SearchSettings

    with pytest.raises(ValueError, match="min_length as a tensor must be a int32 scalar"):
        SearchSettings(min_length=tf.constant([1, 2]))
    with pytest.raises(ValueError, match="jit_compile=True"):
        SearchSettings(no_repeat_ngram_size=tf.constant(2), jit_compile=True)


def test_coverage_penalty_and_scores_with_a_prefix():
    from zoo.search.loop import COVERAGE_FLOOR

    model = toy_model(seed=4, end_bias=-1.0)
    alpha, beta = 0.6, 0.4
    prefix = [[6, 5], [4], [], [3, 3]]
    result = search(
        model, SOURCES, beam_size=4, length_penalty=alpha, coverage_penalty=beta,
        max_length_offset=4, prefix=prefix, no_repeat_ngram_size=2,
    )  # fmt: skip
    lengths, attention = np.asarray(result.lengths), np.asarray(result.attention)
    for i, row in enumerate(SOURCES):
        n = source_length(row)
        hypothesis = as_list(result.ids[i], lengths[i])
        assert hypothesis[: len(prefix[i])] == prefix[i]
        (expected,) = sequence_log_probs(model, row, [hypothesis])  # the prefix counts
        np.testing.assert_allclose(result.log_probs[i], expected, rtol=1e-5, atol=1e-5)
        coverage = attention[i, : lengths[i], :n].sum(0)
        cp = beta * np.log(np.clip(coverage, COVERAGE_FLOOR, 1.0)).sum()
        score = result.log_probs[i] / ((5.0 + lengths[i]) / 6.0) ** alpha + cp
        np.testing.assert_allclose(result.scores[i], score, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "prefix, message",
    [
        ([[4], [5]], "prefix has 2 rows for 4 source sentences"),
        ([[4, END_ID], [], [], []], "received id 2"),
        ([[START_ID], [], [], []], "START_ID=1"),
        (np.zeros((4, 2, 1), "int32"), "shape \\(batch, prefix_len\\)"),
        (np.zeros((4, 2), "float32"), "integer"),
        ([4, 5, 6, 7], "one list of target ids per sentence"),
        ([[4], [], [7], [5]], "below the model's target vocabulary size 7; received id 7"),
        (["A dog", "", "", ""], "prefix must hold integer target ids"),
    ],
)
def test_bad_prefixes_raise_value_error(prefix, message):
    model = toy_model(seed=2)
    with pytest.raises(ValueError, match=message):
        search(model, SOURCES, beam_size=2, prefix=prefix)
