"""`Sampler`: the part of a `Translator` that draws translations at random (`sample`),
through one traced function for every seed, temperature, top_k and top_p."""

import threading

import keras
import numpy as np
import tensorflow as tf

from zoo.backend import on_tensorflow
from zoo.checks import check_int
from zoo.search import check_sampling
from zoo.search.defaults import TEMPERATURE
from zoo.translation import as_text
from zoo.translator import graph, staged

SAMPLING_SIGNATURE = [
    tf.TensorSpec([None], tf.string, name="sentences"),
    tf.TensorSpec([], tf.float32, name="temperature"),
    tf.TensorSpec([], tf.int32, name="top_k"),
    tf.TensorSpec([], tf.float32, name="top_p"),
]


class Sampler:
    """The sampled translations of `translator` (a `Translator`, which holds its sampler as
    `translator.sampler` and answers `sample`, `sample_function` and `graph_sample` with it).

    The draws come from one `keras.random.SeedGenerator` (a variable, made when first
    needed), which each call of `sample` sets from its seed: one call at a time."""

    def __init__(self, translator):
        self.translator = translator
        self._seed_generator = None
        self._lock = threading.RLock()

    def _generator(self):
        with self._lock:
            if self._seed_generator is None:
                self._seed_generator = keras.random.SeedGenerator(0, name="sample_seed")
            return self._seed_generator

    def graph_sample(self, sentences, seed, temperature=TEMPERATURE, top_k=None, top_p=None):
        """One translation drawn per `tf.string` sentence (B,) from the `SeedGenerator`
        `seed`, in the graph (`zoo.translator.graph.draw`); temperature, top_k and top_p
        are numbers or scalar tensors (`zoo.search.sampling.shaped_logits`)."""
        return graph.draw(self.translator, sentences, seed, temperature, top_k, top_p)

    def sample(
        self, sentences, temperature=TEMPERATURE, top_k=None, top_p=None, seed=None, batch_size=None,
        progress=False,
    ):  # fmt: skip
        """One translation drawn at random per sentence (a list of str, in input order):
        temperature, top-k and top-p sampling as in `zoo.search.sample`, the usual way to
        make synthetic sources for back-translation (module docstring of `zoo.search`).

        Args:
            sentences: list of source sentences.
            temperature: > 0; below 1 sharper, above 1 flatter than the model (below
                `zoo.search.sampling.ARGMAX_TEMPERATURE`, the most likely token).
            top_k: draw from the k most likely tokens only (None: all).
            top_p: draw from the nucleus holding probability p, in (0, 1] (None: all).
            seed: an int makes the call reproducible: the same sentences, seed and
                batch size give the same translations (None: fresh draws).
            batch_size, progress: as for `translate`.
        """
        check_sampling(temperature, top_k, top_p)
        seed = check_int(None, "seed", seed, minimum=0, allow_none=True)
        translator = self.translator
        vocab = translator.target_tokenizer.vocab_size
        settings = (  # as the traced function takes them: float32, int32, float32
            np.float32(min(float(temperature), float(np.finfo(np.float32).max))),
            np.int32(vocab if top_k is None else min(top_k, vocab)),  # V: no cut
            np.float32(1.0 if top_p is None else top_p),
        )

        def make():
            function = self.sample_function()
            return lambda strings: function(strings, *settings)

        with self._lock:
            if seed is None:
                seed = int(np.random.default_rng().integers(2**31))
            if not on_tensorflow():  # the draws on the backend, seeded per batch
                asked = (float(settings[0]), top_k and int(settings[1]), top_p)
                make = lambda: staged.sample_call(translator, seed, *asked)  # noqa: E731
                _, outputs = translator.run_batches(sentences, batch_size, progress, make)
                return [as_text(out["translation"]) for out in outputs]
            state = self._generator().state
            state.assign(np.array([seed, 0], state.dtype))  # as SeedGenerator(seed) starts
            _, outputs = translator.run_batches(sentences, batch_size, progress, make)
        return [as_text(out["translation"]) for out in outputs]

    def sample_function(self):
        """The `tf.function` `(sentences, temperature, top_k, top_p) -> dict` that `sample`
        runs on TensorFlow (`graph_sample` drawing from this sampler's `SeedGenerator`, which `sample`
        sets from its seed), traced once for every seed and setting. A `top_k` of the
        vocabulary size and a `top_p` of 1 cut nothing."""
        generator = self._generator()

        def body(sentences, temperature, top_k, top_p):
            return self.translator.graph_sample(sentences, generator, temperature, top_k, top_p)

        return self.translator.traced_function(("sample",), body, SAMPLING_SIGNATURE)
