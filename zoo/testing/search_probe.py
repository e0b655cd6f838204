"""Search on tiny presets with given weights, and the references search is checked against,
on whichever Keras backend runs them.

The tests of `tests/backends/` call these helpers on each backend; the cross-backend test
runs `search_outputs` in a child process per backend (`zoo.testing.backend_run`) and compares
its arrays with TensorFlow's:

    weights = {f"w{i}": w for i, w in enumerate(random_weights(build_probe(name), seed=1))}
    outputs = run_in_backend("jax", "zoo.testing.search_probe:search_outputs", weights,
                             presets=[name], runs=RUNS)

Random weights at a scale that makes the output distributions peaked keep the best
hypotheses apart by far more than float32 rounding, so that ids agree exactly across
backends and with the brute-force references (no ties).
"""

import itertools

import numpy as np
from keras import ops

from zoo.constants import END_ID, PAD_ID, START_ID

SOURCE_VOCAB = 12
TARGET_VOCAB = 6  # ids 3 (UNK), 4 and 5 are the words: few enough for brute force
SOURCES = np.array([[4, 5, 6, 7], [8, 9, 0, 0], [10, 11, 4, 0]], "int32")

# Searches `search_outputs` runs by default: greedy, beam, n-best, the penalties, the
# controls and a prefix (each a dict of `zoo.search.search` keywords).
RUNS = (
    {"beam_size": 1},
    {"beam_size": 3},
    {"beam_size": 3, "length_penalty": 0.0},
    {"beam_size": 4, "n_best": 3},
    {"beam_size": 3, "length_penalty": 0.6, "coverage_penalty": 0.4},
    {"beam_size": 3, "min_length": 3, "ban_unknown": True},
    {"beam_size": 1, "no_repeat_ngram_size": 2},
    {"beam_size": 3, "prefix": [[4], [], [5, 4]]},
)


def build_probe(name, weights=None, target_vocab=TARGET_VOCAB):
    """Preset `name` at size "tiny" (source vocabulary `SOURCE_VOCAB`), its weights set to
    `weights` (a list of arrays in `model.get_weights()` order) when given."""
    import zoo.models

    model = zoo.models.build(name, "tiny", SOURCE_VOCAB, target_vocab)
    if weights is not None:
        model.set_weights([np.asarray(w) for w in weights])
    return model


def random_weights(model, seed, scale=1.5):
    """Normal weights of `model`'s shapes, `scale / sqrt(fan-in)` (1 for vectors): peaked
    output distributions, the same on every backend for a seed."""
    rng = np.random.default_rng(seed)
    weights = []
    for weight in model.get_weights():
        fan_in = weight.shape[0] if weight.ndim > 1 else 1
        values = rng.normal(size=weight.shape) * scale / np.sqrt(fan_in)
        weights.append(values.astype(weight.dtype))
    return weights


def source_length(row):
    return int((np.asarray(row) != PAD_ID).sum())


def all_hypotheses(target_vocab, max_length):
    """Every output of at most `max_length` tokens: words (not PAD, START or END), then END."""
    words = [i for i in range(target_vocab) if i not in (PAD_ID, START_ID, END_ID)]
    for n in range(1, max_length + 1):
        for prefix in itertools.product(words, repeat=n - 1):
            yield [*prefix, END_ID]


def log_softmax(logits):
    logits = np.asarray(logits, "float64")
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def teacher_forced_log_probs(model, source_row, hypotheses):
    """(N,) float64: each hypothesis' summed log p(y_t | y_<t, x) under teacher forcing."""
    width = max(len(h) for h in hypotheses)
    target_in = np.zeros((len(hypotheses), width), "int32")
    target_out = np.zeros((len(hypotheses), width), "int32")
    for i, hypothesis in enumerate(hypotheses):
        target_in[i, : len(hypothesis)] = [START_ID, *hypothesis[:-1]]
        target_out[i, : len(hypothesis)] = hypothesis
    sources = np.repeat(np.asarray(source_row, "int32")[None], len(hypotheses), axis=0)
    logits = model({"source_ids": sources, "target_ids": target_in}, training=False)
    picked = np.take_along_axis(
        log_softmax(ops.convert_to_numpy(logits)), target_out[..., None], axis=-1
    )[..., 0]
    mask = np.arange(width)[None] < np.array([len(h) for h in hypotheses])[:, None]
    return (picked * mask).sum(axis=1)


def greedy_reference(model, source_row, max_length):
    """A plain arg-max loop over `decoder.step` for one sentence (NumPy bookkeeping): its
    tokens (ending with END) and their summed log-probability."""
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    source = np.asarray(source_row, "int32")[None]
    cache = decoder.prepare(*encoder(source, training=False))
    state = decoder.initial_state(cache)
    prev, out, total = START_ID, [], 0.0
    for t in range(max_length):
        logits, state, _ = decoder.step(np.array([prev], "int32"), state, cache, training=False)
        log_probs = log_softmax(ops.convert_to_numpy(logits)[0])
        allowed = log_probs.copy()
        allowed[[PAD_ID, START_ID]] = -np.inf
        if t == max_length - 1:
            allowed[:] = -np.inf
            allowed[END_ID] = 0.0
        prev = int(np.argmax(allowed))
        out.append(prev)
        total += log_probs[prev]
        if prev == END_ID:
            break
    return out, total


def as_numpy(result):
    """A `SearchResult`'s fields as a dict of NumPy arrays (without None)."""
    return {
        name: ops.convert_to_numpy(value)
        for name, value in result._asdict().items()
        if value is not None
    }


def search_outputs(inputs, presets, runs=RUNS, max_length_offset=4):
    """The child-side function of the cross-backend test: for each preset of `presets`,
    the tiny model with weights `inputs[f"{name}/{i}"]`, searched on `SOURCES` with every
    run of `runs` (dicts of `zoo.search.search` keywords). Returns
    `{f"{name}/{r}/{field}": array}` for run index r and each field of the result."""
    import zoo.search

    outputs = {}
    for name in presets:
        count = sum(1 for key in inputs if key.startswith(f"{name}/"))
        model = build_probe(name, [inputs[f"{name}/{i}"] for i in range(count)])
        for r, run in enumerate(runs):
            options = {"max_length_offset": max_length_offset, **run}
            result = zoo.search.search(model, SOURCES, **options)
            for field, value in as_numpy(result).items():
                outputs[f"{name}/{r}/{field}"] = value
    return outputs
