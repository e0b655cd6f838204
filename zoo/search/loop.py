"""What greedy and beam search share: the encoded source, the decoder step, the length
limits, and GNMT's penalties.

GNMT's length and coverage penalties (Wu et al. 2016, eq. 14), by which beam search ranks
finished hypotheses: `log_probs / lp(Y) + cp(X; Y)`.

The loop that greedy and beam search share (`SearchLoop`): the encoded source, the loop's
variables, the decoder step and its buffers.

The source is encoded once; with K > 1 every tensor of the decoder's cache and state is
tiled to `(B * K, ...)` (batch-major: row `b * K + k` is beam `k` of sentence `b`). The loop
is a `keras.ops.while_loop` over fixed-shape buffers, so the search runs eagerly, inside
`tf.function`, and compiled with XLA (`jit_compile=True`).

Rules both searches follow:
- Each step scores a hypothesis' extensions with a float32 `log_softmax` of the decoder's
  logits (also when the model computes in float16), evaluated only at the few best tokens
  of each row (`top_k_allowed`: a chunked top-k over the vocabulary, then
  `logits - logsumexp(logits)` there). `PAD_ID` and `START_ID` are never emitted.
- Sentence `b` may produce at most `L_b = max(1, ceil(max_length_ratio * n_b) +
  max_length_offset)` tokens, END included, where `n_b` is its number of non-pad source ids
  (the product is computed in float32), and `L_b = 1` when `n_b = 0`: a source with no
  tokens (also a batch of shape (B, 0)) gives END alone. At step `L_b` the only allowed
  token is `END_ID`, so every hypothesis ends with END.
- Outside XLA (eagerly and in `tf.function`), a step runs the decoder (its recurrence,
  attention and output layer) and the top-k only for the rows still extending
  (`decoder.step(..., rows=)`, when the decoder's step takes it). Ended rows cost nothing
  more; the returned hypotheses do not change.
"""

import inspect

import numpy as np
from keras import ops

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.search.controls import NEG_INF, StepControls, prefix_lengths, top_k_allowed
from zoo.search.settings import check_model

COVERAGE_FLOOR = 1e-6  # the coverage penalty's floor on a source position's attention sum


def length_penalty_factor(lengths, alpha):
    """GNMT's length penalty `lp(Y) = ((5 + |Y|) / 6) ** alpha` (Wu et al. 2016, eq. 14).

    Args:
        lengths: int tensor of hypothesis lengths (tokens including END).
        alpha: the `length_penalty` strength, a float >= 0 (0 gives 1 everywhere).
    Returns:
        a float32 tensor shaped like `lengths`.

    Example:
        >>> float(length_penalty_factor(7, 1.0))
        2.0
    """
    lengths = ops.cast(lengths, "float32")
    return ops.power((5.0 + lengths) / 6.0, float(alpha))


def coverage_penalty(coverage, source_mask, beta):
    """GNMT's `cp = beta * sum_j log(min(c_j, 1))` over the real source positions.

    Args:
        coverage: (R, Ts) float32, c_j: each hypothesis' attention on source position j
            summed over its steps; floored at `COVERAGE_FLOOR`, so that a position never
            attended costs a finite amount.
        source_mask: (R, Ts) bool, True at real source positions.
        beta: the `coverage_penalty` strength, a float >= 0.
    Returns:
        (R,) float32.
    """
    clipped = ops.clip(coverage, COVERAGE_FLOOR, 1.0)
    logs = ops.where(source_mask, ops.log(clipped), 0.0)
    return beta * ops.sum(logs, axis=1)


def map_structure(fn, structure):
    """Applies `fn` to every tensor of a nest of dicts/lists/tuples (None left alone)."""
    if structure is None:
        return None
    if isinstance(structure, dict):
        return {key: map_structure(fn, value) for key, value in structure.items()}
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*(map_structure(fn, value) for value in structure))
    if isinstance(structure, list | tuple):
        return type(structure)(map_structure(fn, value) for value in structure)
    return fn(structure)


def max_length(source_len, ratio, offset):
    """`max(1, ceil(ratio * source_len) + offset)`, float32 product, int32 result.

    (Per sentence, `SearchLoop` gives a source with no tokens the limit 1: END alone.)"""
    if isinstance(source_len, int | np.integer):
        product = np.float32(ratio) * np.float32(source_len)
        return max(1, int(np.ceil(product)) + int(offset))
    product = ops.cast(source_len, "float32") * np.float32(ratio)
    return ops.maximum(ops.cast(ops.ceil(product), "int32") + int(offset), 1)


def loop_params(decoder):
    """The decoder's `loop_params` for a search (None where it has none): without the
    kernels' transposes where it takes `pretransposed`, since a search takes no gradient
    (`zoo.models.recurrence.gru_params`)."""
    if not hasattr(decoder, "loop_params"):
        return None
    if "pretransposed" in inspect.signature(decoder.loop_params).parameters:
        return decoder.loop_params(pretransposed=False)
    return decoder.loop_params()


class SearchLoop:
    """One search call: the encoded source, the loop's variables and the decoder step.

    Subclasses (`GreedySearch`, `BeamSearch`) give the loop's `body`, when it is
    `finished`, and its `results`; `run` runs it.

    Args:
        model: a translation model (layers "encoder" and "decoder", docs/design.md).
        source_ids: (B, Ts) int32.
        settings: a `SearchSettings`.
        stop_early: stop once no alive hypothesis can change the result (beam search).
        skip_ended: compute the output layer only for the rows still extending.
        prefix: None, or (B, P) int32 target ids each output starts with (0 = pad).
        min_tokens: None, or (tokens, bound): (B,) int32 tokens each output must have room
            for after its prefix, before END (the constraints'), and an upper bound of them
            (an int when known): the length limits and the buffers are raised to fit.
    """

    def __init__(
        self, model, source_ids, settings, stop_early, skip_ended, prefix=None, min_tokens=None
    ):
        self.n_best = settings.n_best  # None: the best one, (B, ...); n: the n best, (B, n, ...)
        self.beta = settings.coverage_penalty  # GNMT's coverage penalty (beam search only)
        self.encoder, self.decoder = check_model(model)
        self.k, self.alpha = settings.beam_size, settings.length_penalty
        if source_ids.shape[1] == 0:  # (B, 0): the encoders need one (padding) column
            source_ids = ops.zeros((ops.shape(source_ids)[0], 1), dtype="int32")
        self.return_attention, self.stop_early = settings.return_attention, stop_early
        self.batch = ops.shape(source_ids)[0]
        self.source_len = ops.shape(source_ids)[1]
        self.rows = self.batch * self.k
        memory, source_mask, encoder_states = self.encoder(source_ids, training=False)
        cache = self.decoder.prepare(memory, source_mask, encoder_states)
        state = tuple(self.decoder.initial_state(cache))
        if self.k > 1:
            cache = map_structure(lambda x: ops.repeat(x, self.k, axis=0), cache)
            state = map_structure(lambda x: ops.repeat(x, self.k, axis=0), state)
        self.cache, self.initial = cache, state
        real = ops.not_equal(source_ids, PAD_ID)  # (B, Ts)
        self.row_source_mask = ops.repeat(real, self.k, axis=0) if self.k > 1 else real
        lengths = ops.sum(ops.cast(ops.not_equal(source_ids, PAD_ID), "int32"), axis=1)
        ratio, offset = settings.max_length_ratio, settings.max_length_offset
        # A sentence with no source tokens translates to END alone (the empty string).
        max_lengths = ops.where(ops.equal(lengths, 0), 1, max_length(lengths, ratio, offset))
        self.buffer_len = max_length(self.source_len, ratio, offset)
        # Room before END for the prefix and `min_tokens`: each sentence's limit is at
        # least their tokens + 1, the buffers at least their bound + 1 (static if known).
        needed, room = 0, 0
        if min_tokens is not None:
            tokens, room = min_tokens
            needed = ops.cast(tokens, "int32")
        if prefix is not None:
            # One pad column more, so that every step reads a column.
            prefix = ops.concatenate([prefix, ops.zeros((self.batch, 1), "int32")], axis=1)
            needed = prefix_lengths(prefix) + needed
            room = room + ops.shape(prefix)[1] - 1
        if min_tokens is not None or prefix is not None:
            max_lengths = ops.maximum(max_lengths, needed + 1)
            if isinstance(room, int) and isinstance(self.buffer_len, int):
                self.buffer_len = max(self.buffer_len, room + 1)
            else:
                self.buffer_len = ops.maximum(self.buffer_len, room + 1)
        if prefix is not None:
            prefix = ops.repeat(prefix, self.k, axis=0) if self.k > 1 else prefix
        self.step_limit = ops.max(max_lengths)
        self.row_max_lengths = ops.repeat(max_lengths, self.k, axis=0)  # (BK,)
        self.controls = StepControls(settings, prefix, self.row_max_lengths)
        self.keeps_history = self.controls.needs_history  # rows' own tokens (beam search)
        self.beam_offsets = ops.arange(self.batch, dtype="int32") * self.k  # (B,)
        # Kernel slices and casts every step reads, made once outside the loop (a decoder
        # without `loop_params` only needs prepare/initial_state/step).
        self.params = loop_params(self.decoder)
        self.skip_ended = skip_ended and "rows" in inspect.signature(self.decoder.step).parameters
        self.per_beam = None  # tokens kept per row, set at the first step (needs V)

    def loop_vars(self):
        """The loop's variables at the start: one live hypothesis per sentence."""
        k, rows, length = self.k, self.rows, self.buffer_len
        # Only beam 0 of each sentence is live at the start (all K beams would be identical).
        first = np.array([0.0] + [NEG_INF] * (k - 1), dtype="float32")
        scores = ops.tile(ops.convert_to_tensor(first), (self.batch,))
        v = {
            "t": ops.convert_to_tensor(0, "int32"),
            "prev_ids": ops.full((rows,), START_ID, dtype="int32"),
            "state": self.initial,
            "scores": scores,
            "inactive": ops.equal(scores, NEG_INF),  # finished (greedy), dead or decided
            "lengths": ops.zeros((rows,), dtype="int32"),
            "tokens": ops.full((rows, length), PAD_ID, dtype="int32"),
            "parents": ops.zeros((rows, length), dtype="int32"),
        }
        if self.return_attention:
            v["attention"] = ops.zeros((rows, length, self.source_len), dtype="float32")
        return v

    def rank(self, scores, lengths):
        """What hypotheses compete by: `scores`, or `scores / lp(lengths)` with a penalty."""
        if self.alpha > 0:
            return scores / length_penalty_factor(lengths, self.alpha)
        return scores

    def tokens_per_row(self, n_vocab):
        """How many best tokens of each row a step keeps: greedy the arg-max, beam search
        K + 1, so that K non-END ones remain."""
        return min(1 if self.k == 1 else self.k + 1, n_vocab)

    def step(self, v, extra_ids=None):
        """The decoder step for the active rows: per_beam best allowed tokens of every row.

        Returns (top_values (BK, per_beam), top_ids (BK, per_beam), end_value (BK, 1),
        new_state, weights); rows skipped (inactive, with `skip_ended`) get zeros. With
        `extra_ids` (BK, E) int32, also the log-probabilities of those tokens (BK, E) (-inf
        where the controls forbid them), last.
        """
        options = {} if self.params is None else {"params": self.params}
        live = None
        if self.skip_ended:  # the step only for the rows still extending
            live = ops.nonzero(ops.logical_not(v["inactive"]))[0]  # (R,) row ids
            options["rows"] = live
        logits, new_state, weights = self.decoder.step(
            v["prev_ids"], v["state"], self.cache, training=False, **options
        )
        logits = ops.cast(logits, "float32")  # (BK, V), or (R, V) with skip_ended
        n_vocab = logits.shape[-1]
        if n_vocab is None:
            n_vocab = getattr(self.decoder, "vocab_size", None)
        if n_vocab is None:
            raise ValueError("search needs the decoder's logits to have a known vocabulary size.")
        self.per_beam = self.tokens_per_row(n_vocab)
        extra = None
        if extra_ids is not None and live is not None:
            extra_ids = ops.take(extra_ids, live, axis=0)
        if self.controls.active:  # min_length, ban_unknown, n-gram blocking, prefix
            history = self.history(v) if self.controls.needs_history else None
            top_values, top_ids, end_value, extra = self.controls.top_k(
                logits, self.per_beam, n_vocab, v["t"], history, live, extra_ids
            )
        else:
            top_values, top_ids, log_norm = top_k_allowed(logits, self.per_beam, n_vocab)
            end_value = logits[:, END_ID : END_ID + 1] - log_norm  # (R, 1)
            if extra_ids is not None:
                extra = ops.take_along_axis(logits, extra_ids, axis=1) - log_norm
        if self.skip_ended:  # back to all BK rows
            at = live[:, None]
            top_values = ops.scatter_update(
                ops.zeros((self.rows, self.per_beam), "float32"), at, top_values
            )
            top_ids = ops.scatter_update(
                ops.zeros((self.rows, self.per_beam), "int32"), at, top_ids
            )
            end_value = ops.scatter_update(ops.zeros((self.rows, 1), "float32"), at, end_value)
            if extra is not None:
                width = ops.shape(extra)[1]
                extra = ops.scatter_update(ops.zeros((self.rows, width), "float32"), at, extra)
        if extra is not None:
            return top_values, top_ids, end_value, new_state, weights, extra
        return top_values, top_ids, end_value, new_state, weights

    def history(self, v):
        """(BK, T_buf) int32: each row's own tokens so far (columns < t), for n-gram blocking."""
        return v["tokens"]

    def record(self, v, t, tokens, parents, stopped, weights):
        """The buffers' column t: tokens, back-pointers and attention of the new rows."""
        out = {
            "tokens": ops.slice_update(v["tokens"], [0, t], tokens[:, None]),
            "parents": ops.slice_update(v["parents"], [0, t], ops.cast(parents, "int32")[:, None]),
        }
        if self.return_attention:
            if weights is None:
                weights = ops.zeros((self.rows, self.source_len), dtype="float32")
            weights = ops.where(stopped[:, None], 0.0, ops.cast(weights, "float32"))
            out["attention"] = ops.slice_update(v["attention"], [0, t, 0], weights[:, None, :])
        return out

    def body(self, v):
        """One step of the loop: the new loop variables."""
        raise NotImplementedError

    def finished(self, v):
        """Scalar bool: True once the loop may stop."""
        raise NotImplementedError

    def results(self, v):
        """The loop's final variables as the result's padded fields: ids, scores, lengths,
        log_probs, attention; (B * n, ...) with `n_best`."""
        raise NotImplementedError

    def run(self):
        """The search: fixed-size buffers (B, T_buf, ...) ((B, n, T_buf, ...) with
        `n_best`) and the number of steps run (`steps`)."""

        def condition(v):
            return ops.logical_and(
                ops.less(v["t"], self.step_limit), ops.logical_not(self.finished(v))
            )

        v = ops.while_loop(condition, self.body, self.loop_vars())
        padded = self.results(v)
        padded["ids"] = ops.cast(padded["ids"], "int32")
        padded["lengths"] = ops.cast(padded["lengths"], "int32")
        if self.n_best is not None:  # (B * n, ...) -> (B, n, ...)
            n = self.n_best
            padded = {
                key: None if value is None else ops.reshape(value, (-1, n, *ops.shape(value)[1:]))
                for key, value in padded.items()
            }
        padded["steps"] = v["t"]
        if not self.return_attention:
            del padded["attention"]
        return padded
