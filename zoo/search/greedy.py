"""Greedy search (`beam_size=1`): one hypothesis per sentence, extended with the arg-max token
at every step (ties go to the lowest id); once it emitted END it extends only with PAD at
zero cost and its length stops growing. The loop stops once every sentence has ended."""

from keras import ops

from zoo.constants import END_ID, PAD_ID
from zoo.search.loop import SearchLoop


class GreedySearch(SearchLoop):
    """One greedy search call (`SearchLoop` with K = 1)."""

    def body(self, v):
        t, finished = v["t"], v["inactive"]
        top_values, top_ids, end_value, new_state, weights = self.step(v)
        # At its length limit a row may only emit END; a finished row only PAD, at zero cost.
        at_limit = ops.greater_equal(t + 1, self.row_max_lengths)
        values = ops.where(at_limit, end_value[:, 0], top_values[:, 0])
        tokens = ops.where(at_limit, END_ID, top_ids[:, 0])
        values = ops.where(finished, 0.0, values)
        tokens = ops.cast(ops.where(finished, PAD_ID, tokens), "int32")
        out = {
            "t": t + 1,
            "prev_ids": tokens,
            "state": tuple(new_state),
            "scores": v["scores"] + values,
            "inactive": ops.logical_or(finished, ops.equal(tokens, END_ID)),
            "lengths": ops.where(finished, v["lengths"], t + 1),
        }
        out.update(
            self.record(v, t, tokens, ops.arange(self.rows, dtype="int32"), finished, weights)
        )
        return out

    def finished(self, v):
        return ops.all(v["inactive"])

    def results(self, v):
        scores, lengths = v["scores"], v["lengths"]
        return {
            "ids": v["tokens"],
            "scores": self.rank(scores, lengths),
            "lengths": lengths,
            "log_probs": scores,
            "attention": v.get("attention"),
        }
