"""The `Translator` on JAX and PyTorch: the text stays TensorFlow, the model runs on the
Keras backend.

On TensorFlow a translator runs one graph from strings to strings (`zoo.translator.graph`),
which is also what it exports. On another backend it runs that graph's parts in three
stages per batch, the ids moving between them as NumPy arrays, as keras-hub runs its
TensorFlow preprocessing beside a JAX or PyTorch model:

1. the text in: a `tf.function` on the CPU (`graph.encode_inputs`, `graph.score_inputs`):
   the tokenizers and the source ids, lengths and prefix ids;
2. the model: `zoo.search.search` or `zoo.search.sample` (compiled on the backend by
   `zoo.search`), or the teacher-forced model for `score`, on the backend;
3. the text out: a `tf.function` on the CPU (`graph.translation_outputs`,
   `graph.n_best_outputs`, `graph.texts`, `graph.score_totals`): the translations, tokens,
   alignments and scores, as the graph computes them.

Each stage is traced once per translator (its text-in and text-out functions are shared
by its searches). SavedModel and LiteRT export stay TensorFlow: `output_folder.EXPORT_COMMAND` exports a
folder saved on any backend, and `export_with_tensorflow` runs it from another backend's
process (what a training run on JAX or PyTorch can call to write its serving/).
"""

import keras
import numpy as np
import tensorflow as tf

from zoo.constants import SERVING_DIR
from zoo.search import SearchResult, sample, search
from zoo.search.compile import no_grad
from zoo.translator import graph

STRINGS = tf.TensorSpec([None], tf.string)
IDS = tf.TensorSpec([None, None], tf.int32)
VECTOR = tf.TensorSpec([None], tf.int32)
FLOATS = tf.TensorSpec([None], tf.float32)


def export_with_tensorflow(directory, path=None, timeout=3600, **options):
    """`output_folder.EXPORT_COMMAND` run from any backend: a TensorFlow process loads the output folder
    `directory` (saved with `serving=False`) and writes its SavedModel to `path` (default
    `<directory>/serving`) with `Translator.export`'s `options` (JSON values, e.g.
    `n_best=5, sampling={}`). Returns `path`; a RuntimeError holds the process's error."""
    import json
    import os
    import subprocess
    import sys

    path = os.fspath(path or os.path.join(os.fspath(directory), SERVING_DIR))
    code = (
        "import json, sys\n"
        "from zoo.translator import Translator\n"
        "directory, path, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])\n"
        "Translator.from_directory(directory).export(path, **options)\n"
    )
    command = [sys.executable, "-c", code, os.fspath(directory), path, json.dumps(options)]
    env = dict(os.environ, KERAS_BACKEND="tensorflow")
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise RuntimeError(
            f"Exporting {directory} with TensorFlow failed (exit status {run.returncode}):\n"
            f"{run.stderr[-4000:]}"
        )
    return path


def _stage(translator, key, body, signature):
    """The `tf.function` of `body` with input `signature`, made once per translator and
    `key` (every function of a translator shares its stages), called on the CPU."""
    stages = translator.__dict__.setdefault("_staged_functions", {})
    if key not in stages:
        stages[key] = _cpu_function(body, signature)
    return stages[key]


def forget(translator):
    """Drops `translator`'s stages (they are traced again when next used), as
    `translator.traced.clear()` drops its graphs."""
    translator.__dict__.pop("_staged_functions", None)


def _cpu_function(body, signature):
    function = tf.function(body, input_signature=list(signature), autograph=False)

    def call(*inputs):
        with tf.device("cpu"):
            return function(*inputs)

    return call


def _numpy(value, dtype):
    return None if value is None else np.asarray(keras.ops.convert_to_numpy(value), dtype)


def _result(result):
    """A backend's `SearchResult` as NumPy arrays (float32 scores and weights, int32 ids)."""
    return SearchResult(
        ids=_numpy(result.ids, np.int32),
        scores=_numpy(result.scores, np.float32),
        attention=_numpy(result.attention, np.float32),
        lengths=_numpy(result.lengths, np.int32),
        log_probs=_numpy(result.log_probs, np.float32),
    )


def _encoder(translator, extras):
    """The text-in stage: (strings[, prefix]) -> (source_ids, source_lengths[, prefix ids])."""
    if "prefix" in extras:
        return _stage(
            translator, "encode_prefix",
            lambda sentences, prefix: graph.encode_inputs(translator, sentences, prefix),
            (STRINGS, STRINGS),
        )  # fmt: skip
    return _stage(
        translator, "encode", lambda sentences: graph.encode_inputs(translator, sentences)[:2],
        (STRINGS,),
    )  # fmt: skip


def _search(translator, strings, tensors, extras, encode, **settings):
    """(search result as NumPy, source_ids, source_lengths) of one batch."""
    inputs = dict(zip(extras, tensors, strict=True))
    encoded = encode(strings, inputs["prefix"]) if "prefix" in inputs else encode(strings)
    source_ids, source_lengths = encoded[0].numpy(), encoded[1].numpy()
    prefix = encoded[2].numpy() if "prefix" in inputs else None
    constraints = inputs.get("constraints")
    result = search(
        translator.model,
        source_ids,
        translator.settings,
        prefix=prefix,
        constraints=None if constraints is None else np.asarray(constraints),
        **settings,
    )
    return _result(result), source_ids, source_lengths


def translate_call(translator, beam_size, attention, controls, extras):
    """`(strings, *extra tensors) -> dict` of `graph.translate`'s outputs, staged."""
    encode = _encoder(translator, extras)
    fields = (IDS, FLOATS, VECTOR) + ((tf.TensorSpec([None, None, None], tf.float32),)
                                      if attention else ())  # fmt: skip

    def outputs_body(sentences, source_ids, source_lengths, ids, scores, lengths, *weights):
        result = SearchResult(ids, scores, weights[0] if weights else None, lengths, None)
        return graph.translation_outputs(translator, sentences, result, source_ids,
                                         source_lengths)  # fmt: skip

    outputs = _stage(translator, ("outputs", attention), outputs_body,
                     (STRINGS, IDS, VECTOR, *fields))  # fmt: skip

    def call(strings, *tensors):
        result, source_ids, source_lengths = _search(
            translator, strings, tensors, extras, encode, beam_size=beam_size,
            return_attention=attention, **controls,
        )  # fmt: skip
        weights = (result.attention,) if attention else ()
        return outputs(strings, source_ids, source_lengths, result.ids, result.scores,
                       result.lengths, *weights)  # fmt: skip

    return call


def n_best_call(translator, beam_size, n_best, controls, extras):
    """`(strings, *extra tensors) -> dict` of `graph.translate_n_best`'s outputs, staged."""
    encode = _encoder(translator, extras)
    cube = tf.TensorSpec([None, None, None], tf.int32)
    matrix = tf.TensorSpec([None, None], tf.float32)

    def outputs_body(source_lengths, ids, scores, lengths):
        result = SearchResult(ids, scores, None, lengths, None)
        return graph.n_best_outputs(translator, result, source_lengths)

    outputs = _stage(translator, "n_best_outputs", outputs_body, (VECTOR, cube, matrix, IDS))

    def call(strings, *tensors):
        result, _, source_lengths = _search(
            translator, strings, tensors, extras, encode, beam_size=beam_size,
            return_attention=False, n_best=n_best, **controls,
        )  # fmt: skip
        return outputs(source_lengths, result.ids, result.scores, result.lengths)

    return call


def texts_function(translator):
    """The text-out stage of a sampled batch: (source_lengths, ids, scores, lengths) ->
    `graph.texts`' dict."""

    def body(source_lengths, ids, scores, lengths):
        result = SearchResult(ids, scores, None, lengths, None)
        return graph.texts(translator, result, source_lengths)

    return _stage(translator, "texts", body, (VECTOR, IDS, FLOATS, VECTOR))


def sample_call(translator, seed, temperature, top_k, top_p):
    """`strings -> dict` of `graph.draw`'s outputs, staged: the batches of one call draw
    from seeds made from `seed` (an int) and the batch's number, so the same sentences,
    seed and batch size give the same translations."""
    encode, texts = _encoder(translator, ()), texts_function(translator)
    batches = iter(range(2**31))

    def call(strings):
        source_ids, source_lengths = (x.numpy() for x in encode(strings))
        batch_seed = int(np.random.SeedSequence([seed, next(batches)]).generate_state(1)[0])
        result = _result(sample(
            translator.model, source_ids, temperature=temperature, top_k=top_k, top_p=top_p,
            seed=batch_seed % 2**31, max_length_ratio=translator.max_length_ratio,
            max_length_offset=translator.max_length_offset,
        ))  # fmt: skip
        return texts(source_lengths, result.ids, result.scores, result.lengths)

    return call


def score_call(translator):
    """`(sources, targets) -> dict` of `graph.score`'s outputs, staged: the teacher-forced
    model on the backend, its log-probabilities gathered there."""
    from keras import ops

    encode = _stage(
        translator,
        "score_inputs",
        lambda s, t: graph.score_inputs(translator, s, t),
        (STRINGS, STRINGS),
    )
    totals = _stage(translator, "score_totals", graph.score_totals,
                    (tf.TensorSpec([None, None], tf.float32), VECTOR, VECTOR))  # fmt: skip

    def call(sources, targets):
        pairs = {name: value.numpy() for name, value in encode(sources, targets).items()}
        batch = {"source_ids": pairs["source_ids"], "target_ids": pairs["target_in"]}
        with no_grad():
            logits = translator.model(batch, training=False)
        log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
        chosen = ops.take_along_axis(log_probs, ops.expand_dims(pairs["target_out"], -1), -1)
        token_log_probs = _numpy(ops.squeeze(chosen, -1), np.float32)
        return totals(token_log_probs, pairs["lengths"], pairs["source_lengths"])

    return call
