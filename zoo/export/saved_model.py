"""The SavedModel export of a `Translator`, its endpoints run over chunks of their batch.

`in_chunks`: a SavedModel endpoint run over chunks of its batch inside the graph, so that
a call of thousands of sentences searches a few dozen at a time (bounded memory, little
padding) and still returns one output per sentence, in input order.

`export_translator`: a `zoo.translator.Translator` as a self-contained SavedModel.

The SavedModel holds the model's variables and both tokenizers (SentencePiece model or
vocabulary lookup tables) and needs only TensorFlow and tensorflow-text to run:

    import tensorflow as tf, tensorflow_text  # noqa: F401  (registers the tf-text ops)
    serving = tf.saved_model.load("saved_models/luong_local_general/serving")
    out = serving.translate(tf.constant(["Ein Hund rennt."]))
    out["translation"]  # tf.string (B,)

Endpoints (each a concrete function and a signature of the same name), all taking one
`tf.string` vector `sentences` of shape (B,):
- `translate` (also the `serving_default` signature): search with the beam size chosen at
  export time (`beam_size`, default the translator's), its length penalty and length limits.
- `translate_greedy` (when `greedy=True` and the export beam size is above 1): beam size 1.
- `translate_n_best` (when `n_best=n` is given): the n best translations of that beam,
  `translations` (B, n) tf.string and `scores` (B, n) float32, best first.
- `sample` (when `sampling={...}` is given, e.g. `{"top_k": 10}` or `{}`): one translation
  drawn per sentence (`Translator.graph_sample`), with the temperature, top_k and top_p
  fixed at export. It takes `sentences` and `seed` (an int64 scalar): the same seed and
  batch give the same draws. Outputs: translation, score (the model's log-probability of
  the draw), target_ids, target_lengths.
Each returns a dict (see `OUTPUT_KEYS`):
    translation (B,) tf.string, score (B,) float32, attention (B, T, Ts) float32,
    source_tokens (B, Ts) tf.string, target_tokens (B, T) tf.string ("" as padding),
    source_ids (B, Ts) int32, source_lengths (B,) int32,
    target_ids (B, T) int32, target_lengths (B,) int32 (END included),
    alignment (B,) tf.string: the hard word alignment, Pharaoh format ("0-0 1-2"),
    translation_unk_replaced (B,) tf.string: each <unk> replaced by its most attended
        source word (Luong et al. 2015 section 4.1; `zoo.unknown_words`).
Input bytes that are not valid UTF-8 are read as U+FFFD replacement characters (one per
invalid sequence), so every input still gives one output, in order. The "location" score
attends to the first `max_length` source positions only (see `zoo.translator`).
Every endpoint takes any number of sentences: a batch of none gives outputs of no rows,
and a batch larger than `chunk_size` (default: the translator's batch size) is searched in
chunks of sentences of similar lengths inside the graph (`zoo.export.saved_model.in_chunks`),
so that the search's memory stays that of one chunk (the outputs, the attention above all,
still grow with the batch); the outputs are those of one call per chunk, in input order.
With `attention=False` the endpoints leave out the three outputs read from the attention
(`ATTENTION_KEYS`), and the search skips collecting the weights (about 10% faster beam
search, and a lighter response for a server).
The search settings are written beside it in `zoo_export.json` (a plain file that the
SavedModel loader ignores).
"""

import json
import os

import tensorflow as tf

from zoo.json_files import write_json

SENTENCES = tf.TensorSpec([None], tf.string, name="sentences")


def _padding_value(dtype):
    return tf.constant("", tf.string) if dtype == tf.string else tf.zeros([], dtype)


def in_chunks(function, sentences, lengths, chunk_size):
    """`function(sentences)` run on chunks of at most `chunk_size` sentences, in the graph.

    Args:
        function: `tf.string (b,) -> dict of (b, ...) tensors`; each row depends on its own
            sentence only (as the translator's graph functions do).
        sentences: `tf.string` (B,).
        lengths: (B,) int: the sentences' lengths (source tokens); the chunks are cut from
            the sentences sorted longest first, so that a chunk pads little.
        chunk_size: a Python int >= 1.
    Returns:
        the dict `function(sentences)` would return: every output's rows in input order,
        its other axes padded ("" or 0) to the longest chunk's, as one call pads them to
        the longest sentence's. A batch of at most `chunk_size` sentences is one chunk;
        a larger one of B into n = ceil(B / chunk_size) chunks of ceil(B / n) sentences
        (the last one smaller). The outputs take the memory one call would (the attention,
        (B, T, Ts), grows with B times the longest output and source): the search takes a
        chunk's.
    """
    # Traced once: its outputs' keys, dtypes and ranks make the loop's arrays, and the loop
    # calls the traced function.
    traced = tf.function(function, autograph=False).get_concrete_function(SENTENCES)
    spec = traced.structured_outputs
    count = tf.size(sentences)
    order = tf.argsort(lengths, direction="DESCENDING", stable=True)
    ordered = tf.gather(sentences, order)
    chunks = tf.maximum((count + chunk_size - 1) // chunk_size, 1)  # an empty batch: 1
    size = (count + chunks - 1) // chunks
    arrays = {key: tf.TensorArray(value.dtype, size=chunks, infer_shape=False)
              for key, value in spec.items()}  # fmt: skip
    widths = {key: tf.zeros([value.shape.rank - 1], tf.int32) for key, value in spec.items()}

    def run_chunk(index, arrays, widths):
        start = index * size
        outputs = traced(ordered[start : tf.minimum(start + size, count)])
        arrays = {key: arrays[key].write(index, outputs[key]) for key in arrays}
        widths = {key: tf.maximum(widths[key], tf.shape(outputs[key])[1:]) for key in widths}
        return index + 1, arrays, widths

    _, arrays, widths = tf.while_loop(
        lambda index, *_: index < chunks, run_chunk, (tf.constant(0), arrays, widths)
    )

    def pad_chunk(index, padded):
        written = {}
        for key, array in padded.items():
            value = arrays[key].read(index)
            missing = widths[key] - tf.shape(value)[1:]
            paddings = tf.stack([tf.zeros_like(missing), missing], axis=1)
            paddings = tf.concat([tf.zeros([1, 2], tf.int32), paddings], axis=0)
            value = tf.pad(value, paddings, constant_values=_padding_value(value.dtype))
            written[key] = array.write(index, value)
        return index + 1, written

    padded = {key: tf.TensorArray(value.dtype, size=chunks, infer_shape=False)
              for key, value in spec.items()}  # fmt: skip
    _, padded = tf.while_loop(lambda index, *_: index < chunks, pad_chunk, (tf.constant(0), padded))
    back = tf.math.invert_permutation(order)
    results = {}
    for key, value in spec.items():
        joined = padded[key].concat()
        joined = tf.reshape(joined, tf.concat([[count], widths[key]], axis=0))
        results[key] = tf.ensure_shape(tf.gather(joined, back), value.shape)
    return results


OUTPUT_KEYS = (
    "translation",
    "score",
    "attention",
    "source_ids",
    "source_lengths",
    "target_ids",
    "target_lengths",
    "source_tokens",
    "target_tokens",
    "alignment",
    "translation_unk_replaced",
)
ATTENTION_KEYS = ("attention", "alignment", "translation_unk_replaced")  # attention=True only
METADATA_FILE = "zoo_export.json"
INPUT_SIGNATURE = [tf.TensorSpec([None], tf.string, name="sentences")]


def export_translator(
    translator,
    path,
    beam_size=None,
    greedy=True,
    attention=True,
    n_best=None,
    sampling=None,
    verbose=False,
    chunk_size=None,
):
    """Writes `translator` as a SavedModel to `path` (endpoints in the module docstring).

    Args:
        translator: a `zoo.translator.Translator`.
        path: the SavedModel folder to write (e.g. `<out>/serving`).
        beam_size: the beam size of the `translate` endpoint (default: the translator's).
        greedy: also add `translate_greedy` (beam size 1) when `beam_size > 1`.
        attention: include the `attention` output (the weights of the chosen hypotheses).
        n_best: also add `translate_n_best` (the n best translations of the `translate`
            beam and their scores, `Translator.graph_translate_n_best`), 1 <= n <= beam.
        sampling: also add `sample`: a dict of `zoo.search.sample`'s temperature, top_k
            and top_p (any of them; `{}` samples from the whole distribution).
        verbose: let Keras print the endpoints' signatures.
        chunk_size: the most sentences an endpoint searches at once (default: the
            translator's `batch_size`): a larger call is cut, inside the graph, into chunks
            of sentences of similar lengths (`zoo.export.saved_model.in_chunks`).

    Returns:
        `path`.
    """
    import keras

    beam_size = translator.setting("beam_size", beam_size)
    chunk_size = translator.setting("batch_size", chunk_size)
    path = os.fspath(path)
    archive = keras.export.ExportArchive()
    archive.track(translator.model)
    archive.track(translator.source_tokenizer)
    archive.track(translator.target_tokenizer)
    endpoints = {"translate": beam_size}
    if greedy and beam_size > 1:
        endpoints["translate_greedy"] = 1

    def chunked(body):
        """`body(sentences)` over chunks of `chunk_size` sentences of similar lengths."""

        def endpoint(sentences):
            _, lengths = translator.preprocessor.encode_source(sentences)
            return in_chunks(body, sentences, lengths, chunk_size)

        return endpoint

    for name, k in endpoints.items():
        archive.add_endpoint(
            name,
            chunked(lambda sentences, k=k: translator.graph_translate(sentences, k, attention)),
            input_signature=INPUT_SIGNATURE,
        )
    if n_best is not None:
        if isinstance(n_best, bool) or not isinstance(n_best, int) or not 1 <= n_best <= beam_size:
            raise ValueError(
                f"n_best must be an int in [1, beam_size={beam_size}], got {n_best!r}."
            )
        archive.add_endpoint(
            "translate_n_best",
            chunked(
                lambda sentences: translator.graph_translate_n_best(sentences, beam_size, n_best)
            ),
            input_signature=INPUT_SIGNATURE,
        )
        endpoints["translate_n_best"] = beam_size
    if sampling is not None:
        _add_sample_endpoint(archive, translator, sampling, chunked)
        endpoints["sample"] = 1
    archive.write_out(path, verbose=verbose)
    metadata = dict(
        translator.get_config(),
        beam_size=beam_size,
        endpoints=endpoints,
        n_best=n_best,
        sampling=None if sampling is None else dict(sampling),
        chunk_size=chunk_size,
    )
    metadata["outputs"] = [key for key in OUTPUT_KEYS if attention or key not in ATTENTION_KEYS]
    write_json(os.path.join(path, METADATA_FILE), metadata)
    return path


SAMPLING_KEYS = ("temperature", "top_k", "top_p")


def _add_sample_endpoint(archive, translator, sampling, chunked):
    """The `sample(sentences, seed)` endpoint: the seed resets a tracked SeedGenerator's
    state before the draws, so a call is reproducible."""
    import keras

    from zoo.search import check_sampling

    if not isinstance(sampling, dict) or set(sampling) - set(SAMPLING_KEYS):
        raise ValueError(
            f"sampling must be a dict with keys among {SAMPLING_KEYS}, got {sampling!r}."
        )
    check_sampling(**sampling)
    generator = keras.random.SeedGenerator(0, name="sample_seed")
    archive.add_variable_collection("sample_seed", [generator.state])

    def endpoint(sentences, seed):
        dtype = generator.state.dtype
        generator.state.assign(tf.stack([tf.cast(seed, dtype), tf.zeros([], dtype)]))
        draw = lambda strings: translator.graph_sample(strings, generator, **sampling)  # noqa: E731
        return chunked(draw)(sentences)

    archive.add_endpoint(
        "sample",
        endpoint,
        input_signature=[*INPUT_SIGNATURE, tf.TensorSpec([], tf.int64, name="seed")],
    )


def read_export_metadata(path):
    """The SavedModel folder `path`'s METADATA_FILE (what it was exported with: beam size,
    n-best, ...) as a dict; {} where the folder has none."""
    metadata_path = os.path.join(os.fspath(path), METADATA_FILE)
    if not os.path.isfile(metadata_path):
        return {}
    with open(metadata_path, encoding="utf-8") as f:
        return json.load(f)


def load_exported(path):
    """`tf.saved_model.load(path)` after importing tensorflow_text (which registers the ops
    the tokenizers need). Returns the loaded object; call `.translate(tf.constant([...]))`."""
    import tensorflow_text  # noqa: F401

    return tf.saved_model.load(os.fspath(path))
