"""The k best allowed tokens of each row of logits, by a chunked top-k (`top_k_allowed`)."""

import numpy as np
from keras import ops

from zoo.constants import PAD_ID, START_ID

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
