"""Sampling (`zoo.search.sample`) on the backend this process runs: a seed reproduces the
draws, another seed draws others, a `SeedGenerator` advances, every step draws with a new
key, and the scores are the model's log-probabilities of the drawn tokens."""

import functools

import keras
import numpy as np

from zoo.constants import END_ID, PAD_ID
from zoo.search import sample
from zoo.testing.search_probe import (
    SOURCES,
    as_numpy,
    build_probe,
    random_weights,
    teacher_forced_log_probs,
)

VOCAB = 30  # 27 words: two different seeds draw the same outputs with negligible probability


@functools.cache
def probe():
    model = build_probe("luong_global_general", target_vocab=VOCAB)
    model.set_weights(random_weights(model, seed=2, scale=0.5))
    return model


def test_a_seed_reproduces_the_draws_and_another_draws_others():
    model = probe()
    first = as_numpy(sample(model, SOURCES, seed=5))
    again = as_numpy(sample(model, SOURCES, seed=5))
    other = as_numpy(sample(model, SOURCES, seed=6))
    np.testing.assert_array_equal(first["ids"], again["ids"])
    assert first["ids"].shape != other["ids"].shape or np.any(first["ids"] != other["ids"])
    for i, row in enumerate(SOURCES):  # the scores: the drawn tokens' log-probabilities
        length = int(first["lengths"][i])
        output = list(first["ids"][i, :length])
        assert output[-1] == END_ID and PAD_ID not in output
        expected = teacher_forced_log_probs(model, row, [output])[0]
        np.testing.assert_allclose(first["scores"][i], expected, rtol=1e-5, atol=1e-5)


def test_a_seed_generator_advances_through_the_steps():
    model = probe()
    generator = keras.random.SeedGenerator(11)
    start = keras.ops.convert_to_numpy(generator.state.value).copy()
    first = as_numpy(sample(model, SOURCES, seed=generator))
    after = keras.ops.convert_to_numpy(generator.state.value)
    # One draw per step: the state's counter advanced by the number of steps run.
    assert after[0] == start[0] and after[1] - start[1] == first["lengths"].max()
    second = as_numpy(sample(model, SOURCES, seed=generator))
    assert first["ids"].shape != second["ids"].shape or np.any(first["ids"] != second["ids"])
    generator.state.assign(start)
    np.testing.assert_array_equal(as_numpy(sample(model, SOURCES, seed=generator))["ids"],
                                  first["ids"])  # fmt: skip


def test_every_step_draws_with_a_new_key():
    # Every step's distribution is the same (all weights 0 but the output bias): a key
    # reused from step to step would draw one token again and again.
    model = build_probe("luong_global_general", target_vocab=VOCAB)
    weights = [np.zeros_like(w) for w in model.get_weights()]
    paths = [w.path for w in model.weights]
    bias = np.zeros(VOCAB, "float32")
    bias[END_ID] = -8.0  # END is all but never drawn before the length limit
    weights[paths.index("decoder/W_s/bias")] = bias
    model.set_weights(weights)
    ids = as_numpy(sample(model, np.tile(SOURCES[:1], (4, 1)), seed=3))["ids"]
    for row in ids:
        words = row[row > END_ID]
        assert len(words) >= 8 and len(set(words.tolist())) > 1, ids
