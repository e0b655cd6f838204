"""Greedy and beam search over the decoder's step function (docs/design.md, "Search").

One batched implementation (`_Search`) serves both: `beam_size=1` is greedy search.
The source is encoded once; every tensor of the decoder's cache and state is tiled to
`(B * K, ...)` (batch-major: row `b * K + k` is beam `k` of sentence `b`) and gathered by
beam index at every step with `keras.ops.take`. The loop is a `keras.ops.while_loop` over
fixed-shape buffers, so the search runs eagerly, inside `tf.function`, and compiled with
XLA (`jit_compile=True`).

Rules of the search:
- Each step scores a hypothesis' extensions with a float32 `log_softmax` of the decoder's
  logits (also when the model computes in float16), evaluated only at the few best
  tokens of each row (below) (`_top_k_allowed`: a chunked top-k over the vocabulary, then
  `logits - logsumexp(logits)` there). `PAD_ID` and `START_ID` are never emitted.
- Sentence `b` may produce at most `L_b = max(1, ceil(max_length_ratio * n_b) +
  max_length_offset)` tokens, END included, where `n_b` is its number of non-pad source ids
  (the product is computed in float32), and `L_b = 1` when `n_b = 0`: a source with no
  tokens (also a batch of shape (B, 0)) gives END alone. At step `L_b` the only allowed
  token is `END_ID`, so every hypothesis ends with END.
- Greedy search (K = 1): the hypothesis extends with the arg-max token; once it emitted
  END it extends only with PAD at zero cost and its length stops growing.
- Beam search (K > 1) keeps K alive hypotheses per sentence and, aside, a pool of the K
  best finished ones (as fairseq and GNMT do). At every step each alive hypothesis' END
  extension is offered to the pool (which keeps its K best by rank; an older entry wins a
  tie), and the K best non-END extensions of the alive ones stay alive. A finished
  hypothesis never competes with alive ones for a beam slot, so it is never lost: the
  result is the best of the pool. (Before, finished hypotheses stayed in the beam and
  could be pushed out by better-scoring alive ones that later ended worse.)
- The loop stops when no sentence has an alive hypothesis (at the latest after
  `max_b L_b` steps), or earlier, as soon as the result can no longer change: for every
  sentence, the pool's best ranks strictly above the best rank any alive hypothesis could
  still reach (`score`, or `score / lp(L_b)` with a length penalty; scores only
  decrease). The returned hypotheses are exactly those of running to the end.
- With `length_penalty = alpha > 0`, finished hypotheses compete in the pool and in the
  final choice by `log_probs / lp(Y)` with GNMT's `lp(Y) = ((5 + |Y|) / 6) ** alpha`
  (Wu et al. 2016, eq. 14), where `|Y|` counts the tokens including END. Alive ones all
  have the same length, so they compete by `log_probs`. With `coverage_penalty = beta >
  0`, a finished hypothesis' rank also gets GNMT's `cp` (beam search only; see `search`).
- Outside XLA (eagerly and in `tf.function`), a step computes the decoder's output layer and
  the top-k only for the rows still extending (`decoder.step(..., readout_rows=)`, when the
  decoder's step takes it), and a sentence whose result is decided has its alive hypotheses
  ended (none of them can be chosen). Ended rows skip the costliest part of a step; the
  returned hypotheses do not change.
- Beam search first keeps the `min(K + 1, V)` best allowed tokens of every alive
  hypothesis (so that K of them are not END), then the K best non-END ones of these
  per sentence. Greedy search keeps the arg-max token of each step (ties go to the
  lowest id).
"""

import inspect
import math
import weakref

import numpy as np
from keras import ops

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.search.search_result import SearchResult

_NEG_INF = float("-inf")
COVERAGE_FLOOR = 1e-6  # the coverage penalty's floor on a source position's attention sum
MAX_BEAM_SIZE = 1024  # memory grows with it: B * K decoder states and attention rows

# Compiled (XLA) searches, per model and search options, so that repeated calls reuse them.
_COMPILED = weakref.WeakKeyDictionary()


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


# Chunked top-k (see `_top_k_allowed`): chunks of about this many vocabulary entries.
_CHUNK = 64
_BANNED = (PAD_ID, START_ID)  # never emitted


def _chunk_size(vocab_size, k):
    """A divisor of `vocab_size` near `_CHUNK` (so rows reshape without padding) when the
    vocabulary is large enough for chunking to pay, else None (plain top-k)."""
    if vocab_size < 4 * k * _CHUNK or max(_BANNED) >= _CHUNK // 2:
        return None
    for delta in range(_CHUNK // 2 + 1):
        for size in (_CHUNK + delta, _CHUNK - delta):
            if vocab_size % size == 0 and vocab_size // size >= 4 * k:
                return size
    return None


def _top_k_allowed(logits, k, vocab_size):
    """The k best allowed tokens of every row and their float32 log-probabilities.

    Args:
        logits: (R, V) float32.
        k: int, 1 <= k <= V.
        vocab_size: V, a Python int.
    Returns:
        log_probs (R, k) float32, `log_softmax(logits)` (over the full vocabulary) at ids,
        ids (R, k) int32, ranked by logit (ties: lowest id first) among ids not in PAD/START,
        log_norm (R, 1) float32, `logsumexp(logits)` (so `log_softmax = logits - log_norm`).

    Equal to `top_k(where(allowed, logits, -inf), k)` (same ids and order, ties included),
    but cheaper for large V: top-k over the vocabulary is the slowest part of a search
    step on a CPU. The vocabulary is cut into C chunks; the k best tokens lie in the k
    chunks with the highest maxima (a chunk holding one of them has a maximum no lower
    than it, and at most k-1 chunks rank above it, ties going to the lower chunk, as
    tokens' ties go to the lower id). Only those k chunks, in id order, are searched.
    """
    ids_range = np.arange(vocab_size)
    banned = np.where(np.isin(ids_range, _BANNED), _NEG_INF, 0.0).astype("float32")
    size = _chunk_size(vocab_size, k)
    if size is None:
        log_norm = ops.logsumexp(logits, axis=-1, keepdims=True)
        top_logits, top_ids = ops.top_k(logits + banned, k)
        return top_logits - log_norm, ops.cast(top_ids, "int32"), log_norm
    chunks = ops.reshape(logits, (-1, vocab_size // size, size))  # (R, C, S)
    chunk_max = ops.max(chunks, axis=-1)  # (R, C), banned ids included
    row_max = ops.max(chunk_max, axis=-1, keepdims=True)  # (R, 1)
    log_norm = row_max + ops.log(ops.sum(ops.exp(logits - row_max), axis=-1, keepdims=True))
    # The banned ids all lie in chunk 0: its maximum over the allowed ids only.
    first = ops.max(logits[:, :size] + banned[:size], axis=-1, keepdims=True)
    chunk_max = ops.concatenate([first, chunk_max[:, 1:]], axis=-1)
    _, chunk_ids = ops.top_k(chunk_max, k)  # (R, k)
    chunk_ids = ops.sort(ops.cast(chunk_ids, "int32"), axis=-1)  # id order, for ties
    picked = ops.take_along_axis(chunks, chunk_ids[:, :, None], axis=1)  # (R, k, S)
    picked = ops.where(ops.equal(chunk_ids, 0)[:, :, None], picked + banned[:size], picked)
    top_logits, position = ops.top_k(ops.reshape(picked, (-1, k * size)), k)  # (R, k)
    position = ops.cast(position, "int32")
    top_ids = ops.take_along_axis(chunk_ids, position // size, axis=1) * size + position % size
    return top_logits - log_norm, top_ids, log_norm


def _check_options(beam_size, length_penalty, max_length_ratio, max_length_offset):
    if isinstance(beam_size, bool) or not isinstance(beam_size, (int, np.integer)):
        raise ValueError(f"beam_size must be an int >= 1, got {beam_size!r}.")
    if beam_size < 1:
        raise ValueError(f"beam_size must be an int >= 1, got {beam_size}.")
    if beam_size > MAX_BEAM_SIZE:
        raise ValueError(
            f"beam_size must be at most {MAX_BEAM_SIZE}, got {beam_size}: the search holds "
            "beam_size hypotheses per sentence, each with its decoder state and attention "
            "(beams above 10-20 rarely translate better)."
        )
    for name, value in (
        ("length_penalty", length_penalty),
        ("max_length_ratio", max_length_ratio),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise ValueError(f"{name} must be a finite float >= 0, got {value!r}.")
        if not math.isfinite(float(value)) or value < 0:
            raise ValueError(f"{name} must be a finite float >= 0, got {value}.")
    if isinstance(max_length_offset, bool) or not isinstance(max_length_offset, (int, np.integer)):
        raise ValueError(f"max_length_offset must be an int >= 0, got {max_length_offset!r}.")
    if max_length_offset < 0:
        raise ValueError(f"max_length_offset must be an int >= 0, got {max_length_offset}.")


def _check_source(source_ids):
    if not hasattr(source_ids, "shape") or not hasattr(source_ids, "dtype"):
        source_ids = np.asarray(source_ids)
    shape = tuple(source_ids.shape)
    if len(shape) != 2:
        raise ValueError(
            f"source_ids must have shape (batch, source_len), got shape {shape} "
            f"(rank {len(shape)}). Wrap a single sentence as [ids]."
        )
    dtype = str(getattr(source_ids.dtype, "name", source_ids.dtype))
    if "int" not in dtype:
        raise ValueError(f"source_ids must hold integer token ids, got dtype {dtype}.")
    return ops.cast(source_ids, "int32")


def _components(model):
    try:
        encoder = model.get_layer("encoder")
        decoder = model.get_layer("decoder")
    except (ValueError, AttributeError) as error:
        raise ValueError(
            "search expects a keras.Model with layers named 'encoder' and 'decoder' "
            f"(docs/design.md), got {type(model).__name__}: {error}"
        ) from None
    missing = [name for name in ("prepare", "initial_state", "step") if not hasattr(decoder, name)]
    if missing:
        raise ValueError(
            f"the decoder layer {type(decoder).__name__} lacks {missing}; search needs "
            "prepare/initial_state/step (docs/design.md)."
        )
    return encoder, decoder


def _map(fn, structure):
    """Applies `fn` to every tensor of a nest of dicts/lists/tuples (None left alone)."""
    if structure is None:
        return None
    if isinstance(structure, dict):
        return {key: _map(fn, value) for key, value in structure.items()}
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*(_map(fn, value) for value in structure))
    if isinstance(structure, (list, tuple)):
        return type(structure)(_map(fn, value) for value in structure)
    return fn(structure)


def _max_length(source_len, ratio, offset):
    """`max(1, ceil(ratio * source_len) + offset)`, float32 product, int32 result.

    (Per sentence, `_Search` gives a source with no tokens the limit 1: END alone.)"""
    if isinstance(source_len, (int, np.integer)):
        product = np.float32(ratio) * np.float32(source_len)
        return max(1, int(np.ceil(product)) + int(offset))
    product = ops.cast(source_len, "float32") * np.float32(ratio)
    return ops.maximum(ops.cast(ops.ceil(product), "int32") + int(offset), 1)


class _Search:
    """One search call: the encoded source, the loop's variables and its step functions.

    Greedy search (K = 1) keeps one hypothesis per sentence: it extends with the arg-max
    token, and once it emitted END it extends only with PAD at zero cost.

    Beam search (K > 1) keeps K alive hypotheses per sentence and, aside, a pool of its K
    best finished ones (as fairseq and GNMT do): at every step each alive hypothesis' END
    extension is offered to the pool, and the K best non-END extensions stay alive. A
    finished hypothesis thus never competes for a beam slot and is never lost; the result
    is the best of the pool.
    """

    def __init__(self, model, source_ids, options, stop_early, skip_ended):
        beam_size, length_penalty, ratio, offset, return_attention, n_best, coverage = options
        self.n_best = n_best  # None: the best one, (B, ...); n: the n best, (B, n, ...)
        self.beta = float(coverage)  # GNMT's coverage penalty (beam search only)
        self.encoder, self.decoder = _components(model)
        self.k, self.alpha = int(beam_size), float(length_penalty)
        if source_ids.shape[1] == 0:  # (B, 0): the encoders need one (padding) column
            source_ids = ops.zeros((ops.shape(source_ids)[0], 1), dtype="int32")
        self.return_attention, self.stop_early = return_attention, stop_early
        self.batch = ops.shape(source_ids)[0]
        self.source_len = ops.shape(source_ids)[1]
        self.rows = self.batch * self.k
        memory, source_mask, encoder_states = self.encoder(source_ids, training=False)
        cache = self.decoder.prepare(memory, source_mask, encoder_states)
        state = tuple(self.decoder.initial_state(cache))
        if self.k > 1:
            cache = _map(lambda x: ops.repeat(x, self.k, axis=0), cache)
            state = _map(lambda x: ops.repeat(x, self.k, axis=0), state)
        self.cache, self.initial = cache, state
        real = ops.not_equal(source_ids, PAD_ID)  # (B, Ts)
        self.row_source_mask = ops.repeat(real, self.k, axis=0) if self.k > 1 else real
        lengths = ops.sum(ops.cast(ops.not_equal(source_ids, PAD_ID), "int32"), axis=1)
        # A sentence with no source tokens translates to END alone (the empty string).
        max_lengths = ops.where(ops.equal(lengths, 0), 1, _max_length(lengths, ratio, offset))
        self.step_limit = ops.max(max_lengths)
        self.row_max_lengths = ops.repeat(max_lengths, self.k, axis=0)  # (BK,)
        self.buffer_len = _max_length(self.source_len, ratio, offset)
        self.beam_offsets = ops.arange(self.batch, dtype="int32") * self.k  # (B,)
        # Kernel slices and casts every step reads, made once outside the loop (a decoder
        # without `loop_params` only needs prepare/initial_state/step).
        self.params = self.decoder.loop_params() if hasattr(self.decoder, "loop_params") else None
        self.skip_ended = (
            skip_ended and "readout_rows" in inspect.signature(self.decoder.step).parameters
        )
        self.per_beam = None  # tokens kept per row, set at the first step (needs V)

    # -- shared by greedy and beam --------------------------------------------------------
    def loop_vars(self):
        k, rows, length = self.k, self.rows, self.buffer_len
        # Only beam 0 of each sentence is live at the start (all K beams would be identical).
        first = np.array([0.0] + [_NEG_INF] * (k - 1), dtype="float32")
        scores = ops.tile(ops.convert_to_tensor(first), (self.batch,))
        v = {
            "t": ops.convert_to_tensor(0, "int32"),
            "prev_ids": ops.full((rows,), START_ID, dtype="int32"),
            "state": self.initial,
            "scores": scores,
            "inactive": ops.equal(scores, _NEG_INF),  # finished (greedy), dead or decided
            "lengths": ops.zeros((rows,), dtype="int32"),
            "tokens": ops.full((rows, length), PAD_ID, dtype="int32"),
            "parents": ops.zeros((rows, length), dtype="int32"),
        }
        if self.return_attention:
            v["attention"] = ops.zeros((rows, length, self.source_len), dtype="float32")
        if k > 1 and self.beta > 0:  # sum of each hypothesis' attention over its steps
            v["coverage"] = ops.zeros((rows, self.source_len), dtype="float32")
        if k > 1:  # the pool of finished hypotheses: K per sentence
            v["pool"] = {
                "rank": ops.full((self.batch, k), _NEG_INF, dtype="float32"),
                "score": ops.full((self.batch, k), _NEG_INF, dtype="float32"),
                "length": ops.zeros((self.batch, k), dtype="int32"),
                "row": ops.zeros((self.batch, k), dtype="int32"),  # its row at end - 1
            }
            if self.return_attention:
                v["pool"]["attention"] = ops.zeros((self.batch, k, self.source_len), "float32")
        return v

    def rank(self, scores, lengths):
        """What hypotheses compete by: `scores`, or `scores / lp(lengths)` with a penalty."""
        if self.alpha > 0:
            return scores / length_penalty_factor(lengths, self.alpha)
        return scores

    def step(self, v):
        """The decoder step for the active rows: per_beam best allowed tokens of every row.

        Returns (top_values (BK, per_beam), top_ids (BK, per_beam), end_value (BK, 1),
        new_state, weights); rows skipped (inactive, with `skip_ended`) get zeros.
        """
        options = {} if self.params is None else {"params": self.params}
        if self.skip_ended:  # the output layer only for the rows still extending
            live = ops.nonzero(ops.logical_not(v["inactive"]))[0]  # (R,) row ids
            options["readout_rows"] = live
        logits, new_state, weights = self.decoder.step(
            v["prev_ids"], v["state"], self.cache, training=False, **options
        )
        logits = ops.cast(logits, "float32")  # (BK, V), or (R, V) with skip_ended
        n_vocab = logits.shape[-1]
        if n_vocab is None:
            n_vocab = getattr(self.decoder, "vocab_size", None)
        if n_vocab is None:
            raise ValueError("search needs the decoder's logits to have a known vocabulary size.")
        # Greedy: the arg-max. Beam: K + 1 tokens, so that K non-END ones remain.
        self.per_beam = min(1 if self.k == 1 else self.k + 1, n_vocab)
        top_values, top_ids, log_norm = _top_k_allowed(logits, self.per_beam, n_vocab)
        end_value = logits[:, END_ID : END_ID + 1] - log_norm  # (R, 1)
        if self.skip_ended:  # back to all BK rows
            at = live[:, None]
            top_values = ops.scatter_update(
                ops.zeros((self.rows, self.per_beam), "float32"), at, top_values
            )
            top_ids = ops.scatter_update(
                ops.zeros((self.rows, self.per_beam), "int32"), at, top_ids
            )
            end_value = ops.scatter_update(ops.zeros((self.rows, 1), "float32"), at, end_value)
        return top_values, top_ids, end_value, new_state, weights

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

    # -- greedy ---------------------------------------------------------------------------
    def greedy_body(self, v):
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

    # -- beam -----------------------------------------------------------------------------
    def decided(self, v):
        """(B,) bool: True for a sentence whose result no alive hypothesis can still change.

        Every row inactive; or, with `stop_early`, the pool's best (its n-th best with
        `n_best`) ranks strictly above what any alive hypothesis could still reach: an alive score only decreases (log-probs
        <= 0), and with `alpha > 0` its final rank is at most `score / lp(L_b)`, since `lp`
        grows with the length (<= L_b). Stopping then returns what running until every
        hypothesis ended would return.
        """
        inactive = v["inactive"]
        all_inactive = ops.all(ops.reshape(inactive, (-1, self.k)), axis=1)
        if not self.stop_early:
            return all_inactive
        bound = self.rank(v["scores"], self.row_max_lengths)
        best_alive = ops.max(ops.reshape(ops.where(inactive, _NEG_INF, bound), (-1, self.k)), 1)
        n = self.n_best or 1  # the n-th best finished one must be safe from alive ones
        if n == 1:
            best_finished = ops.max(v["pool"]["rank"], axis=1)
        else:
            best_finished = ops.top_k(v["pool"]["rank"], n)[0][:, n - 1]
        # A relative margin covers float rounding of the bound (stopping later is harmless).
        margin = ops.abs(best_alive) * 1e-6
        return ops.logical_or(all_inactive, ops.greater(best_finished, best_alive + margin))

    def coverage_penalty(self, coverage):
        """(BK,) GNMT's cp = beta * sum_j log(min(c_j, 1)) over the real source positions
        (Wu et al. 2016, eq. 14), c_j floored at `COVERAGE_FLOOR` so that a position never
        attended costs a finite amount."""
        clipped = ops.clip(coverage, COVERAGE_FLOOR, 1.0)
        logs = ops.where(self.row_source_mask, ops.log(clipped), 0.0)
        return self.beta * ops.sum(logs, axis=1)

    def offer_to_pool(self, pool, t, scores, alive, end_value, weights, coverage=None):
        """The pool's K best of itself and this step's END extensions of the alive rows
        (ranked with the coverage penalty of `coverage`, when given)."""
        end_scores = ops.where(alive, scores + end_value[:, 0], _NEG_INF)  # (BK,)
        new_rank = self.rank(end_scores, t + 1)
        if coverage is not None:
            new_rank = new_rank + self.coverage_penalty(coverage)
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

    def beam_body(self, v):
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
        candidates = ops.where(closed, _NEG_INF, v["scores"][:, None] + top_values)
        width = k * self.per_beam  # all alive rows have length t + 1: the plain score ranks
        new_scores, chosen = ops.top_k(ops.reshape(candidates, (-1, width)), k)  # (B, K)
        new_scores = ops.reshape(new_scores, (-1,))
        parents = ops.reshape(self.beam_offsets[:, None] + chosen // self.per_beam, (-1,))
        tokens = ops.take_along_axis(ops.reshape(top_ids, (-1, width)), chosen, axis=1)
        dead = ops.equal(new_scores, _NEG_INF)  # fewer than K candidates, or at the limit
        tokens = ops.cast(ops.where(dead, PAD_ID, ops.reshape(tokens, (-1,))), "int32")
        if self.return_attention and weights is not None:
            weights = ops.take(weights, parents, axis=0)
        out = {
            "t": t + 1,
            "prev_ids": tokens,
            "state": _map(lambda x: ops.take(x, parents, axis=0), tuple(new_state)),
            "scores": new_scores,
            "inactive": dead,
            "lengths": ops.where(dead, 0, t + 1),
            "pool": pool,
        }
        if coverage is not None:
            out["coverage"] = ops.take(coverage, parents, axis=0)
        out.update(self.record(v, t, tokens, parents, dead, weights))
        if self.skip_ended and self.stop_early:
            # A decided sentence's alive hypotheses can no longer be chosen: end them, so
            # later steps skip their output layer too.
            out["inactive"] = ops.logical_or(dead, ops.repeat(self.decided(out), k, axis=0))
        return out

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

    def run(self):
        body = self.greedy_body if self.k == 1 else self.beam_body

        def condition(v):
            if self.k == 1:
                finished = ops.all(v["inactive"])
            else:
                finished = ops.all(self.decided(v))
            return ops.logical_and(ops.less(v["t"], self.step_limit), ops.logical_not(finished))

        v = ops.while_loop(condition, body, self.loop_vars())
        if self.k == 1:
            scores, lengths = v["scores"], v["lengths"]
            padded = {
                "ids": v["tokens"],
                "scores": self.rank(scores, lengths),
                "lengths": lengths,
                "log_probs": scores,
                "attention": v.get("attention"),
            }
        else:
            ids, attention, pick = self.pool_picks(v, self.n_best or 1)
            padded = {
                "ids": ids,
                "scores": pick["rank"],
                "lengths": pick["length"],
                "log_probs": pick["score"],
                "attention": attention,
            }
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


def _search_padded(
    model,
    source_ids,
    beam_size,
    length_penalty,
    max_length_ratio,
    max_length_offset,
    return_attention,
    n_best=None,
    coverage_penalty=0.0,
    stop_early=True,
    skip_ended=True,
):
    """The search, returning fixed-size buffers (B, T_max, ...) and the number of steps run
    ((B, n, T_max, ...) with `n_best`).

    `T_max = max(1, ceil(ratio * Ts) + offset)` for the padded source length Ts, so every
    shape is known when Ts is (as XLA requires); `_trim` cuts the buffers to the steps run.
    `stop_early=False` (for tests) runs beam search until every hypothesis has ended instead
    of stopping once no alive hypothesis can change the result.
    `skip_ended` computes the output layer and its top-k only for the rows still extending
    (when the decoder's `step` takes `readout_rows`), and ends the alive hypotheses of a
    sentence whose result is decided. The rows vary in number from step to step, which XLA
    cannot compile: the compiled searches pass False. The result is the same either way.
    """
    options = (
        beam_size,
        length_penalty,
        max_length_ratio,
        max_length_offset,
        return_attention,
        n_best,
        coverage_penalty,
    )
    return _Search(model, source_ids, options, stop_early, skip_ended).run()


def empty_result(source_ids, n_best=None, return_attention=True):
    """The `SearchResult` of a batch of no sentences, (0, Ts) source ids: fields with a batch
    axis of 0 (and of n with `n_best`) and no steps. (A traced search with an unknown batch
    size runs its loop on no rows instead.)"""
    lead = (0,) if n_best is None else (0, int(n_best))
    source_len = ops.shape(source_ids)[1]
    return SearchResult(
        ids=ops.zeros((*lead, 0), "int32"),
        scores=ops.zeros(lead, "float32"),
        attention=ops.zeros((*lead, 0, source_len), "float32") if return_attention else None,
        lengths=ops.zeros(lead, "int32"),
        log_probs=ops.zeros(lead, "float32"),
    )


def _trim(padded):
    # The loop may run past the chosen hypotheses' END (other beams still alive); keep the
    # columns up to the longest chosen hypothesis.
    steps = ops.max(padded["lengths"])
    attention = padded.get("attention")
    return SearchResult(
        ids=padded["ids"][..., :steps],
        scores=padded["scores"],
        attention=None if attention is None else attention[..., :steps, :],
        lengths=padded["lengths"],
        log_probs=padded["log_probs"],
    )


def _compiled_search(model, options):
    import tensorflow as tf  # XLA compilation needs tf.function

    try:
        per_model = _COMPILED.setdefault(model, {})
    except TypeError:  # not weak-referenceable: compile without caching
        per_model = {}
    if options not in per_model:
        per_model[options] = tf.function(
            lambda source_ids: _search_padded(model, source_ids, *options, skip_ended=False),
            jit_compile=True,
            reduce_retracing=True,
            autograph=False,
        )
    return per_model[options]


def search(
    model,
    source_ids,
    beam_size=1,
    length_penalty=0.0,
    max_length_ratio=1.5,
    max_length_offset=10,
    return_attention=True,
    jit_compile=False,
    n_best=None,
    coverage_penalty=0.0,
):
    """Translates a batch of source sentences with greedy (`beam_size=1`) or beam search.

    Args:
        model: a `zoo` translation model (a keras.Model with layers named "encoder" and
            "decoder" following docs/design.md).
        source_ids: (B, Ts) int source ids, right-padded with PAD_ID; sentence b's length
            is its number of non-pad ids.
        beam_size: K >= 1; 1 is greedy search (exactly the arg-max decoder).
        length_penalty: alpha >= 0 of GNMT's `((5 + |Y|) / 6) ** alpha`; 0 ranks by the
            plain sum of log-probabilities.
        max_length_ratio, max_length_offset: sentence b emits at most
            `max(1, ceil(ratio * n_b) + offset)` tokens, END included.
        return_attention: also return the attention weights of the chosen hypotheses.
        jit_compile: run the search compiled with XLA (a `tf.function(jit_compile=True)`
            cached per model and options; it retraces per distinct source shape).
        n_best: None for the best hypothesis of each sentence; an int 1 <= n <= beam_size
            for its n best, best first (the search then runs until none of them can change).
        coverage_penalty: beta >= 0 of GNMT's `cp = beta * sum_j log(min(c_j, 1))` (Wu et
            al. 2016, eq. 14; c_j: a hypothesis' attention on source word j summed over its
            steps, END included, floored at `COVERAGE_FLOOR`), added to the rank of finished
            hypotheses in beam search; it favours translations that cover the source.
    Returns:
        a `SearchResult` (ids, scores, attention, lengths, log_probs); see its docstring.
        With `n_best=n` every field has an axis of n after the batch: ids (B, n, T),
        scores (B, n), ...; a sentence with fewer than n finished hypotheses (a tiny
        vocabulary) fills the rest with score -inf and length 0.

    Works eagerly and inside `tf.function`. See the module docstring for the exact rules.

    Example:
        >>> result = search(model, [[5, 6, 7, 0]], beam_size=4)  # doctest: +SKIP
        >>> result.ids  # doctest: +SKIP
        <tf.Tensor: shape=(1, 5), dtype=int32, numpy=array([[9, 4, 8, 2, 0]])>
    """
    options = _checked_options(
        model,
        beam_size,
        length_penalty,
        max_length_ratio,
        max_length_offset,
        return_attention,
        n_best,
        coverage_penalty,
    )
    source_ids = _check_source(source_ids)
    if source_ids.shape[0] == 0:  # known to be empty (eagerly): nothing to search
        return empty_result(source_ids, n_best=options[5], return_attention=return_attention)
    if jit_compile:
        padded = _compiled_search(model, options)(source_ids)
    else:
        padded = _search_padded(model, source_ids, *options)
    return _trim(padded)


def _checked_options(
    model,
    beam_size,
    length_penalty,
    max_length_ratio,
    max_length_offset,
    return_attention,
    n_best=None,
    coverage_penalty=0.0,
):
    """Checks the model and the search options; returns them as `_search_padded`'s tuple."""
    _check_options(beam_size, length_penalty, max_length_ratio, max_length_offset)
    if isinstance(coverage_penalty, bool) or not isinstance(
        coverage_penalty, (int, float, np.number)
    ):
        raise ValueError(f"coverage_penalty must be a finite float >= 0, got {coverage_penalty!r}.")
    if not math.isfinite(float(coverage_penalty)) or coverage_penalty < 0:
        raise ValueError(f"coverage_penalty must be a finite float >= 0, got {coverage_penalty}.")
    if n_best is not None and (
        isinstance(n_best, bool)
        or not isinstance(n_best, (int, np.integer))
        or not 1 <= n_best <= beam_size
    ):
        raise ValueError(
            f"n_best must be None or an int in [1, beam_size={beam_size}], got {n_best!r}: "
            "beam search keeps beam_size finished hypotheses per sentence."
        )
    _components(model)
    return (
        int(beam_size),
        float(length_penalty),
        float(max_length_ratio),
        int(max_length_offset),
        bool(return_attention),
        None if n_best is None else int(n_best),
        float(coverage_penalty),
    )


def greedy_search(model, source_ids, **options):
    """`search` with `beam_size=1`: the arg-max token at every step."""
    if "beam_size" in options:
        raise ValueError("greedy_search has beam_size=1; use beam_search or search for others.")
    return search(model, source_ids, beam_size=1, **options)


def beam_search(model, source_ids, beam_size=5, **options):
    """`search` with a beam (default 5 hypotheses per sentence)."""
    return search(model, source_ids, beam_size=beam_size, **options)


def search_function(
    model,
    beam_size=1,
    length_penalty=0.0,
    max_length_ratio=1.5,
    max_length_offset=10,
    return_attention=True,
    jit_compile=False,
    n_best=None,
    coverage_penalty=0.0,
):
    """A `tf.function` `source_ids (None, None) int32 -> SearchResult`, traced once.

    For the Translator and SavedModel export: the function has an input signature with
    unknown batch and source length, so it traces once and can be saved with
    `tf.saved_model.save` (as a signature, return `result._asdict()` without `None`s).
    With `jit_compile=True` the search loop is compiled with XLA; only the final cut to
    the steps run happens outside XLA.
    """
    import tensorflow as tf

    options = _checked_options(
        model,
        beam_size,
        length_penalty,
        max_length_ratio,
        max_length_offset,
        return_attention,
        n_best,
        coverage_penalty,
    )
    inner = (
        tf.function(
            lambda ids: _search_padded(model, ids, *options, skip_ended=False),
            jit_compile=True,
            autograph=False,
        )
        if jit_compile
        else (lambda ids: _search_padded(model, ids, *options))
    )

    @tf.function(
        input_signature=[tf.TensorSpec((None, None), tf.int32, name="source_ids")],
        autograph=False,
    )
    def run(source_ids):
        return _trim(inner(source_ids))

    return run
