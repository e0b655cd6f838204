"""NumPy versions of the attention equations of Bahdanau et al. 2014 and Luong et al. 2015.

Written from the papers' equations, not from `zoo.layers`, so that the layer tests compare
two independent implementations. Everything runs in float64 on NumPy arrays; weights are in
Keras orientation (`x @ W`). Shapes:

    query (B, Dq) or (B, Tq, Dq); memory (B, Ts, Dm); mask bool (B, Ts), True = real position.
    returns context (B, [Tq,] Dm), weights (B, [Tq,] Ts)

A row with no unmasked position (or an empty local window) gets zero weights and zero context.
"""

from __future__ import annotations

import numpy as np


def weights_by_name(layer):
    """The layer's variables as float64 NumPy arrays, keyed by their short names (`W_a`...)."""
    out = {}
    for v in layer.weights:
        name = v.name.split("/")[-1]
        assert name not in out, f"two weights named {name!r} in {layer.name}"
        out[name] = np.asarray(v.numpy(), dtype=np.float64)
    return out


def _prepare(query, memory, mask):
    query = np.asarray(query, np.float64)
    memory = np.asarray(memory, np.float64)
    single = query.ndim == 2
    q = query[:, None, :] if single else query
    b, ts = memory.shape[0], memory.shape[1]
    mask = np.ones((b, ts), bool) if mask is None else np.asarray(mask, bool)
    return q, memory, mask, single


def _finish(weights, memory, single):
    context = np.einsum("bts,bsd->btd", weights, memory)
    if single:
        return context[:, 0], weights[:, 0]
    return context, weights


def masked_softmax(scores, allowed):
    """Softmax of `scores` (..., Ts) over entries where `allowed`; rows with none allowed -> 0."""
    scores = np.where(allowed, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(allowed, np.exp(scores - top), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)


# ---- scores: (B, Tq, Dq) x (B, Ts, Dm) -> (B, Tq, Ts) ----


def bahdanau_scores(q, memory, W_a, U_a, v_a, g=None, b=None):
    """Bahdanau et al. 2014, appendix A.1.2: e_ts = v_a . tanh(W_a s_{t-1} + U_a h_s).

    With `g` and `b` (tensorflow/nmt `normed_bahdanau`, after Salimans & Kingma 2016):
    e_ts = (g v_a / ||v_a||) . tanh(W_a s + U_a h + b).
    """
    pre = (q @ W_a)[:, :, None, :] + (memory @ U_a)[:, None, :, :]
    if b is not None:
        pre = pre + b
    v = v_a if g is None else np.reshape(g, ()) * v_a / np.linalg.norm(v_a)
    return np.tanh(pre) @ v


def luong_scores(score, q, memory, w, ts=None):
    """Luong et al. 2015, section 3.1, eq. (8) and the location score of eq. (9)."""
    if score == "dot":
        return np.einsum("btd,bsd->bts", q, memory)
    if score == "general":
        return np.einsum("btd,bsd->bts", q @ w["W_a"], memory)
    if score == "concat":
        W_a, v_a = w["W_a"], w["v_a"]
        dq = q.shape[-1]
        pre = (q @ W_a[:dq])[:, :, None, :] + (memory @ W_a[dq:])[:, None, :, :]
        return np.tanh(pre) @ v_a
    if score == "location":  # positions past max_length score 0 (and get no weight)
        e = q @ w["W_a"]
        ts = memory.shape[1] if ts is None else ts
        return np.concatenate([e, np.zeros(e.shape[:-1] + (ts,), e.dtype)], -1)[..., :ts]
    raise ValueError(score)


# ---- full attention ----


def bahdanau_attention(query, memory, mask, w, normalize=False):
    q, memory, mask, single = _prepare(query, memory, mask)
    if normalize:
        e = bahdanau_scores(q, memory, w["W_a"], w["U_a"], w["v_a"], g=w["g"], b=w["b"])
    else:
        e = bahdanau_scores(q, memory, w["W_a"], w["U_a"], w["v_a"])
    weights = masked_softmax(e, mask[:, None, :])
    return _finish(weights, memory, single)


def luong_attention(query, memory, mask, w, score):
    q, memory, mask, single = _prepare(query, memory, mask)
    e = luong_scores(score, q, memory, w)
    if score == "location":  # the score addresses the first max_length positions only
        mask = mask & (np.arange(memory.shape[1]) < w["W_a"].shape[1])[None, :]
    weights = masked_softmax(e, mask[:, None, :])
    return _finish(weights, memory, single)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def predictive_positions(q, w, lengths):
    """Luong eq. (9): p_t = S * sigmoid(v_p . tanh(W_p h_t)); q (B, Tq, Dq) -> (B, Tq)."""
    return lengths[:, None] * sigmoid(np.tanh(q @ w["W_p"]) @ w["v_p"])


def local_attention(query, memory, mask, w, window, mode, score, positions=None):
    """Luong et al. 2015, section 3.2 (local-m and local-p), 0-based positions.

    S = number of unmasked positions; window = unmasked s with |s - p_t| <= D.
    local-m: p_t = min(t, S - 1), weights = softmax over the window.
    local-p: p_t = S sigmoid(v_p . tanh(q W_p)), weights = softmax over the window
             * exp(-(s - p_t)^2 / (2 (D/2)^2)).
    Returns (context, weights, p) with p (B, [Tq]).
    """
    q, memory, mask, single = _prepare(query, memory, mask)
    b, tq = q.shape[0], q.shape[1]
    ts = memory.shape[1]
    lengths = mask.sum(axis=1).astype(np.float64)  # S
    if mode == "monotonic":
        if positions is None:
            t = np.broadcast_to(np.arange(tq, dtype=np.float64), (b, tq))
        else:
            t = np.asarray(positions, np.float64).reshape(b, tq)
        p = np.minimum(t, lengths[:, None] - 1)
    elif mode == "predictive":
        p = predictive_positions(q, w, lengths)
    else:
        raise ValueError(mode)
    s = np.arange(ts, dtype=np.float64)[None, None, :]
    allowed = mask[:, None, :] & (np.abs(s - p[:, :, None]) <= window)
    e = luong_scores(score, q, memory, w)
    weights = masked_softmax(e, allowed)
    if mode == "predictive":
        sigma = window / 2.0
        weights = weights * np.exp(-((s - p[:, :, None]) ** 2) / (2 * sigma**2))
    context, weights = _finish(weights, memory, single)
    return context, weights, (p[:, 0] if single else p)


# ---- test data ----


def ragged_mask(lengths, ts):
    """Bool (B, Ts) mask whose row i keeps its first lengths[i] positions."""
    return np.arange(ts)[None, :] < np.asarray(lengths)[:, None]


def random_inputs(seed, batch, ts, dq, dm, tq=None, lengths=None):
    """A query ((B, Dq) if tq is None else (B, Tq, Dq)), memory (B, Ts, Dm) and ragged mask.

    `lengths` defaults to a spread that includes a full row and, for batch >= 3, an empty one.
    """
    rng = np.random.default_rng(seed)
    shape = (batch, dq) if tq is None else (batch, tq, dq)
    query = rng.standard_normal(shape).astype("float32")
    memory = rng.standard_normal((batch, ts, dm)).astype("float32")
    if lengths is None:
        lengths = [ts] + [int(x) for x in rng.integers(1, ts + 1, batch - 1)]
        if batch >= 3:
            lengths[-1] = 0
    return query, memory, ragged_mask(lengths, ts)


def randomize_weights(layer, seed, scale=0.5):
    """Overwrite every weight with N(0, scale^2) draws, so that scores are far from uniform."""
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign((scale * rng.standard_normal(tuple(v.shape))).astype("float32"))
