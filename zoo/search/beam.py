"""Beam search (`beam_size` K > 1): K alive hypotheses per sentence and, aside, a pool of the
K best finished ones (as fairseq and GNMT do).

- At every step each alive hypothesis' END extension is offered to the pool (which keeps
  its K best by rank; an older entry wins a tie), and the K best non-END extensions of the
  alive ones stay alive. A finished hypothesis never competes with alive ones for a beam
  slot, so it is never lost: the result is the best of the pool (its n best with `n_best`).
- Each alive hypothesis first keeps its `min(K + 1, V)` best allowed tokens (so that K of
  them are not END), then the sentence keeps the K best non-END ones of these.
- With `length_penalty = alpha > 0`, finished hypotheses compete in the pool and in the
  final choice by `log_probs / lp(Y)` with GNMT's `lp(Y) = ((5 + |Y|) / 6) ** alpha`
  (Wu et al. 2016, eq. 14), where `|Y|` counts the tokens including END. Alive ones all
  have the same length, so they compete by `log_probs`. With `coverage_penalty = beta > 0`,
  a finished hypothesis' rank also gets GNMT's `cp` (`zoo.search.loop`).
- The loop stops when no sentence has an alive hypothesis (at the latest after `max_b L_b`
  steps), or earlier, as soon as the result can no longer change: for every sentence, the
  pool's best ranks strictly above the best rank any alive hypothesis could still reach
  (`score`, or `score / lp(L_b)` with a length penalty; scores only decrease). The returned
  hypotheses are exactly those of running to the end. Outside XLA, a sentence whose result
  is decided also has its alive hypotheses ended, so that later steps skip their rows.
"""

from keras import ops

from zoo.constants import END_ID, PAD_ID
from zoo.search.loop import NEG_INF, SearchLoop, coverage_penalty, map_structure


class BeamSearch(SearchLoop):
    """One beam search call (`SearchLoop` with K > 1): the alive beam and the finished pool."""

    def loop_vars(self):
        v = super().loop_vars()
        k = self.k
        if self.beta > 0:  # sum of each hypothesis' attention over its steps
            v["coverage"] = ops.zeros((self.rows, self.source_len), dtype="float32")
        if self.keeps_history:  # each alive hypothesis' own tokens (n-gram blocking)
            v["history"] = ops.full((self.rows, self.buffer_len), PAD_ID, dtype="int32")
        v["pool"] = {  # the pool of finished hypotheses: K per sentence
            "rank": ops.full((self.batch, k), NEG_INF, dtype="float32"),
            "score": ops.full((self.batch, k), NEG_INF, dtype="float32"),
            "length": ops.zeros((self.batch, k), dtype="int32"),
            "row": ops.zeros((self.batch, k), dtype="int32"),  # its row at end - 1
        }
        if self.return_attention:
            v["pool"]["attention"] = ops.zeros((self.batch, k, self.source_len), "float32")
        return v

    def history(self, v):
        return v["history"]

    def decided(self, v):
        """(B,) bool: True for a sentence whose result no alive hypothesis can still change.

        Every row inactive; or, with `stop_early`, the pool's best (its n-th best with
        `n_best`) ranks strictly above what any alive hypothesis could still reach: an alive
        score only decreases (log-probs <= 0), and with `alpha > 0` its final rank is at
        most `score / lp(L_b)`, since `lp` grows with the length (<= L_b). Stopping then
        returns what running until every hypothesis ended would return.
        """
        inactive = v["inactive"]
        all_inactive = ops.all(ops.reshape(inactive, (-1, self.k)), axis=1)
        if not self.stop_early:
            return all_inactive
        bound = self.rank(v["scores"], self.row_max_lengths)
        best_alive = ops.max(ops.reshape(ops.where(inactive, NEG_INF, bound), (-1, self.k)), 1)
        n = self.n_best or 1  # the n-th best finished one must be safe from alive ones
        if n == 1:
            best_finished = ops.max(v["pool"]["rank"], axis=1)
        else:
            best_finished = ops.top_k(v["pool"]["rank"], n)[0][:, n - 1]
        # A relative margin covers float rounding of the bound (stopping later is harmless).
        margin = ops.abs(best_alive) * 1e-6
        return ops.logical_or(all_inactive, ops.greater(best_finished, best_alive + margin))

    def finished(self, v):
        return ops.all(self.decided(v))

    def offer_to_pool(self, pool, t, scores, alive, end_value, weights, coverage=None):
        """The pool's K best of itself and this step's END extensions of the alive rows
        (ranked with the coverage penalty of `coverage`, when given)."""
        end_scores = ops.where(alive, scores + end_value[:, 0], NEG_INF)  # (BK,)
        new_rank = self.rank(end_scores, t + 1)
        if coverage is not None:
            new_rank = new_rank + coverage_penalty(coverage, self.row_source_mask, self.beta)
        k = self.k
        candidates = {
            "rank": (pool["rank"], ops.reshape(new_rank, (-1, k))),
            "score": (pool["score"], ops.reshape(end_scores, (-1, k))),
            "length": (pool["length"], ops.full((self.batch, k), t + 1, dtype="int32")),
            "row": (
                pool["row"],
                ops.reshape(ops.arange(self.rows, dtype="int32"), (-1, k)),
            ),
        }
        if self.return_attention:
            if weights is None:
                weights = ops.zeros((self.rows, self.source_len), dtype="float32")
            weights = ops.reshape(ops.cast(weights, "float32"), (self.batch, k, self.source_len))
            candidates["attention"] = (pool["attention"], weights)
        merged = {key: ops.concatenate(pair, axis=1) for key, pair in candidates.items()}
        _, chosen = ops.top_k(merged["rank"], k)  # (B, K) of 2K
        out = {}
        for key, value in merged.items():
            index = chosen[:, :, None] if key == "attention" else chosen
            out[key] = ops.take_along_axis(value, index, axis=1)
        return out

    def body(self, v):
        t, k, alive = v["t"], self.k, ops.logical_not(v["inactive"])
        top_values, top_ids, end_value, new_state, weights = self.step(v)
        coverage = None
        if self.beta > 0:  # this step's weights count for a hypothesis ending now too
            step_weights = 0.0 if weights is None else ops.cast(weights, "float32")
            coverage = v["coverage"] + step_weights
        pool = self.offer_to_pool(v["pool"], t, v["scores"], alive, end_value, weights, coverage)
        # The K best non-END extensions of the alive rows stay alive (none at the limit).
        at_limit = ops.greater_equal(t + 1, self.row_max_lengths)[:, None]
        closed = ops.logical_or(ops.equal(top_ids, END_ID), at_limit)
        closed = ops.logical_or(closed, ops.logical_not(alive)[:, None])
        candidates = ops.where(closed, NEG_INF, v["scores"][:, None] + top_values)
        width = k * self.per_beam  # all alive rows have length t + 1: the plain score ranks
        new_scores, chosen = ops.top_k(ops.reshape(candidates, (-1, width)), k)  # (B, K)
        new_scores = ops.reshape(new_scores, (-1,))
        parents = ops.reshape(self.beam_offsets[:, None] + chosen // self.per_beam, (-1,))
        tokens = ops.take_along_axis(ops.reshape(top_ids, (-1, width)), chosen, axis=1)
        return self.next_variables(
            v, t, tokens, parents, new_scores, new_state, pool, coverage, weights
        )

    def pool_picks(self, v, n):
        """The n best finished hypotheses of each sentence, best first, flattened
        sentence-major to B * n rows: ids (B * n, T_buf), attention and their fields."""
        pool = v["pool"]
        _, order = ops.top_k(pool["rank"], n)  # (B, n); ties: the older (lower) slot
        pick = {
            key: ops.reshape(ops.take_along_axis(pool[key], order, axis=1), (-1,))
            for key in pool
            if key != "attention"
        }
        end = pick["length"] - 1  # (B * n,) the END column (-1: no hypothesis)
        length, picks = self.buffer_len, self.batch * n

        # Back-pointers from each hypothesis' row at column end - 1: row_at[r, s] is the row
        # holding its token of column s.
        flat_parents = ops.reshape(v["parents"], (-1,))

        def back_condition(s, row, row_at):
            return ops.greater_equal(s, 0)

        def back_body(s, row, row_at):
            row = ops.where(ops.equal(s, end - 1), pick["row"], row)
            row_at = ops.slice_update(row_at, [0, s], row[:, None])
            row = ops.take(flat_parents, row * length + s, axis=0)
            return s - 1, row, row_at

        _, _, row_at = ops.while_loop(
            back_condition,
            back_body,
            # From the last END column - 1; an empty batch (max of nothing) starts at -1.
            (
                ops.max(ops.concatenate([end, ops.zeros((1,), "int32")])) - 1,
                pick["row"],
                ops.zeros((picks, length), dtype="int32"),
            ),
        )
        columns = ops.arange(length, dtype="int32")[None, :]
        positions = row_at * length + columns
        ids = ops.take(ops.reshape(v["tokens"], (-1,)), positions, axis=0)
        ids = ops.where(ops.less(columns, end[:, None]), ids, PAD_ID)
        ids = ops.where(ops.equal(columns, end[:, None]), END_ID, ids)
        attention = None
        if self.return_attention:
            flat = ops.reshape(v["attention"], (-1, self.source_len))
            attention = ops.take(flat, ops.reshape(positions, (-1,)), axis=0)
            attention = ops.reshape(attention, (picks, length, self.source_len))
            attention = ops.where(ops.less(columns, end[:, None])[:, :, None], attention, 0.0)
            end_weights = ops.take_along_axis(pool["attention"], order[:, :, None], axis=1)
            end_weights = ops.reshape(end_weights, (picks, 1, self.source_len))
            at_end = ops.equal(columns, end[:, None])[:, :, None]
            attention = ops.where(at_end, end_weights, attention)
        return ids, attention, pick

    def results(self, v):
        ids, attention, pick = self.pool_picks(v, self.n_best or 1)
        return {
            "ids": ids,
            "scores": pick["rank"],
            "lengths": pick["length"],
            "log_probs": pick["score"],
            "attention": attention,
        }

    def next_variables(self, v, t, tokens, parents, new_scores, new_state, pool, coverage, weights):
        """The loop's variables after step t from the K hypotheses chosen per sentence:
        `tokens` (B, K) their last tokens, `parents` (B * K,) the rows they extend,
        `new_scores` (B * K,) their scores (-inf: none chosen, fewer than K candidates or
        at the limit), `new_state` the decoder's state of every row."""
        k = self.k
        dead = ops.equal(new_scores, NEG_INF)
        tokens = ops.cast(ops.where(dead, PAD_ID, ops.reshape(tokens, (-1,))), "int32")
        if self.return_attention and weights is not None:
            weights = ops.take(weights, parents, axis=0)
        out = {
            "t": t + 1,
            "prev_ids": tokens,
            "state": map_structure(lambda x: ops.take(x, parents, axis=0), tuple(new_state)),
            "scores": new_scores,
            "inactive": dead,
            "lengths": ops.where(dead, 0, t + 1),
            "pool": pool,
        }
        if coverage is not None:
            out["coverage"] = ops.take(coverage, parents, axis=0)
        if self.keeps_history:
            history = ops.take(v["history"], parents, axis=0)
            out["history"] = ops.slice_update(history, [0, t], tokens[:, None])
        out.update(self.record(v, t, tokens, parents, dead, weights))
        if self.skip_ended and self.stop_early:
            # A decided sentence's alive hypotheses can no longer be chosen: end them, so
            # later steps skip their output layer too.
            out["inactive"] = ops.logical_or(dead, ops.repeat(self.decided(out), k, axis=0))
        return out
