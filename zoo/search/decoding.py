"""Greedy and beam search over the decoder's step function (docs/design.md, "Search").

One batched implementation serves both: greedy search is beam search with `beam_size=1`.
The source is encoded once; every tensor of the decoder's cache and state is tiled to
`(B * K, ...)` (batch-major: row `b * K + k` is beam `k` of sentence `b`) and gathered by
beam index at every step with `keras.ops.take`. The loop is a `keras.ops.while_loop` over
fixed-shape buffers, so the search runs eagerly, inside `tf.function`, and compiled with
XLA (`jit_compile=True`).

Rules of the search:
- Each step scores a hypothesis' extensions with a float32 `log_softmax` of the decoder's
  logits (also when the model computes in float16), evaluated only at the `min(K, V)` best
  tokens of each row (`_top_k_allowed`: a chunked top-k over the vocabulary, then
  `logits - logsumexp(logits)` there). `PAD_ID` and `START_ID` are never emitted.
- Sentence `b` may produce at most `L_b = max(1, ceil(max_length_ratio * n_b) +
  max_length_offset)` tokens, END included, where `n_b` is its number of non-pad source ids
  (the product is computed in float32). At step `L_b` the only allowed token is `END_ID`, so
  every hypothesis ends with END.
- A hypothesis that emitted END is finished: it stays in the beam, extends only with PAD at
  zero cost, and its length stops growing. The loop stops when every hypothesis of the
  batch has finished (at the latest after `max_b L_b` steps), or earlier, as soon as the
  result can no longer change: for every sentence, the best finished hypothesis ranks
  strictly above the best rank any alive one could still reach (`score`, or `score /
  lp(L_b)` with a length penalty; scores only decrease). The returned hypotheses are
  exactly those of running until every hypothesis has ended.
- With `length_penalty = alpha > 0`, hypotheses compete (for beam slots and in the final
  choice) by `log_probs / lp(Y)` with GNMT's `lp(Y) = ((5 + |Y|) / 6) ** alpha`
  (Wu et al. 2016, eq. 14), where `|Y|` counts the tokens including END. Among
  hypotheses of equal length this is the same ranking as by `log_probs`.
- Outside XLA (eagerly and in `tf.function`), a step computes the decoder's output layer and
  the top-k only for the rows still extending (`decoder.step(..., readout_rows=)`, when the
  decoder's step takes it), and a sentence whose result is decided has its alive hypotheses
  ended (they keep their scores; none of them can be chosen). Ended rows skip the costliest
  part of a step; the returned hypotheses do not change.
- Beam search first keeps the `min(K, V)` best tokens of every beam, then the K best of
  these `K * min(K, V)` candidates per sentence. With K = 1 this is exactly greedy
  search: the arg-max token of each step (ties go to the lowest id).
"""

import inspect
import math
import weakref

import numpy as np
from keras import ops

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.search.search_result import SearchResult

_NEG_INF = float("-inf")

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
    for name, value in (("length_penalty", length_penalty), ("max_length_ratio", max_length_ratio)):
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
    """`max(1, ceil(ratio * source_len) + offset)`, float32 product, int32 result."""
    if isinstance(source_len, (int, np.integer)):
        product = np.float32(ratio) * np.float32(source_len)
        return max(1, int(np.ceil(product)) + int(offset))
    product = ops.cast(source_len, "float32") * np.float32(ratio)
    return ops.maximum(ops.cast(ops.ceil(product), "int32") + int(offset), 1)


def _search_padded(
    model,
    source_ids,
    beam_size,
    length_penalty,
    max_length_ratio,
    max_length_offset,
    return_attention,
    stop_early=True,
    skip_ended=True,
):
    """The search, returning fixed-size buffers (B, T_max, ...) and the number of steps run.

    `T_max = max(1, ceil(ratio * Ts) + offset)` for the padded source length Ts, so every
    shape is known when Ts is (as XLA requires); `_trim` cuts the buffers to the steps run.
    `stop_early=False` (for tests) runs beam search until every hypothesis has ended instead
    of stopping once no alive hypothesis can change the result.
    `skip_ended` computes the output layer and its top-k only for the rows still extending
    (when the decoder's `step` takes `readout_rows`), and ends the alive hypotheses of a
    sentence whose result is decided. The rows vary in number from step to step, which XLA
    cannot compile: the compiled searches pass False. The result is the same either way.
    """
    encoder, decoder = _components(model)
    k = int(beam_size)
    alpha = float(length_penalty)
    batch = ops.shape(source_ids)[0]
    source_len = ops.shape(source_ids)[1]
    rows = batch * k

    memory, source_mask, encoder_states = encoder(source_ids, training=False)
    cache = decoder.prepare(memory, source_mask, encoder_states)
    state = tuple(decoder.initial_state(cache))
    if k > 1:
        cache = _map(lambda x: ops.repeat(x, k, axis=0), cache)
        state = _map(lambda x: ops.repeat(x, k, axis=0), state)

    source_lengths = ops.sum(ops.cast(ops.not_equal(source_ids, PAD_ID), "int32"), axis=1)
    max_lengths = _max_length(source_lengths, max_length_ratio, max_length_offset)  # (B,)
    step_limit = ops.max(max_lengths)
    row_max_lengths = ops.repeat(max_lengths, k, axis=0) if k > 1 else max_lengths  # (BK,)
    buffer_len = _max_length(source_len, max_length_ratio, max_length_offset)

    # Only beam 0 of each sentence is live at the start (all K beams would be identical).
    first_scores = np.array([0.0] + [_NEG_INF] * (k - 1), dtype="float32")
    scores = ops.tile(ops.convert_to_tensor(first_scores), (batch,))
    loop_vars = {
        "t": ops.convert_to_tensor(0, "int32"),
        "prev_ids": ops.full((rows,), START_ID, dtype="int32"),
        "state": state,
        "scores": scores,
        "finished": ops.equal(scores, _NEG_INF),
        "lengths": ops.zeros((rows,), dtype="int32"),
        "tokens": ops.full((rows, buffer_len), PAD_ID, dtype="int32"),
        "parents": ops.zeros((rows, buffer_len), dtype="int32"),
    }
    if return_attention:
        loop_vars["attention"] = ops.zeros((rows, buffer_len, source_len), dtype="float32")
    beam_offsets = ops.arange(batch, dtype="int32") * k  # (B,)

    vocab_size = getattr(decoder, "vocab_size", None)
    # Kernel slices and casts every step reads, made once outside the loop (a decoder
    # without `loop_params` only needs prepare/initial_state/step).
    params = decoder.loop_params() if hasattr(decoder, "loop_params") else None
    skip_ended = skip_ended and "readout_rows" in inspect.signature(decoder.step).parameters

    def condition(v):
        return ops.logical_and(ops.less(v["t"], step_limit), ops.logical_not(ops.all(_decided(v))))

    def _decided(v):
        """(B,) bool: True for a sentence whose result no alive hypothesis can still change.

        Greedy (K = 1), or without `stop_early`: every hypothesis of the sentence has
        finished. Beam: also when the sentence's best finished hypothesis ranks strictly
        above what any alive one could still reach: an alive score only decreases
        (log-probs <= 0), and with `alpha > 0` its final rank is at most `score / lp(L_b)`
        since `lp` grows with the length (<= L_b). The best finished one then stays first in
        the beam until the end, so stopping here returns exactly what running until every
        hypothesis ended would return.
        """
        finished = v["finished"]
        all_finished = ops.all(ops.reshape(finished, (-1, k)), axis=1)
        if k == 1 or not stop_early:
            return all_finished
        scores = v["scores"]
        if alpha > 0:
            final_rank = scores / length_penalty_factor(v["lengths"], alpha)
            alive_bound = scores / length_penalty_factor(row_max_lengths, alpha)
        else:
            final_rank = alive_bound = scores
        best_finished = ops.max(ops.reshape(ops.where(finished, final_rank, _NEG_INF), (-1, k)), 1)
        best_alive = ops.max(ops.reshape(ops.where(finished, _NEG_INF, alive_bound), (-1, k)), 1)
        # A relative margin covers float rounding of the bound (stopping later is harmless).
        margin = ops.abs(best_alive) * 1e-6
        return ops.logical_or(all_finished, ops.greater(best_finished, best_alive + margin))

    def body(v):
        t = v["t"]
        finished = v["finished"]
        step_options = {} if params is None else {"params": params}
        if skip_ended:  # the output layer only for the rows still extending: (R, V) logits
            live = ops.nonzero(ops.logical_not(finished))[0]  # (R,) row ids
            step_options["readout_rows"] = live
        logits, new_state, weights = decoder.step(
            v["prev_ids"], v["state"], cache, training=False, **step_options
        )
        logits = ops.cast(logits, "float32")  # (BK, V), or (R, V) with skip_ended
        n_vocab = logits.shape[-1] if logits.shape[-1] is not None else vocab_size
        if n_vocab is None:
            raise ValueError("search needs the decoder's logits to have a known vocabulary size.")
        per_beam = min(k, n_vocab)
        # log_softmax over the full vocabulary, but only at the per_beam best allowed tokens
        # of each row (ranked by logit: the same order); PAD and START are never emitted.
        top_values, top_ids, log_norm = _top_k_allowed(logits, per_beam, n_vocab)  # (BK, per_beam)
        # At its length limit a row may only emit END; a finished row only PAD, at zero cost.
        first_only = np.array([0.0] + [_NEG_INF] * (per_beam - 1), "float32")
        end_value = logits[:, END_ID : END_ID + 1] - log_norm  # (BK, 1)
        if skip_ended:  # back to all BK rows; ended rows are set below
            at_live = live[:, None]
            top_values = ops.scatter_update(
                ops.zeros((rows, per_beam), "float32"), at_live, top_values
            )
            top_ids = ops.scatter_update(ops.zeros((rows, per_beam), "int32"), at_live, top_ids)
            end_value = ops.scatter_update(ops.zeros((rows, 1), "float32"), at_live, end_value)
        at_limit = ops.greater_equal(t + 1, row_max_lengths)[:, None]
        top_values = ops.where(at_limit, end_value + first_only, top_values)
        top_values = ops.where(finished[:, None], first_only, top_values)
        top_ids = ops.where(at_limit, END_ID, top_ids)
        top_ids = ops.where(finished[:, None], PAD_ID, top_ids)

        cand_scores = v["scores"][:, None] + top_values
        if k == 1 and per_beam == 1:  # greedy: the arg-max token, no reordering
            parents = ops.arange(rows, dtype="int32")
            tokens = top_ids[:, 0]
            new_scores = cand_scores[:, 0]
            parent_finished = finished
            parent_lengths = v["lengths"]
        else:
            width = k * per_beam
            rank = cand_scores
            if alpha > 0:
                cand_lengths = ops.where(finished, v["lengths"], t + 1)[:, None]
                rank = cand_scores / length_penalty_factor(cand_lengths, alpha)
            _, chosen = ops.top_k(ops.reshape(rank, (-1, width)), k)  # (B, K)
            parents = ops.reshape(beam_offsets[:, None] + chosen // per_beam, (-1,))
            tokens = ops.reshape(
                ops.take_along_axis(ops.reshape(top_ids, (-1, width)), chosen, axis=1), (-1,)
            )
            new_scores = ops.reshape(
                ops.take_along_axis(ops.reshape(cand_scores, (-1, width)), chosen, axis=1),
                (-1,),
            )
            new_state = _map(lambda x: ops.take(x, parents, axis=0), tuple(new_state))
            parent_finished = ops.take(finished, parents, axis=0)
            parent_lengths = ops.take(v["lengths"], parents, axis=0)
            if return_attention and weights is not None:
                weights = ops.take(weights, parents, axis=0)

        dead = ops.equal(new_scores, _NEG_INF)  # only when fewer than K finite candidates
        stopped = ops.logical_or(parent_finished, dead)
        tokens = ops.cast(ops.where(stopped, PAD_ID, tokens), "int32")
        out = {
            "t": t + 1,
            "prev_ids": tokens,
            "state": tuple(new_state),
            "scores": new_scores,
            "finished": ops.logical_or(stopped, ops.equal(tokens, END_ID)),
            "lengths": ops.where(parent_finished, parent_lengths, t + 1),
            "tokens": ops.slice_update(v["tokens"], [0, t], tokens[:, None]),
            "parents": ops.slice_update(v["parents"], [0, t], ops.cast(parents, "int32")[:, None]),
        }
        if skip_ended and k > 1 and stop_early:
            # A decided sentence's alive hypotheses can no longer be chosen: end them (they
            # keep their scores and lengths), so later steps skip their output layer too.
            decided_rows = ops.repeat(_decided(out), k, axis=0)
            out["finished"] = ops.logical_or(out["finished"], decided_rows)
        if return_attention:
            if weights is None:
                weights = ops.zeros((rows, source_len), dtype="float32")
            step_weights = ops.where(stopped[:, None], 0.0, ops.cast(weights, "float32"))
            out["attention"] = ops.slice_update(v["attention"], [0, t, 0], step_weights[:, None, :])
        return out

    v = ops.while_loop(condition, body, loop_vars)
    steps = v["t"]
    scores, lengths = v["scores"], v["lengths"]
    normalized = scores / length_penalty_factor(lengths, alpha) if alpha > 0 else scores
    best = ops.cast(ops.argmax(ops.reshape(normalized, (-1, k)), axis=1), "int32")  # (B,)
    final_rows = beam_offsets + best

    if k == 1:
        ids = v["tokens"]
        attention = v.get("attention")
    else:
        # Follow the back-pointers from the chosen final beams: row_at[b, s] is the row that
        # held sentence b's chosen hypothesis at step s.
        flat_parents = ops.reshape(v["parents"], (-1,))

        def back_condition(s, row, row_at):
            return ops.greater_equal(s, 0)

        def back_body(s, row, row_at):
            row_at = ops.slice_update(row_at, [0, s], row[:, None])
            row = ops.take(flat_parents, row * buffer_len + s, axis=0)
            return s - 1, row, row_at

        _, _, row_at = ops.while_loop(
            back_condition,
            back_body,
            (steps - 1, final_rows, ops.zeros((batch, buffer_len), dtype="int32")),
        )
        positions = row_at * buffer_len + ops.arange(buffer_len, dtype="int32")[None, :]
        ids = ops.take(ops.reshape(v["tokens"], (-1,)), positions, axis=0)
        attention = None
        if return_attention:
            flat_attention = ops.reshape(v["attention"], (-1, source_len))
            attention = ops.take(flat_attention, ops.reshape(positions, (-1,)), axis=0)
            attention = ops.reshape(attention, (batch, buffer_len, source_len))
        # Columns at or after `steps` were never written: PAD ids, zero attention.
        written = ops.less(ops.arange(buffer_len, dtype="int32"), steps)[None, :]
        ids = ops.where(written, ids, PAD_ID)
        if return_attention:
            attention = ops.where(written[:, :, None], attention, 0.0)

    log_probs = ops.take(scores, final_rows, axis=0)
    final_lengths = ops.take(lengths, final_rows, axis=0)
    padded = {
        "ids": ops.cast(ids, "int32"),
        "scores": ops.take(normalized, final_rows, axis=0),
        "lengths": ops.cast(final_lengths, "int32"),
        "log_probs": log_probs,
        "steps": steps,
    }
    if return_attention:
        padded["attention"] = attention
    return padded


def _trim(padded):
    # The loop may run past the chosen hypotheses' END (other beams still alive); keep the
    # columns up to the longest chosen hypothesis.
    steps = ops.max(padded["lengths"])
    attention = padded.get("attention")
    return SearchResult(
        ids=padded["ids"][:, :steps],
        scores=padded["scores"],
        attention=None if attention is None else attention[:, :steps, :],
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
    Returns:
        a `SearchResult` (ids, scores, attention, lengths, log_probs); see its docstring.

    Works eagerly and inside `tf.function`. See the module docstring for the exact rules.

    Example:
        >>> result = search(model, [[5, 6, 7, 0]], beam_size=4)  # doctest: +SKIP
        >>> result.ids  # doctest: +SKIP
        <tf.Tensor: shape=(1, 5), dtype=int32, numpy=array([[9, 4, 8, 2, 0]])>
    """
    options = _checked_options(
        model, beam_size, length_penalty, max_length_ratio, max_length_offset, return_attention
    )
    source_ids = _check_source(source_ids)
    if jit_compile:
        padded = _compiled_search(model, options)(source_ids)
    else:
        padded = _search_padded(model, source_ids, *options)
    return _trim(padded)


def _checked_options(
    model, beam_size, length_penalty, max_length_ratio, max_length_offset, return_attention
):
    """Checks the model and the search options; returns them as `_search_padded`'s tuple."""
    _check_options(beam_size, length_penalty, max_length_ratio, max_length_offset)
    _components(model)
    return (
        int(beam_size),
        float(length_penalty),
        float(max_length_ratio),
        int(max_length_offset),
        bool(return_attention),
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
        model, beam_size, length_penalty, max_length_ratio, max_length_offset, return_attention
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
