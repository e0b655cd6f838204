"""`Ensemble`: several translation models with one target vocabulary, decoding together.

At every step the ensemble's next-token distribution is the mean of its members'
distributions, `p(y_t | ...) = (1/n) sum_i p_i(y_t | ...)` (the usual NMT ensemble; Luong et
al. 2015 ensemble 8 models, section 4.2); the step returns `log` of it as logits, so greedy
and beam search, n-best lists, the Translator and the SavedModel export work on an ensemble
as on one model. Each member keeps its own encoder, attention and state; the members may
differ in architecture (e.g. Bahdanau and Luong models) and source vocabulary (they read the
same source ids, so in practice they share the source tokenizer too).

It follows the contract of docs/design.md: layers "encoder" (the members' memories
concatenated on the feature axis, the first member's mask, all encoder states) and
"decoder" (prepare / initial_state / step over the members), built by `Ensemble` itself. The attention
weights it returns are the members' mean.

Example:
    ensemble = Ensemble([keras.models.load_model(p) for p in paths])
    zoo.search.beam_search(ensemble, source_ids, beam_size=5)
    Translator(ensemble, source_tokenizer, target_tokenizer).export("serving_ensemble")
"""

import math

import keras
import numpy as np
from keras import ops


def _mean_log_probs(logits_list):
    """log((1/n) sum_i softmax(logits_i)), float32, over the last axis."""
    log_probs = ops.stack([ops.log_softmax(ops.cast(x, "float32"), axis=-1) for x in logits_list])
    return ops.logsumexp(log_probs, axis=0) - math.log(len(logits_list))


class _EnsembleEncoder(keras.layers.Layer):
    """The members' encoders on the same source: memories concatenated (feature axis), the
    first member's source mask, and every member's encoder states in one list."""

    def __init__(self, encoders, **kwargs):
        super().__init__(**kwargs)
        self.encoders = list(encoders)

    def call(self, source_ids, training=None):
        outputs = [encoder(source_ids, training=training) for encoder in self.encoders]
        memory = ops.concatenate([ops.cast(o[0], self.compute_dtype) for o in outputs], axis=-1)
        states = [state for o in outputs for state in o[2]]
        return memory, outputs[0][1], states


class _EnsembleDecoder(keras.layers.Layer):
    """The members' decoder steps, their distributions averaged.

    Args:
        decoders: the members' decoder layers.
        memory_dims: each member encoder's memory size (how `prepare` splits the memory).
        state_counts: how many encoder states each member encoder returns.
    """

    def __init__(self, decoders, memory_dims, state_counts, **kwargs):
        super().__init__(**kwargs)
        self.decoders = list(decoders)
        self.memory_dims = [int(d) for d in memory_dims]
        self.state_counts = [int(c) for c in state_counts]
        self.vocab_size = int(self.decoders[0].vocab_size)

    def prepare(self, memory, source_mask, encoder_states):
        bounds = np.cumsum([0] + self.memory_dims)
        starts = np.cumsum([0] + self.state_counts)
        members = []
        for i, decoder in enumerate(self.decoders):
            part = memory[..., int(bounds[i]) : int(bounds[i + 1])]
            states = list(encoder_states[int(starts[i]) : int(starts[i + 1])])
            members.append(decoder.prepare(part, source_mask, states))
        return {"members": members}

    def initial_state(self, cache):
        return tuple(
            tuple(decoder.initial_state(c))
            for decoder, c in zip(self.decoders, cache["members"], strict=True)
        )

    def step(self, prev_ids, state, cache, training=False):
        outputs = [
            decoder.step(prev_ids, s, c, training=training)
            for decoder, s, c in zip(self.decoders, state, cache["members"], strict=True)
        ]
        logits = _mean_log_probs([o[0] for o in outputs])
        weights = ops.mean(ops.stack([ops.cast(o[2], "float32") for o in outputs]), axis=0)
        return logits, tuple(tuple(o[1]) for o in outputs), weights


@keras.saving.register_keras_serializable(package="zoo")
class Ensemble(keras.Model):
    """An ensemble of zoo translation models (see the module docstring).

    Args:
        members: one or more models following docs/design.md, with equal target
            vocabulary sizes.

    `ensemble(inputs)` gives the log of the members' mean distribution per target position
    (B, Tt, V), usable as logits. `ensemble.save("ensemble.keras")` stores the members;
    `keras.models.load_model` rebuilds it.
    """

    def __init__(self, members, **kwargs):
        super().__init__(**kwargs)
        members = list(members)
        if not members:
            raise ValueError("Ensemble needs at least one member model, received none.")
        decoders = [m.get_layer("decoder") for m in members]
        sizes = sorted({int(d.vocab_size) for d in decoders})
        if len(sizes) != 1:
            raise ValueError(
                f"Ensemble members must share one target vocabulary; their sizes are {sizes}."
            )
        encoders = [m.get_layer("encoder") for m in members]
        probe = np.full((1, 1), 4, "int32")  # any real id: shapes only
        dims, counts = [], []
        for encoder in encoders:
            memory, _, states = encoder(probe, training=False)
            dims.append(int(memory.shape[-1]))
            counts.append(len(states))
        self.members = members
        self.encoder = _EnsembleEncoder(encoders, name="encoder")
        self.decoder = _EnsembleDecoder(decoders, dims, counts, name="decoder")
        self.encoder.built = self.decoder.built = True  # their members are built
        self.built = True

    def call(self, inputs, training=None):
        return _mean_log_probs([m(inputs, training=training) for m in self.members])

    def get_config(self):
        return {
            "name": self.name,
            "members": [keras.saving.serialize_keras_object(m) for m in self.members],
        }

    @classmethod
    def from_config(cls, config):
        members = [keras.saving.deserialize_keras_object(m) for m in config["members"]]
        return cls(members, name=config.get("name"))
