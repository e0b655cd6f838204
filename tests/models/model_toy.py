"""Toy data and helpers shared by the model tests (a uniquely named module: a bare
`from conftest import ...` would pick whichever conftest.py pytest imported first)."""

import numpy as np

from zoo.constants import END_ID, START_ID


def reversal_batch(rng, batch, min_len, max_len, vocab):
    """Random right-padded source ids and the reversal task's decoder input/output ids."""
    lengths = rng.integers(min_len, max_len + 1, batch)
    source = np.zeros((batch, max_len), "int32")
    target_in = np.zeros((batch, max_len + 1), "int32")
    target_out = np.zeros((batch, max_len + 1), "int32")
    for b, n in enumerate(lengths):
        words = rng.integers(4, vocab, n)
        source[b, :n] = words
        target_in[b, 0] = START_ID
        target_in[b, 1 : n + 1] = words[::-1]
        target_out[b, :n] = words[::-1]
        target_out[b, n] = END_ID
    return source, target_in, target_out


def stepwise_logits(model, source, target, training=False):
    """Logits from decoder.step run in a Python loop over the teacher-forced target."""
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    memory, mask, states = encoder(source, training=training)
    cache = decoder.prepare(memory, mask, states)
    state = decoder.initial_state(cache)
    logits, weights = [], []
    for t in range(target.shape[1]):
        step_logits, state, step_weights = decoder.step(target[:, t], state, cache, training)
        logits.append(np.asarray(step_logits))
        weights.append(np.asarray(step_weights))
    return np.stack(logits, 1), np.stack(weights, 1)
