"""A toy translation model that follows the encoder/decoder contract of docs/design.md exactly.

Used by the search tests, independently of the real models in zoo.models:
- ToyEncoder: memory = an embedding of the source ids (zero at padding), mask = ids != PAD,
  encoder_states = [masked mean of memory].
- ToyDecoder: a tanh RNN with dot attention over the memory, whose logits are
  `transition[prev_id] + mix * W_o [h_t; c_t]`. With `mix=0` the next-token distribution is
  a fixed function of the previous token (a Markov chain given by `transition`).
- RowsToyDecoder: the same with `step(..., rows=)` (some rows stepped only).
"""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from zoo.constants import END_ID, PAD_ID
from zoo.testing.search_probe import (  # the references, shared with every backend's tests
    all_hypotheses,
    greedy_reference,
    log_softmax,
)
from zoo.testing.search_probe import teacher_forced_log_probs as sequence_log_probs

__all__ = [
    "RowsToyDecoder",
    "ToyDecoder",
    "ToyEncoder",
    "all_hypotheses",
    "greedy_reference",
    "log_softmax",
    "sequence_log_probs",
    "toy_model",
]


class ToyEncoder(keras.layers.Layer):
    def __init__(self, vocab_size, units, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.units = units

    def build(self, source_shape):
        self.E = self.add_weight(
            name="E",
            shape=(self.vocab_size, self.units),
            initializer=keras.initializers.RandomNormal(stddev=1.0, seed=1),
        )

    def call(self, source_ids, training=None):
        mask = ops.not_equal(source_ids, PAD_ID)
        memory = ops.take(self.E, source_ids, axis=0) * ops.cast(mask, "float32")[..., None]
        count = ops.maximum(ops.sum(ops.cast(mask, "float32"), axis=1, keepdims=True), 1.0)
        return memory, mask, [ops.sum(memory, axis=1) / count]


class ToyDecoder(keras.layers.Layer):
    def __init__(self, vocab_size, units, transition=None, mix=1.0, seed=2, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.units = units
        self.transition = transition
        self.mix = mix
        self.seed = seed

    def build(self, *shapes):
        rng = np.random.default_rng(self.seed)
        v, u = self.vocab_size, self.units
        table = rng.normal(size=(v, v)) if self.transition is None else self.transition

        def weight(name, shape, value):
            return self.add_weight(
                name=name, shape=shape, initializer=keras.initializers.Constant(value)
            )

        self.E = weight("E", (v, u), rng.normal(size=(v, u)))
        self.W = weight("W", (u, u), rng.normal(size=(u, u)) / np.sqrt(u))
        self.U = weight("U", (u, u), rng.normal(size=(u, u)) / np.sqrt(u))
        self.W_k = weight("W_k", (u, u), rng.normal(size=(u, u)))
        self.W_o = weight("W_o", (2 * u, v), rng.normal(size=(2 * u, v)) / np.sqrt(2 * u))
        self.T = weight("T", (v, v), np.asarray(table, dtype="float32"))

    def prepare(self, memory, source_mask, encoder_states):
        keys = ops.einsum("btu,uv->btv", memory, self.W_k)
        return {"memory": memory, "mask": source_mask, "keys": keys, "summary": encoder_states[0]}

    def initial_state(self, cache):
        return (ops.tanh(cache["summary"]),)

    def step(self, prev_ids, state, cache, training=False):
        return self._step(prev_ids, state, cache)

    def _step(self, prev_ids, state, cache):
        prev_ids = ops.cast(prev_ids, "int32")
        h = ops.tanh(
            ops.matmul(ops.take(self.E, prev_ids, axis=0), self.W) + ops.matmul(state[0], self.U)
        )
        scores = ops.einsum("btu,bu->bt", cache["keys"], h)
        scores = ops.where(cache["mask"], scores, -1e9)
        weights = ops.softmax(scores, axis=-1)
        context = ops.einsum("bt,btu->bu", weights, cache["memory"])
        features = ops.concatenate([h, context], axis=-1)
        logits = ops.take(self.T, prev_ids, axis=0) + self.mix * ops.matmul(features, self.W_o)
        return logits, (h,), weights

    def call(self, target_ids, memory, source_mask, encoder_states, training=None):
        cache = self.prepare(memory, source_mask, encoder_states)
        state = self.initial_state(cache)
        batch = ops.shape(target_ids)[0]
        init = (state, ops.zeros((batch, self.vocab_size)))

        def body(carry, ids_t):
            logits, new_state, _ = self.step(ids_t, carry[0], cache)
            return (new_state, logits), (new_state, logits)

        _, (_, logits) = ops.scan(body, init, ops.transpose(ops.cast(target_ids, "int32")))
        return ops.transpose(logits, (1, 0, 2))


class RowsToyDecoder(ToyDecoder):
    """The toy with `step(..., rows=)`, as DecoderBase has: search then steps only the rows
    still extending (the other rows' state kept, their weights zero). `step_sizes` records,
    in eager runs, how many rows each step got (so a test can see the skipping happen)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.step_sizes = []

    def step(self, prev_ids, state, cache, training=False, rows=None):
        if rows is None:
            return self._step(prev_ids, state, cache)
        if tf.executing_eagerly():
            self.step_sizes.append(int(ops.shape(rows)[0]))
        take = lambda x: ops.take(x, rows, axis=0)  # noqa: E731
        logits, (h,), weights = self._step(
            take(prev_ids), (take(state[0]),), {k: take(x) for k, x in cache.items()}
        )
        at = rows[:, None]
        h = ops.scatter_update(state[0], at, h)
        weights = ops.scatter_update(ops.zeros_like(cache["mask"], "float32"), at, weights)
        return logits, (h,), weights


def toy_model(
    source_vocab=9,
    target_vocab=7,
    units=8,
    transition=None,
    mix=1.0,
    seed=2,
    end_bias=0.0,
    step_rows=True,
):
    """The toy as a functional model; `end_bias` is added to every logit of END (random table).
    `step_rows=True` (the real decoders' contract) uses `RowsToyDecoder`; False the plain
    `ToyDecoder`, whose step computes every row."""
    if transition is None:
        transition = np.random.default_rng(seed).normal(size=(target_vocab, target_vocab))
        transition[:, END_ID] += end_bias
    source = keras.Input((None,), dtype="int32", name="source_ids")
    target = keras.Input((None,), dtype="int32", name="target_ids")
    memory, mask, states = ToyEncoder(source_vocab, units, name="encoder")(source)
    decoder_class = RowsToyDecoder if step_rows else ToyDecoder
    logits = decoder_class(
        target_vocab, units, transition=transition, mix=mix, seed=seed, name="decoder"
    )(target, memory, mask, states)
    return keras.Model({"source_ids": source, "target_ids": target}, logits)
