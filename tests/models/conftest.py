"""Shared toy data and helpers for the model tests."""

import numpy as np
import pytest

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


@pytest.fixture
def toy_batch():
    """A small right-padded batch: source (3, 5), target input (3, 6)."""
    source = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12], [4, 0, 0, 0, 0]], "int32")
    target = np.array([[1, 7, 6, 5, 0, 0], [1, 12, 11, 10, 9, 8], [1, 4, 0, 0, 0, 0]], "int32")
    return source, target


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
