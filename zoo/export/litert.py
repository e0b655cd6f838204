"""`export_litert`: a translator's model and search as one LiteRT (TFLite) file.

The `.tflite` file holds the encoder, the decoder's step function and the whole search loop
(greedy, or beam search with the beam size chosen at export), converted to TFLite builtin
operators only: it runs in `ai_edge_litert`'s interpreter (or `tf.lite.Interpreter`) with
neither zoo nor TensorFlow installed. Its signature `serving_default` runs that search (a
beam file also has `greedy`, beam size 1, over the same weights, unless `greedy=False`):

    inputs   source_ids (batch_size, Ts) int32: the source tokens' ids, right-padded
             with PAD (0); Ts is dynamic (`Interpreter.resize_tensor_input`), at least 1.
    outputs  ids (batch_size, T) int32: the translation's ids, END (2) then PAD after it;
             lengths (batch_size,) int32: tokens up to and with END;
             scores (batch_size,) float32: the search's ranking score.

The batch size is fixed at export (`batch_size`, default 1): the encoder's recurrence keeps
its steps in TensorArrays, which TFLite's converter lowers only with a known element shape,
batch included. A runner pads a short batch with rows of PAD, which translate to END alone.
Several batch sizes (`batch_size=(1, 32)`) give each search one signature per batch size
over the same weights, `serving_default` and `greedy` at the first, `<name>_batch<b>` at
the others: a server then runs one sentence in the batch-1 signature and a full batch in
the large one. `<stem>.json`'s "signatures" maps each name to its beam and batch size.

The tokenizers stay outside the file (TFLite has no builtin operators for the Unicode
normalisation and SentencePiece): they are saved beside it, `<stem>.source_tokenizer/` and
`<stem>.target_tokenizer/` (zoo tokenizer folders, e.g. `sentencepiece.model` that the
`sentencepiece` package reads), with the export's settings in `<stem>.json`.

Weights (`quantize`): "none" keeps float32; "float16" stores them as float16 (about half the
size), dequantized to float32 by the interpreter; "int8" is dynamic-range
quantization (int8 weights, about a quarter of the size; activations quantized on the fly
where a kernel supports it). docs/serving.md, "LiteRT (TFLite)", shows a runner;
`zoo.export.litert_translator.LiteRTTranslator` is one.
"""

import os
import tempfile

from zoo.checks import check_int
from zoo.constants import SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR
from zoo.json_files import write_json
from zoo.search.compile import padded_search

QUANTIZATIONS = ("none", "float16", "int8")
SEARCHES = ("greedy", "beam")
OUTPUT_NAMES = ("ids", "lengths", "scores")
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)  # 1: "signatures" maps a name to its beam size; one batch size
DEFAULT_SIGNATURE = "serving_default"  # the search chosen at export
MAX_BATCH_SIZE = 1024
"""The largest batch a file is exported for: every buffer of its search (decoder states,
tokens, scores) has batch x beam rows fixed at export, and a call holds them all."""
GREEDY_SIGNATURE = "greedy"  # beam files: greedy search too (export_litert's `greedy`)


def sidecar(path, name):
    """The file or folder `name` written beside the `.tflite` file `path`:
    `<stem>.<name>` (e.g. `model.json`, `model.source_tokenizer`)."""
    root, _ = os.path.splitext(os.fspath(path))
    return f"{root}.{name}"


def check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; received {value!r}.")
    return value


def check_batch_sizes(batch_size):
    """`batch_size` (an int or a sequence of them) as a tuple of distinct ints in 1 ..
    `MAX_BATCH_SIZE`, in the order given."""
    given = tuple(batch_size) if isinstance(batch_size, list | tuple) else (batch_size,)
    if not given:
        raise ValueError("batch_size must name at least one batch size; received ().")
    sizes = tuple(dict.fromkeys(check_int(None, "batch_size", b) for b in given))
    for b in sizes:
        if b > MAX_BATCH_SIZE:
            raise ValueError(
                f"batch_size must be at most {MAX_BATCH_SIZE} (a file's buffers hold batch x "
                f"beam rows fixed at export); received {b}."
            )
    return sizes


def signature_table(beam_size, batch_sizes, greedy=True):
    """{signature name: (beam size, batch size)}: the search of `beam_size` (and greedy
    search, with `greedy` and a beam) at each of `batch_sizes`; the first batch size's
    signatures are `serving_default` and `greedy`, the others' `<name>_batch<b>`."""
    searches = {DEFAULT_SIGNATURE: beam_size}
    if greedy and beam_size > 1:
        searches[GREEDY_SIGNATURE] = 1
    table = {}
    for i, b in enumerate(batch_sizes):
        for name, k in searches.items():
            table[name if i == 0 else f"{name}_batch{b}"] = (k, b)
    return table


def search_graph(model, settings, batch_size):
    """The search as a `tf.function` of `source_ids (batch_size, None) int32` returning the
    dict of `OUTPUT_NAMES` (the module docstring's outputs)."""
    import tensorflow as tf

    spec = tf.TensorSpec((batch_size, None), tf.int32, name="source_ids")

    @tf.function(input_signature=[spec], autograph=False)
    def run(source_ids):
        # All rows run every step (skip_ended=False, as the XLA search): the number of rows
        # computed then stays fixed, which the converted loop needs.
        padded = padded_search(model, source_ids, settings, skip_ended=False)
        return {
            "ids": tf.cast(padded["ids"], tf.int32),
            "lengths": tf.cast(padded["lengths"], tf.int32),
            "scores": tf.cast(padded["scores"], tf.float32),
        }

    return run


def freeze(function):
    """`function` (a `tf.function` with an input signature) with its variables frozen into
    constants, as a `tf.function` of the same input and named outputs.

    The converter would leave variables read inside a while loop's body as resource
    reads, which the interpreter cannot resolve. Control flow stays v2 (TFLite's WHILE)."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    concrete = function.get_concrete_function()
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=False)
    names = sorted(concrete.structured_outputs)

    @tf.function(input_signature=concrete.structured_input_signature[0], autograph=False)
    def named(*inputs):  # the frozen graph's flat outputs under their names again
        return dict(zip(names, frozen(*inputs), strict=True))

    return named


def convert(functions, quantize="none"):
    """The `.tflite` bytes of `functions`, {signature name: `tf.function` with an input
    signature}: one signature each, their weights stored once (variables frozen into
    constants, TFLite builtin operators only, weights as `quantize` says)."""
    import tensorflow as tf
    from absl import logging as absl_logging

    check_choice("quantize", quantize, QUANTIZATIONS)
    named = {key: freeze(function) for key, function in functions.items()}
    verbosity = absl_logging.get_verbosity()  # quiet: the frozen graphs have no gradients
    absl_logging.set_verbosity(absl_logging.ERROR)
    try:
        with tempfile.TemporaryDirectory() as folder:  # a SavedModel keeps the names
            module = tf.Module()
            module.functions = list(named.values())
            signatures = {key: f.get_concrete_function() for key, f in named.items()}
            options = tf.saved_model.SaveOptions(experimental_custom_gradients=False)
            tf.saved_model.save(module, folder, signatures, options=options)
            converter = tf.lite.TFLiteConverter.from_saved_model(folder, list(named))
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
            if quantize == "float16":
                converter.optimizations = [tf.lite.Optimize.DEFAULT]
                converter.target_spec.supported_types = [tf.float16]
            elif quantize == "int8":
                converter.optimizations = [tf.lite.Optimize.DEFAULT]
            return converter.convert()
    finally:
        absl_logging.set_verbosity(verbosity)


def export_litert(
    translator, path, quantize="none", search="greedy", beam_size=None, batch_size=1, greedy=True
):
    """Writes `translator`'s model and search as a `.tflite` file (module docstring).

    Args:
        translator: a `zoo.translator.Translator` (e.g. `Translator.from_directory(DIR)`):
            its model, tokenizers and search settings (length penalty, coverage penalty,
            length limits).
        path: the `.tflite` file to write; `<stem>.json`, `<stem>.source_tokenizer/` and
            `<stem>.target_tokenizer/` are written beside it.
        quantize: "none" (float32 weights), "float16" or "int8" (dynamic range).
        search: "greedy" or "beam".
        beam_size: beam search's K (default: the translator's); with "greedy" it must be
            None or 1.
        batch_size: the sentences of one call (the input's fixed first dimension), at most
            `MAX_BATCH_SIZE`; a tuple of them for one signature per batch size (the
            module docstring), the first that of `serving_default`.
        greedy: with "beam", also add the signature `greedy` (beam size 1), as the
            SavedModel's `translate_greedy`; the two share the weights.

    Returns:
        `path`.
    """
    check_choice("quantize", quantize, QUANTIZATIONS)
    check_choice("search", search, SEARCHES)
    batch_sizes = check_batch_sizes(batch_size)
    if search == "greedy":
        if beam_size not in (None, 1):
            raise ValueError(f"search='greedy' has beam size 1; received beam_size={beam_size!r}.")
        beam_size = 1
    else:
        beam_size = translator.setting("beam_size", beam_size)
        if beam_size < 2:
            raise ValueError(
                f"search='beam' needs beam_size >= 2 (1 is search='greedy'); received {beam_size}."
            )
    signatures = signature_table(beam_size, batch_sizes, greedy)
    functions = {
        key: search_graph(
            translator.model,
            translator.settings.replace(beam_size=k, return_attention=False),
            b,
        )
        for key, (k, b) in signatures.items()
    }
    data = convert(functions, quantize)
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    translator.source_tokenizer.save(sidecar(path, SOURCE_TOKENIZER_DIR))
    translator.target_tokenizer.save(sidecar(path, TARGET_TOKENIZER_DIR))
    metadata = dict(
        format_version=FORMAT_VERSION,
        search=search,
        beam_size=beam_size,
        batch_size=max(batch_sizes),
        quantize=quantize,
        **translator.search_settings(),
        signatures={key: {"beam_size": k, "batch_size": b} for key, (k, b) in signatures.items()},
        inputs=["source_ids"],
        outputs=list(OUTPUT_NAMES),
    )
    write_json(sidecar(path, "json"), metadata)
    return path
