"""Decoding controls: the tokens a search step may not emit, in one place (`StepControls`),
and the k best allowed tokens of each row of logits, by a chunked top-k (`top_k_allowed`).

Greedy and beam search score a step's extensions with the same helper (`StepControls.top_k`),
which masks the model's log-probabilities before the step's top-k:
- `min_length` m: END's log-probability is -inf at steps t < m (0-based: before m tokens),
  except at a sentence's length limit, where END is the only token allowed, and when no
  other token is left (the other controls may leave none in a tiny vocabulary).
- `ban_unknown`: `UNK_ID` is -inf at every step.
- `no_repeat_ngram_size` n: a token that would complete an n-gram the hypothesis already
  contains is -inf (Paulus et al. 2017; fairseq's rule). END never completes one (a
  hypothesis holds no END before its last token).
- `prefix`: at step t < P_b (P_b: the number of ids of sentence b's prefix before its first
  pad), the only token allowed is the prefix's t-th, whatever the other controls say. Its
  log-probability counts in the hypothesis' score, as fairseq's `--prefix-size` counts it:
  scores stay the model's log-probability of the whole output, prefix included.
An allowed token keeps its log-probability under the model (the normaliser runs over the
whole vocabulary), so the scores are still those `SearchResult` documents.

With every control off, `StepControls.active` is False and the search runs exactly the
graph it runs without this module (the conditionals are Python's, on the settings). A
control given as a scalar tensor (a traced search's input) is always in the graph, and its
value decides at run time: one graph for every value.
"""

import numpy as np
from keras import ops

from zoo.constants import END_ID, INT32_MAX, PAD_ID, START_ID, UNK_ID

NEG_INF = float("-inf")
CHUNK = 64  # chunks of about this many vocabulary entries
BANNED = (PAD_ID, START_ID)  # never emitted


def chunk_size(vocab_size, k):
    """A divisor of `vocab_size` near `CHUNK` (so rows reshape without padding) when the
    vocabulary is large enough for chunking to pay, else None (plain top-k)."""
    if vocab_size < 4 * k * CHUNK or max(BANNED) >= CHUNK // 2:
        return None
    for delta in range(CHUNK // 2 + 1):
        for size in (CHUNK + delta, CHUNK - delta):
            if vocab_size % size == 0 and vocab_size // size >= 4 * k:
                return size
    return None


def top_k_allowed(logits, k, vocab_size):
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
    banned = np.where(np.isin(ids_range, BANNED), NEG_INF, 0.0).astype("float32")
    size = chunk_size(vocab_size, k)
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


def target_vocab_size(model):
    """The model's target vocabulary size when it can be read (the decoder's `vocab_size`
    or the logits' last axis), else None."""
    size = getattr(model.get_layer("decoder"), "vocab_size", None)
    if size is None:
        try:
            size = model.outputs[0].shape[-1]
        except (AttributeError, IndexError, TypeError, ValueError):
            return None
    return None if size is None else int(size)


def check_ids(values, name, vocab_size=None):
    """A ValueError when `values` (a NumPy array of a prefix's or constraints' ids, or None
    for a symbolic tensor) holds START, END, a negative id or one past the vocabulary."""
    if values is None or not values.size:
        return
    bad = values[np.isin(values, (START_ID, END_ID)) | (values < 0)]
    if bad.size:
        raise ValueError(
            f"{name} ids must be target word ids (or UNK_ID={UNK_ID}), 0 only as padding "
            f"after them; received id {int(bad[0])} (START_ID={START_ID} and "
            f"END_ID={END_ID} are not allowed)."
        )
    if vocab_size is not None and values.max() >= vocab_size:
        raise ValueError(
            f"{name} ids must be below the model's target vocabulary size {vocab_size}; "
            f"received id {int(values.max())} (ids from another tokenizer?)."
        )


def integer_rows(rows, name, received):
    """Each of `rows` as a flat int64 NumPy array; a ValueError naming `name` and what was
    `received` when one holds something other than integers."""
    try:
        return [np.asarray(row, "int64").reshape(-1) for row in rows]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold integer target ids; received {received!r}.") from None


def checked_ids(value, name, axes, entry, batch=None, vocab_size=None):
    """`value`, a tensor or array of target ids whose axes are `axes` ("batch" first), as
    int32 after its checks: its rank, an integer dtype, `batch` rows when both are known
    (`entry`: what one row holds, for the message), and, when it can be read eagerly, its
    ids (`check_ids`). A ValueError names `name` and what was received."""
    shape = tuple(value.shape)
    if len(shape) != len(axes):
        raise ValueError(
            f"{name} must have shape ({', '.join(axes)}), got shape {shape}: one {entry} per "
            "sentence."
        )
    dtype = str(getattr(value.dtype, "name", value.dtype))
    if "int" not in dtype:
        raise ValueError(f"{name} must hold integer target ids, got dtype {dtype}.")
    if batch is not None and shape[0] is not None and shape[0] != batch:
        raise ValueError(
            f"{name} has {shape[0]} rows for {batch} source sentences; give one (possibly "
            f"empty) {entry} per sentence."
        )
    try:
        values = np.asarray(value)
    except (TypeError, ValueError, NotImplementedError):  # a symbolic tensor
        values = None
    check_ids(values, name, vocab_size)
    return ops.cast(value, "int32")


def check_prefix(prefix, batch=None, vocab_size=None):
    """`prefix` as a (B, P) int32 tensor, 0 = pad (None stays None).

    Accepts a ragged list of id lists (an empty one: no prefix), a NumPy array or tensor
    (B, P), or a `tf.RaggedTensor`. Eagerly, a ValueError for another rank, a batch of
    another size than `batch` (the source's), or ids that are START or END (a prefix is
    what the output starts with: words, UNK and pads after them) or ids past `vocab_size`."""
    if prefix is None:
        return None
    if hasattr(prefix, "to_tensor") and hasattr(prefix, "row_lengths"):  # tf.RaggedTensor
        prefix = prefix.to_tensor(default_value=PAD_ID)
    if not hasattr(prefix, "shape") or not hasattr(prefix, "dtype"):
        rows = list(prefix)
        if any(not hasattr(row, "__len__") for row in rows):
            raise ValueError(
                "prefix must be one list of target ids per sentence (or a (batch, length) "
                f"int array, 0 = pad); received {prefix!r}."
            )
        rows = integer_rows(rows, "prefix", prefix)
        padded = np.zeros((len(rows), max([row.size for row in rows], default=0)), "int64")
        for i, row in enumerate(rows):
            padded[i, : row.size] = row
        prefix = padded
    checked = checked_ids(prefix, "prefix", ("batch", "prefix_len"), "prefix", batch, vocab_size)
    return None if tuple(prefix.shape)[1] == 0 else checked  # 0: no sentence has a prefix


def prefix_lengths(prefix):
    """(B,) int32: the number of ids of each prefix row before its first pad."""
    real = ops.cast(ops.not_equal(prefix, PAD_ID), "int32")
    return ops.sum(ops.cumprod(real, axis=1), axis=1)


def repeated_ngram_tokens(history, t, n, vocab_size):
    """(R, V) bool: True at the tokens that would complete an n-gram already in a row.

    Args:
        history: (R, T) int32, each row's tokens; columns < t are its output so far.
        t: scalar int32 tensor, the number of tokens emitted so far.
        n: the n-gram size, an int >= 1 (a Python int or a scalar int32 tensor).
        vocab_size: V, a Python int.
    The n-gram at positions j..j+n-1 (j <= t - n) bans its last token when its first
    n - 1 tokens equal the row's last n - 1 (for n = 1: every token emitted so far).
    The n - 1 comparisons run in a loop of the graph, and only once the row has n tokens
    (t >= n): the graph is the same for every n, and an n longer than any output allowed
    costs nothing.
    """
    rows, width = ops.shape(history)[0], ops.shape(history)[1]
    positions = ops.arange(width, dtype="int32")  # (T,)
    n = ops.cast(n, "int32")
    m = ops.minimum(n - 1, width)  # beyond the width no n-gram fits (and no sum overflows)

    def shifted(i):  # column j holds history[:, j + i] (pad past the end)
        columns = positions + i
        inside = ops.less(columns, width)
        taken = ops.take(history, ops.minimum(columns, width - 1), axis=1)
        return ops.where(inside[None, :], taken, ops.zeros_like(taken))

    def compare(i, match):
        last = ops.take(history, ops.maximum(t - m + i, 0), axis=1)  # (R,)
        return ops.logical_and(match, ops.equal(shifted(i), last[:, None]))

    match = ops.less_equal(positions[None, :], t - n)  # (1, T): no column when t < n
    match = ops.broadcast_to(match, (rows, width))
    match = ops.fori_loop(0, ops.where(ops.less(t, n), 0, m), compare, match)
    banned = shifted(m)  # (R, T): the token completing the n-gram that starts at j
    row_ids = ops.broadcast_to(ops.arange(rows, dtype="int32")[:, None], (rows, width))
    indices = ops.stack([ops.reshape(row_ids, (-1,)), ops.reshape(banned, (-1,))], axis=1)
    counts = ops.scatter(
        indices, ops.reshape(ops.cast(match, "float32"), (-1,)), (rows, vocab_size)
    )
    return ops.greater(counts, 0.0)


def _on(value):
    """Whether a control takes part in the step: a tensor (its value known only when the
    graph runs) or a true Python value."""
    return ops.is_tensor(value) or bool(value)


class StepControls:
    """The decoding controls of one search call, applied to each step's logits.

    Args:
        settings: the `SearchSettings` (min_length, ban_unknown, no_repeat_ngram_size).
        prefix: None, or (N, P) int32 prefix ids of the N rows (a sentence's prefix repeated
            for its K beams), 0 = pad.
        row_max_lengths: (N,) int32, each row's length limit L_b.
    """

    def __init__(self, settings, prefix, row_max_lengths):
        self.min_length = settings.min_length
        self.ban_unknown = settings.ban_unknown
        self.ngram = settings.no_repeat_ngram_size
        self.prefix = prefix
        self.prefix_lengths = None if prefix is None else prefix_lengths(prefix)
        self.row_max_lengths = row_max_lengths

    @property
    def active(self):
        """Python bool: whether any control is on or a tensor (else the plain step runs)."""
        controls = (self.min_length, self.ban_unknown, self.ngram)
        return any(_on(value) for value in controls) or self.prefix is not None

    @property
    def needs_history(self):
        """Python bool: whether the rows' own token histories are needed (n-gram blocking
        on, or its size a tensor)."""
        return _on(self.ngram)

    def blocked(self, t, vocab_size, history=None, rows=None):
        """(R, V) bool: the tokens the controls forbid at step t (True = -inf).

        `history`: (N, T) int32 token histories (with n-gram blocking); `rows`: None for all
        N rows, or (R,) the row ids of the logits (the rows still extending)."""

        def of_rows(x):
            return x if rows is None else ops.take(x, rows, axis=0)

        ids = ops.arange(vocab_size, dtype="int32")[None, :]  # (1, V)
        count = ops.shape(of_rows(self.row_max_lengths))[0]
        never = np.isin(np.arange(vocab_size), BANNED)[None, :]  # PAD and START
        blocked = ops.logical_or(ops.zeros((count, vocab_size), dtype="bool"), never)
        if _on(self.ban_unknown):
            blocked = ops.logical_or(
                blocked, ops.logical_and(ops.equal(ids, UNK_ID), self.ban_unknown)
            )
        if _on(self.ngram):
            # A size of 0 (off, given as a tensor) compares as one longer than any output.
            n = ops.where(ops.greater(self.ngram, 0), self.ngram, INT32_MAX)
            blocked = ops.logical_or(
                blocked, repeated_ngram_tokens(of_rows(history), t, n, vocab_size)
            )
        if _on(self.min_length):
            # END before min_length tokens, unless at the limit or nothing else is left.
            is_end = ops.equal(ids, END_ID)
            others_left = ops.any(ops.logical_not(ops.logical_or(blocked, is_end)), axis=1)
            early = ops.logical_and(
                ops.less(t, self.min_length),
                ops.less(t + 1, of_rows(self.row_max_lengths)),
            )
            blocked = ops.logical_or(
                blocked, ops.logical_and(is_end, ops.logical_and(early, others_left)[:, None])
            )
        if self.prefix is not None:
            prefix = of_rows(self.prefix)
            forcing = ops.less(t, of_rows(self.prefix_lengths))  # (R,)
            column = ops.minimum(t, ops.maximum(ops.shape(prefix)[1] - 1, 0))
            forced = ops.take(prefix, column, axis=1)  # (R,) garbage when not forcing
            only = ops.not_equal(ids, forced[:, None])
            blocked = ops.where(forcing[:, None], only, blocked)
        return blocked

    def top_k(self, logits, k, vocab_size, t, history=None, rows=None, extra_ids=None):
        """The step's k best allowed tokens under the controls: `top_k_allowed` on the
        masked logits, with each token's log-probability under the model.

        Returns (values (R, k), ids (R, k), end_value (R, 1), extra (R, E) or None):
        log-probabilities (-inf for a forbidden token), ids, END's log-probability (-inf
        when forbidden), and those of the tokens `extra_ids` (R, E) when given."""
        log_norm = ops.logsumexp(logits, axis=-1, keepdims=True)
        masked = ops.where(self.blocked(t, vocab_size, history, rows), NEG_INF, logits)
        _, top_ids, _ = top_k_allowed(masked, k, vocab_size)
        top_values = ops.take_along_axis(masked, top_ids, axis=1) - log_norm
        extra = None
        if extra_ids is not None:
            extra = ops.take_along_axis(masked, extra_ids, axis=1) - log_norm
        return top_values, top_ids, masked[:, END_ID : END_ID + 1] - log_norm, extra
