"""Lexically constrained beam search: target phrases that must appear in every output, by
dynamic beam allocation (Post & Vilar 2018), with the finished pool, n-best lists, the
length and coverage penalties and the decoding controls of `zoo.search.beam`.

A sentence's constraints are phrases of target ids; an output satisfies them when each
phrase occurs in it as consecutive tokens (in any order; overlaps allowed). The search:
- tracks, for every hypothesis, which phrases it contains (`met`, read off its own tokens
  at each step, so that overlaps and repeated words count exactly) and, for each phrase not
  met, the longest end of the hypothesis that begins the phrase (`partial`);
- scores, besides each hypothesis' K + 1 best tokens, the next token of each phrase not met
  (the one that extends `partial`), so that progress is always a candidate;
- sorts the candidates into banks by progress, `bank = sum of the met phrases' lengths +
  the largest partial of the others` (all constraint tokens when every phrase is met), and
  gives each bank `max(1, K // (C + 1))` of the K beam slots (C: the sentence's constraint
  tokens), higher banks first, then fills the slots left with the best remaining
  candidates by score;
- lets a hypothesis end (offer END to the pool) only once every phrase is met.
The hypothesis of the highest bank always keeps a slot and its next constraint token is
always a candidate, so the highest bank grows by one each step until every phrase is met:
each sentence's length limit is raised to at least its prefix's and constraints' tokens + 1,
and every output holds every constraint. With a beam wide enough to keep every candidate
the search is exhaustive: the best output among those that contain every phrase.

The decoding controls apply to constraint tokens too: a phrase they forbid (a repeated word
under `no_repeat_ngram_size=1`, UNK under `ban_unknown`) cannot be met, and its sentence
gets no translation (length 0, score -inf).

`beam_size=1` runs this search with one slot (END ends a hypothesis whose best token it is,
as greedy search does); a sentence without constraints translates exactly as without them.
"""

import numpy as np
from keras import ops

from zoo.constants import END_ID, PAD_ID
from zoo.search.beam import BeamSearch
from zoo.search.controls import NEG_INF, checked_ids, integer_rows


def check_constraints(constraints, batch=None, vocab_size=None):
    """`constraints` as a (B, C, L) int32 tensor of phrases, 0 = pad (None when no sentence
    has one).

    Accepts one list per sentence of phrases, each a list of target ids (or one id), or a
    (B, C, L) int array or tensor. Eagerly, a ValueError for another shape, a batch of
    another size than `batch`, or ids that are START, END, negative or past `vocab_size`."""
    if constraints is None:
        return None
    if not hasattr(constraints, "shape") or not hasattr(constraints, "dtype"):
        sentences = list(constraints)
        phrases = []
        for sentence in sentences:
            if isinstance(sentence, int | np.integer) or not hasattr(sentence, "__iter__"):
                raise ValueError(
                    "constraints must be one list of phrases (lists of target ids) per "
                    f"sentence; received {constraints!r}."
                )
            rows = integer_rows(sentence, "constraints", constraints)
            phrases.append([row for row in rows if row.size])
        count = max([len(p) for p in phrases], default=0)
        width = max([row.size for p in phrases for row in p], default=0)
        padded = np.zeros((len(phrases), count, width), "int64")
        for i, rows in enumerate(phrases):
            for j, row in enumerate(rows):
                padded[i, j, : row.size] = row
        constraints = padded
    axes = ("batch", "phrases", "phrase_len")
    checked = checked_ids(constraints, "constraints", axes, "list of phrases", batch, vocab_size)
    return None if 0 in tuple(constraints.shape)[1:] else checked  # no phrase at all


def phrase_lengths(phrases):
    """(..., C) int32: each phrase's number of ids before its first pad."""
    real = ops.cast(ops.not_equal(phrases, PAD_ID), "int32")
    return ops.sum(ops.cumprod(real, axis=-1), axis=-1)


def prefix_matches(history, t, phrases):
    """(R, C, L) bool: [r, c, j] is True when the last j of row r's t tokens equal the first
    j ids of its phrase c (j = 0..L-1; always True for j = 0)."""
    width = ops.shape(phrases)[-1]
    j = ops.arange(width, dtype="int32")[:, None]  # (L, 1) suffix length
    i = ops.arange(width, dtype="int32")[None, :]  # (1, L) position in the phrase
    columns = ops.clip(t - j + i, 0, ops.shape(history)[1] - 1)  # (L, L)
    tokens = ops.take(history, ops.reshape(columns, (-1,)), axis=1)  # (R, L * L)
    tokens = ops.reshape(tokens, (-1, 1, width, width))  # (R, 1, j, i)
    equal = ops.logical_or(ops.equal(tokens, phrases[:, :, None, :]), ops.greater_equal(i, j))
    return ops.logical_and(ops.all(equal, axis=-1), ops.less_equal(j[:, 0], t))


class ConstrainedBeamSearch(BeamSearch):
    """Beam search whose outputs hold every constraint phrase (dynamic beam allocation).

    Args: those of `SearchLoop`, and `constraints`, (B, C, L) int32 phrases (0 = pad).
    """

    def __init__(self, model, source_ids, settings, stop_early, skip_ended, prefix, constraints):
        lengths = phrase_lengths(constraints)  # (B, C)
        totals = ops.sum(lengths, axis=1)  # (B,) constraint tokens of each sentence
        shape = ops.shape(constraints)
        bound = shape[1] * shape[2]
        super().__init__(
            model, source_ids, settings, stop_early, skip_ended, prefix, (totals, bound)
        )
        self.keeps_history = True
        if self.k == 1:  # as greedy search: no coverage penalty
            self.beta = 0.0
        repeat = (lambda x: ops.repeat(x, self.k, axis=0)) if self.k > 1 else (lambda x: x)
        self.phrases, self.lengths = repeat(constraints), repeat(lengths)  # (BK, C, L), (BK, C)
        self.quota = ops.maximum(self.k // (totals + 1), 1)  # (B,) slots per bank
        self.banks = bound + 1

    def tokens_per_row(self, n_vocab):
        return min(self.k + 1, n_vocab)  # also with K = 1: one non-END token remains

    def loop_vars(self):
        v = super().loop_vars()
        v["met"] = ops.zeros(ops.shape(self.lengths), dtype="bool")
        return v

    def progress(self, v):
        """Each row's next token of each phrase (BK, C) (the one that extends the longest
        end of the row that begins it), whether the phrase is still to meet (BK, C), and
        `prefix_matches` (BK, C, L)."""
        matches = prefix_matches(v["history"], v["t"], self.phrases)
        width = ops.shape(self.phrases)[-1]
        below = ops.less(ops.arange(width, dtype="int32"), self.lengths[:, :, None])
        partial = ops.max(
            ops.where(ops.logical_and(matches, below), ops.arange(width, dtype="int32"), 0),
            axis=-1,
        )
        next_ids = ops.take_along_axis(
            self.phrases, ops.minimum(partial, width - 1)[:, :, None], axis=2
        )[:, :, 0]
        usable = ops.logical_and(ops.logical_not(v["met"]), ops.greater(self.lengths, 0))
        return next_ids, usable, matches

    def candidate_progress(self, v, ids, matches):
        """met (BK, W, C) and bank (BK, W) of each row's extension by `ids` (BK, W)."""
        width = ops.shape(self.phrases)[-1]
        # matches[..., j] and the token equal to id j of the phrase: a match of length j + 1.
        grows = ops.logical_and(
            matches[:, None], ops.equal(ids[:, :, None, None], self.phrases[:, None])
        )  # (BK, W, C, L)
        reach = ops.arange(1, width + 1, dtype="int32")  # j + 1
        lengths = self.lengths[:, None, :, None]
        whole = ops.any(ops.logical_and(grows, ops.equal(reach, lengths)), axis=-1)
        met = ops.logical_and(
            ops.logical_or(v["met"][:, None], whole), ops.greater(self.lengths[:, None], 0)
        )
        part = ops.max(
            ops.where(ops.logical_and(grows, ops.less(reach, lengths)), reach, 0), axis=-1
        )
        done = ops.sum(ops.where(met, self.lengths[:, None], 0), axis=-1)
        return met, done + ops.max(ops.where(met, 0, part), axis=-1)

    def allocate(self, scores, banks):
        """The K chosen of each sentence's W candidates (B, W): positions (B, K), bank
        quotas first (higher banks first, then by score), then the best by score; and
        whether each slot got a candidate (B, K) (fewer than K may be finite)."""
        k, width = self.k, ops.shape(scores)[1]
        sorted_scores, order = ops.top_k(scores, width)  # ties: the lower index first
        sorted_banks = ops.take_along_axis(banks, order, axis=1)
        one_hot = ops.cast(
            ops.equal(sorted_banks[:, :, None], ops.arange(self.banks, dtype="int32")), "int32"
        )
        rank = ops.sum((ops.cumsum(one_hot, axis=1) - 1) * one_hot, axis=-1)  # in its bank
        finite = ops.greater(sorted_scores, NEG_INF)
        quota_ok = ops.logical_and(finite, ops.less(rank, self.quota[:, None]))
        position = ops.arange(width, dtype="int32")[None, :]
        key = ops.cast(sorted_banks * (width + 1) - rank, "float32")
        _, first = ops.top_k(ops.where(quota_ok, key, NEG_INF), k)
        rest = ops.logical_and(finite, ops.logical_not(quota_ok))
        _, second = ops.top_k(ops.where(rest, -ops.cast(position, "float32"), NEG_INF), k)
        count = ops.minimum(ops.sum(ops.cast(quota_ok, "int32"), axis=1, keepdims=True), k)
        more = ops.sum(ops.cast(rest, "int32"), axis=1, keepdims=True)
        slot = ops.arange(k, dtype="int32")[None, :]
        later = ops.take_along_axis(second, ops.maximum(slot - count, 0), axis=1)
        chosen = ops.where(ops.less(slot, count), first, later)  # sorted positions
        return ops.take_along_axis(order, chosen, axis=1), ops.less(slot, count + more)

    def body(self, v):
        t, k, alive = v["t"], self.k, ops.logical_not(v["inactive"])
        next_ids, usable, matches = self.progress(v)
        extra_ids = ops.where(usable, next_ids, PAD_ID)
        top_values, top_ids, end_value, new_state, weights, extra = self.step(v, extra_ids)
        # A phrase's next token once per row: not among the row's best, nor an earlier phrase's.
        seen = ops.any(ops.equal(extra_ids[:, :, None], top_ids[:, None, :]), axis=-1)
        count = ops.shape(extra_ids)[1]
        earlier = ops.less(ops.arange(count)[None, :], ops.arange(count)[:, None])  # (C, C)
        twice = ops.any(
            ops.logical_and(ops.equal(extra_ids[:, :, None], extra_ids[:, None, :]), earlier),
            axis=-1,
        )
        keep = ops.logical_and(usable, ops.logical_not(ops.logical_or(seen, twice)))
        ids = ops.concatenate([top_ids, extra_ids], axis=1)  # (BK, W1)
        values = ops.concatenate([top_values, ops.where(keep, extra, NEG_INF)], axis=1)
        complete = ops.all(ops.logical_or(v["met"], ops.equal(self.lengths, 0)), axis=1)
        end_value = ops.where(complete[:, None], end_value, NEG_INF)  # END once all are met
        at_limit = ops.greater_equal(t + 1, self.row_max_lengths)[:, None]
        if k == 1:  # as greedy search: END ends a hypothesis whose best token it is
            best_is_end = ops.logical_and(ops.equal(top_ids[:, :1], END_ID), complete[:, None])
            end_value = ops.where(ops.logical_or(best_is_end, at_limit), end_value, NEG_INF)
        coverage = None
        if self.beta > 0:
            coverage = v["coverage"] + (0.0 if weights is None else ops.cast(weights, "float32"))
        pool = self.offer_to_pool(v["pool"], t, v["scores"], alive, end_value, weights, coverage)
        closed = ops.logical_or(ops.equal(ids, END_ID), at_limit)
        closed = ops.logical_or(closed, ops.logical_not(alive)[:, None])
        if k == 1:
            closed = ops.logical_or(closed, best_is_end)
        candidates = ops.where(closed, NEG_INF, v["scores"][:, None] + values)
        met, banks = self.candidate_progress(v, ids, matches)
        row_width = ops.shape(ids)[1]
        width = k * row_width
        flat = ops.reshape(candidates, (-1, width))
        chosen, filled = self.allocate(flat, ops.reshape(banks, (-1, width)))  # (B, K)
        new_scores = ops.where(filled, ops.take_along_axis(flat, chosen, axis=1), NEG_INF)
        new_scores = ops.reshape(new_scores, (-1,))
        parents = ops.reshape(self.beam_offsets[:, None] + chosen // row_width, (-1,))
        tokens = ops.take_along_axis(ops.reshape(ids, (-1, width)), chosen, axis=1)
        flat_met = ops.reshape(met, (-1, width, ops.shape(met)[-1]))
        new_met = ops.take_along_axis(flat_met, chosen[:, :, None], axis=1)
        out = self.next_variables(
            v, t, tokens, parents, new_scores, new_state, pool, coverage, weights
        )
        out["met"] = ops.reshape(new_met, ops.shape(v["met"]))
        return out
