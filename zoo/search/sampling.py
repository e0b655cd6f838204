"""Sampling translations from the decoder: temperature, top-k and top-p (nucleus).

`sample(model, source_ids, ...)` draws one translation per source sentence, token by token,
from the decoder's step function (the one greedy and beam search use), with keras-hub's
three ways of shaping the distribution:
- `temperature` T > 0: the logits are divided by T (below 1 sharper, above 1 flatter;
  below `ARGMAX_TEMPERATURE`, about 1.2e-38, the most likely token, T's limit at 0);
- `top_k` k: only the k most likely tokens may be drawn (Fan et al. 2018);
- `top_p` p in (0, 1]: only the smallest set of most likely tokens whose probabilities
  sum to at least p (Holtzman et al. 2020, "nucleus"); it always holds the most likely.
PAD and START are never drawn; a sentence draws at most as many tokens as search allows it
(`max_length_ratio`, `max_length_offset`), the last being END. `seed` makes the draws
reproducible (a `keras.random.SeedGenerator` per call, whose state the loop carries, so
that every step draws with a new key on every backend).

Sampled translations of a monolingual target-side corpus are the usual source of synthetic
pairs for back-translation (Edunov et al. 2018 found sampling and top-k better than beam
search there): translate target-language text into the source language with a model of the
reverse direction, and add the (sampled source, real target) pairs to the training data.

`zoo.search.decoding` wraps search and sampling in keras-hub's sampler names.

Example:
    >>> result = sample(model, source_ids, top_k=10, seed=1)             # doctest: +SKIP
"""

import math

import keras
import numpy as np
from keras import ops

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.search import defaults
from zoo.search.compile import empty_result, no_grad
from zoo.search.greedy import GreedySearch
from zoo.search.settings import SearchResult, SearchSettings, check_model, check_source

_NEG_INF = float("-inf")
ARGMAX_TEMPERATURE = float(np.finfo(np.float32).tiny)
"""float32's smallest normal number (about 1.2e-38): a lower temperature draws the arg-max."""


def check_sampling(temperature=defaults.TEMPERATURE, top_k=None, top_p=None):
    """Raises a ValueError naming the first of `temperature` (a float > 0), `top_k` (None or
    an int >= 1) and `top_p` (None or a float in (0, 1]) that is out of range."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.number)):
        raise ValueError(f"temperature must be a float > 0, got {temperature!r}.")
    if not math.isfinite(float(temperature)) or temperature <= 0:
        raise ValueError(f"temperature must be a finite float > 0, got {temperature}.")
    if top_k is not None and (
        isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1
    ):
        raise ValueError(f"top_k must be None or an int >= 1, got {top_k!r}.")
    if top_p is not None and (
        isinstance(top_p, bool)
        or not isinstance(top_p, (int, float, np.number))
        or not 0.0 < float(top_p) <= 1.0
    ):
        raise ValueError(f"top_p must be None or a float in (0, 1], got {top_p!r}.")


def _seed_generator(seed):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ValueError(
            f"seed must be None, an int or a keras.random.SeedGenerator, got {seed!r}."
        )
    return keras.random.SeedGenerator(None if seed is None else int(seed))


def _is_tensor(value):
    return value is not None and not isinstance(value, (bool, int, float, np.number))


def shaped_logits(logits, temperature=defaults.TEMPERATURE, top_k=None, top_p=None):
    """The logits `sample` draws from: PAD/START banned, divided by `temperature`, and the
    tokens outside `top_k` / the `top_p` nucleus set to -inf. (R, V) float32 -> (R, V).

    `temperature`, `top_k` and `top_p` are Python numbers (None: no cut) or scalar tensors
    (one traced function for every value: a `top_k` of V or more and a `top_p` of 1 cut
    nothing). The logits are shifted by each row's maximum before the division (the
    distribution is the same), so no temperature overflows them. A temperature below
    `ARGMAX_TEMPERATURE`, which float32 cannot divide by, keeps the most likely tokens alone:
    the distribution's limit as the temperature goes to 0 (tied maxima equally likely). The
    nucleus always holds the most likely token, however small `top_p` is."""
    vocab = logits.shape[-1]
    logits = ops.cast(logits, "float32")
    banned = np.isin(np.arange(vocab), (PAD_ID, START_ID))[None, :]
    top = ops.max(ops.where(banned, _NEG_INF, logits), axis=-1, keepdims=True)
    largest = np.finfo(np.float32).max
    if _is_tensor(temperature):
        temperature = ops.cast(temperature, "float32")
    else:  # float32 of a Python float: 0 below its range, its largest value above
        temperature = np.float32(min(float(temperature), float(largest)))
    divisor = ops.clip(temperature, ARGMAX_TEMPERATURE, largest)
    below_top = ops.logical_and(ops.less(temperature, ARGMAX_TEMPERATURE), logits < top)
    logits = ops.where(ops.logical_or(banned, below_top), _NEG_INF, (logits - top) / divisor)
    if top_k is not None:
        logits = _cut(logits, top_k, vocab, _top_k_cut, lambda k: k < vocab)
    if top_p is not None:
        logits = _cut(logits, top_p, vocab, _nucleus_cut, lambda p: p < 1.0)
    return logits


def _cut(logits, value, vocab, cut, active):
    """`cut(logits, value)` when `active(value)`: decided in Python for a number, in the
    graph (`ops.cond`) for a tensor."""
    if not _is_tensor(value):
        return cut(logits, value, vocab) if active(value) else logits
    return ops.cond(active(value), lambda: cut(logits, value, vocab), lambda: logits)


def _top_k_cut(logits, k, vocab):
    k = ops.minimum(ops.cast(k, "int32"), vocab) if _is_tensor(k) else int(k)
    kth = ops.top_k(logits, k)[0][:, -1:]  # (R, 1)
    return ops.where(logits < kth, _NEG_INF, logits)


def _nucleus_cut(logits, top_p, vocab):
    ranked = ops.flip(ops.sort(logits, axis=-1), axis=-1)  # descending
    probs = ops.softmax(ranked, axis=-1)
    before = ops.cumsum(probs, axis=-1) - probs  # mass of the tokens ranked above
    first = (np.arange(vocab) == 0)[None, :]  # the most likely token: always in the nucleus
    inside = ops.logical_or(before < ops.cast(top_p, "float32"), first)
    kept = ops.where(inside, ranked, np.float32(np.inf))
    threshold = ops.min(kept, axis=-1, keepdims=True)  # the nucleus' lowest logit
    return ops.where(logits < threshold, _NEG_INF, logits)


def sample(
    model,
    source_ids,
    temperature=defaults.TEMPERATURE,
    top_k=None,
    top_p=None,
    seed=None,
    max_length_ratio=defaults.MAX_LENGTH_RATIO,
    max_length_offset=defaults.MAX_LENGTH_OFFSET,
):
    """Draws one translation per source sentence (see the module docstring).

    Args:
        model: a zoo translation model (layers "encoder" and "decoder", docs/design.md).
        source_ids: (B, Ts) int source ids, right-padded with PAD_ID.
        temperature, top_k, top_p: how the distribution is shaped (module docstring):
            Python numbers, checked by `check_sampling`, or scalar tensors, so that one
            traced function serves every value (`shaped_logits`).
        seed: an int for reproducible draws, None for a fresh seed, or a
            `keras.random.SeedGenerator` to draw from (its state advances; the Translator
            and the SavedModel pass one, so that a traced function can be reseeded).
        max_length_ratio, max_length_offset: as for `zoo.search.search`.
    Returns:
        a `SearchResult`: ids (B, T), `scores` = `log_probs` (B,), the sum of the model's
        own token log-probabilities (temperature 1, nothing cut off), lengths (B,);
        attention None.
    """
    if not any(_is_tensor(value) for value in (temperature, top_k, top_p)):
        check_sampling(temperature, top_k, top_p)
    generator = seed if isinstance(seed, keras.random.SeedGenerator) else _seed_generator(seed)
    settings = SearchSettings(
        beam_size=1,
        max_length_ratio=max_length_ratio,
        max_length_offset=max_length_offset,
        return_attention=False,
    )
    check_model(model)
    source_ids = check_source(source_ids)
    if source_ids.shape[0] == 0:  # known to be empty (eagerly)
        return empty_result(source_ids, return_attention=False)
    with no_grad():
        return _sample(model, source_ids, settings, generator, temperature, top_k, top_p)


def _sample(model, source_ids, settings, generator, temperature, top_k, top_p):
    """`sample`'s loop, on checked arguments."""
    # Greedy search's set-up (one row per sentence): the encoded source, the decoder's
    # cache, initial state and loop parameters, each sentence's length limit.
    setup = GreedySearch(model, source_ids, settings, stop_early=False, skip_ended=False)
    decoder, cache, limits = setup.decoder, setup.cache, setup.row_max_lengths
    step_options = {} if setup.params is None else {"params": setup.params}

    def draw(logits, seed_state):
        # The generator's state is a loop variable: its value is mapped in a
        # `StatelessScope` for the draw, and the advanced state carried to the next step (an
        # assignment inside a traced loop body would not advance it on JAX, keras-hub's
        # samplers do the same). The draws are those of a generator advanced in place.
        with keras.StatelessScope(state_mapping=[(generator.state, seed_state)]) as scope:
            drawn = keras.random.categorical(logits, 1, seed=generator)[:, 0]
        return drawn, scope.get_current_value(generator.state)

    def body(t, prev, state, finished, log_probs, out_lengths, tokens, seed_state):
        logits, state, _ = decoder.step(prev, state, cache, training=False, **step_options)
        logits = ops.cast(logits, "float32")
        drawn, seed_state = draw(shaped_logits(logits, temperature, top_k, top_p), seed_state)
        drawn = ops.where(ops.greater_equal(t + 1, limits), END_ID, ops.cast(drawn, "int32"))
        drawn = ops.cast(ops.where(finished, PAD_ID, drawn), "int32")
        token_log_prob = ops.take_along_axis(
            ops.log_softmax(logits, axis=-1), drawn[:, None], axis=1
        )[:, 0]
        log_probs = log_probs + ops.where(finished, 0.0, token_log_prob)
        out_lengths = ops.where(finished, out_lengths, t + 1)
        tokens = ops.slice_update(tokens, [0, t], drawn[:, None])
        finished = ops.logical_or(finished, ops.equal(drawn, END_ID))
        return t + 1, drawn, state, finished, log_probs, out_lengths, tokens, seed_state

    def condition(t, prev, state, finished, *rest):
        return ops.logical_and(ops.less(t, setup.step_limit), ops.logical_not(ops.all(finished)))

    batch = setup.batch
    loop = (
        ops.convert_to_tensor(0, "int32"),
        ops.full((batch,), START_ID, dtype="int32"),
        setup.initial,
        ops.zeros((batch,), dtype="bool"),
        ops.zeros((batch,), dtype="float32"),
        ops.zeros((batch,), dtype="int32"),
        ops.full((batch, setup.buffer_len), PAD_ID, dtype="int32"),
        ops.convert_to_tensor(generator.state.value),
    )
    *_, log_probs, out_lengths, tokens, seed_state = ops.while_loop(condition, body, loop)
    generator.state.assign(seed_state)
    steps = ops.max(out_lengths)
    return SearchResult(
        ids=tokens[:, :steps],
        scores=log_probs,
        attention=None,
        lengths=out_lengths,
        log_probs=log_probs,
    )
