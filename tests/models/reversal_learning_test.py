"""The reversal task: attention models learn it, the attention-free baseline does worse."""

import keras
import numpy as np
import pytest
from model_toy import reversal_batch

from zoo.constants import END_ID, START_ID
from zoo.models import build

# Sentences long enough that one fixed-size vector (the baselines) struggles to hold them.
VOCAB, MIN_LEN, MAX_LEN = 24, 8, 16


def greedy_token_accuracy(model, source, target_out):
    """Greedy decoding with decoder.step; accuracy over the reference's real tokens + END."""
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    cache = decoder.prepare(*encoder(source))
    state = decoder.initial_state(cache)
    prev = np.full((source.shape[0],), START_ID, "int32")
    predicted = []
    for _ in range(target_out.shape[1]):
        logits, state, _ = decoder.step(prev, state, cache)
        prev = np.asarray(keras.ops.argmax(logits, axis=-1)).astype("int32")
        predicted.append(prev)
    predicted = np.stack(predicted, 1)
    real = target_out != 0
    assert np.all(target_out[real.sum(1) > 0].max(1) >= END_ID)
    return float((predicted == target_out)[real].mean())


def _train(name, **overrides):
    rng = np.random.default_rng(0)
    train = reversal_batch(rng, 3000, MIN_LEN, MAX_LEN, VOCAB)
    test = reversal_batch(rng, 200, MIN_LEN, MAX_LEN, VOCAB)
    keras.utils.set_random_seed(0)
    model = build(name, "tiny", VOCAB, VOCAB, **overrides)
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
    )
    model.fit(
        {"source_ids": train[0], "target_ids": train[1]}, train[2],
        batch_size=100, epochs=12, verbose=0,
    )  # fmt: skip
    return greedy_token_accuracy(model, test[0], test[2])


@pytest.mark.slow
def test_attention_learns_reversal_and_the_baseline_does_worse():
    rnnsearch = _train("bahdanau_rnnsearch", units=64, encoder_units=64, attention_units=64)
    luong = _train("luong_global_general", units=64, dropout=0.0)
    rnnencdec = _train("bahdanau_rnnencdec", units=64, encoder_units=64)
    luong_base = _train("luong_base", units=64, dropout=0.0)
    assert rnnsearch >= 0.95, rnnsearch
    assert luong >= 0.95, luong
    best = min(rnnsearch, luong)
    assert rnnencdec < best - 0.05, (rnnencdec, rnnsearch, luong)
    assert luong_base < best - 0.05, (luong_base, rnnsearch, luong)
