"""`LiteRTTranslator`: translates with a `.tflite` file written by `zoo.export.export_litert`."""

import json
import os

import numpy as np

from zoo.checks import check_int, check_non_negative_ids
from zoo.constants import END_ID, PAD_ID, SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR
from zoo.export.litert import DEFAULT_SIGNATURE, READABLE_VERSIONS, sidecar
from zoo.translation import as_text, check_sentences, run_in_batches


def usable_cores():
    """The CPU cores this process may run on (its affinity where the system tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def make_interpreter(path, num_threads=None):
    """A LiteRT interpreter of `path` running on `num_threads` threads (None: every core
    this process may use, where the interpreter's own default is one thread; bench/RESULTS.md,
    "The int8 engine against the Keras server"): `ai_edge_litert`'s where installed (the
    `litert` extra), else TensorFlow's `tf.lite.Interpreter` (the same runtime)."""
    if num_threads is None:
        num_threads = usable_cores()
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        import tensorflow as tf

        Interpreter = tf.lite.Interpreter
    return Interpreter(model_path=os.fspath(path), num_threads=num_threads)


def signature_table(metadata):
    """{signature name: (beam size, batch size)} of a file's settings (`<stem>.json`)."""
    signatures = metadata.get("signatures", {DEFAULT_SIGNATURE: metadata["beam_size"]})
    return {
        key: (int(value), int(metadata["batch_size"]))  # format 1: the beam size alone
        if isinstance(value, int)
        else (int(value["beam_size"]), int(value["batch_size"]))
        for key, value in signatures.items()
    }


class LiteRTTranslator:
    """Translates lists of sentences with a `.tflite` translator and the tokenizers beside it.

    Args:
        path: the `.tflite` file (`export_litert`), with `<stem>.json`,
            `<stem>.source_tokenizer/` and `<stem>.target_tokenizer/` beside it.
        num_threads: the interpreter's CPU threads (None: every core this process may
            use, `usable_cores`).

    `translate_ids(rows)` runs the file on lists of source ids; `translate(sentences)`
    tokenizes with the zoo tokenizers, sorts by length and batches as the `Translator` does,
    and returns the texts in input order.

    Example:
        >>> lite = LiteRTTranslator("model.tflite")  # doctest: +SKIP
        >>> lite.translate(["Ein Hund rennt."])  # doctest: +SKIP
        ['A dog is running.']
    """

    def __init__(self, path, num_threads=None):
        from zoo.text import load_tokenizer

        path = os.fspath(path)
        if not os.path.isfile(path):
            raise ValueError(f"{path}: no such .tflite file.")
        metadata_path = sidecar(path, "json")
        if not os.path.isfile(metadata_path):
            raise ValueError(
                f"{metadata_path} is missing: the settings export_litert writes beside {path}."
            )
        with open(metadata_path, encoding="utf-8") as f:
            self.metadata = json.load(f)
        if self.metadata.get("format_version") not in READABLE_VERSIONS:
            raise ValueError(
                f"{metadata_path}: expected format_version "
                f"{' or '.join(map(str, READABLE_VERSIONS))}, received "
                f"{self.metadata.get('format_version')!r}."
            )
        self.path = path
        self.batch_size = int(self.metadata["batch_size"])
        self.source_tokenizer = load_tokenizer(sidecar(path, SOURCE_TOKENIZER_DIR))
        self.target_tokenizer = load_tokenizer(sidecar(path, TARGET_TOKENIZER_DIR))
        self.interpreter = make_interpreter(path, num_threads)
        # {beam size: {batch size: signature runner}}: the export's search and greedy
        # search (a beam file), each at every batch size the file was exported for.
        self.runners = {}
        for key, (k, b) in signature_table(self.metadata).items():
            runner = self.interpreter.get_signature_runner(key)
            self.runners.setdefault(k, {})[b] = runner

    @property
    def beam_size(self):
        """The beam size of the file's `serving_default` signature (1: greedy)."""
        return int(self.metadata["beam_size"])

    def runner(self, beam_size=None, rows=1):
        """(batch size, signature runner) of `beam_size` (None: the file's own search) for
        `rows` sentences: the smallest batch size of the file that holds them, else the
        largest."""
        beam_size = self.beam_size if beam_size is None else beam_size
        if beam_size not in self.runners:
            raise ValueError(
                f"{self.path} searches with beam size {sorted(self.runners)}; received "
                f"beam_size={beam_size!r}. Export a file for that search (export_litert)."
            )
        by_batch = self.runners[beam_size]
        batch_size = min((b for b in by_batch if b >= rows), default=max(by_batch))
        return batch_size, by_batch[batch_size]

    def source_lengths(self, sentences):
        """NumPy int array: the number of source tokens of each sentence."""
        ragged = self.source_tokenizer.tokenize(check_sentences(sentences))
        return np.asarray(ragged.row_lengths())

    def run(self, source_ids, beam_size=None):
        """The file's outputs (ids, lengths, scores as NumPy arrays) on (b, Ts) int32
        `source_ids`, b at most the batch size (the rest padded with rows of PAD to the
        smallest batch size of the file that holds b), with the search of `beam_size`
        (None: the file's own; 1: greedy, in a beam file too)."""
        source_ids = np.asarray(source_ids, np.int32)
        if source_ids.ndim != 2:
            raise ValueError(
                f"source_ids must have shape (batch, source_len); received shape "
                f"{source_ids.shape}."
            )
        count = source_ids.shape[0]
        if not 1 <= count <= self.batch_size:
            raise ValueError(
                f"a call takes 1 to {self.batch_size} rows (the batch size fixed at export); "
                f"received {count}: split the rows, or export with a larger --batch-size."
            )
        check_non_negative_ids(source_ids, "source_ids")
        rows, runner = self.runner(beam_size, count)
        width = max(source_ids.shape[1], 1)
        batch = np.full((rows, width), PAD_ID, np.int32)
        batch[:count, : source_ids.shape[1]] = source_ids
        outputs = runner(source_ids=batch)
        return {key: np.asarray(value)[:count] for key, value in outputs.items()}

    def translate_ids(self, rows, beam_size=None):
        """Per row of source ids (a list of int, no START/END), the translation's ids up to
        and without END (a list of int); rows searched `batch_size` at a time, in order,
        with the search of `beam_size` (as for `run`)."""
        self.runner(beam_size)  # a beam size the file lacks: the error before any work
        rows = [list(map(int, row)) for row in rows]
        results = []
        for start in range(0, len(rows), self.batch_size):
            chunk = rows[start : start + self.batch_size]
            width = max(1, *(len(row) for row in chunk))
            ids = np.full((len(chunk), width), PAD_ID, np.int32)
            for i, row in enumerate(chunk):
                ids[i, : len(row)] = row
            out = self.run(ids, beam_size)
            for row_ids, length in zip(out["ids"], out["lengths"], strict=True):
                kept = [int(t) for t in row_ids[: int(length)]]
                results.append(kept[:-1] if kept and kept[-1] == END_ID else kept)
        return results

    def translate(self, sentences, beam_size=None, batch_size=None, progress=False):
        """Translates `sentences` (a list of str); returns a list of str, in input order,
        with the search of `beam_size` (None: the file's own; 1: greedy, in a beam file too).

        Sentences are sorted by length and searched `batch_size` at a time (at most, and by
        default, the file's batch size), as `zoo.translation.run_in_batches` runs them."""
        sentences = check_sentences(sentences)
        self.runner(beam_size)
        if batch_size is not None:
            batch_size = min(check_int(None, "batch_size", batch_size), self.batch_size)
        batch_size = self.batch_size if batch_size is None else batch_size
        if not sentences:
            return []
        ragged = self.source_tokenizer.tokenize(sentences)
        rows = [row.tolist() for row in ragged.numpy()]
        lengths = [len(row) for row in rows]

        def call(strings, start):
            ids = self.translate_ids(rows_of[start : start + len(strings)], beam_size)
            return {"translation": self.detokenize(ids)}

        order = sorted(range(len(rows)), key=lambda i: -lengths[i])
        rows_of = [rows[i] for i in order]  # run_in_batches' sorted order
        outputs = run_in_batches(sentences, batch_size, call, progress, lengths)
        return [as_text(out["translation"]) for out in outputs]

    def detokenize(self, ids):
        """Lists of target ids -> a NumPy array of UTF-8 bytes, one per list."""
        width = max([1, *(len(row) for row in ids)])
        dense = np.full((len(ids), width), PAD_ID, np.int32)
        for i, row in enumerate(ids):
            dense[i, : len(row)] = row
        return self.target_tokenizer.detokenize(dense).numpy()


ENGINE_BATCH_SIZES = (1, 8, 32)
"""The batch sizes of `engine_file`'s signatures up to the server's largest batch: a call
runs in the smallest that holds its sentences (a search's time grows with its rows, the
padding rows included), so one sentence alone is not padded to a batch of 64."""


def engine_file(translator, quantize="int8", batch_size=None, out=None):
    """The `.tflite` file of `translator` for serving, exported once and kept in
    `$ZOO_CACHE_DIR/litert/` under a key of its weights and settings: its search (its beam
    size, with greedy search beside it) at batch sizes `ENGINE_BATCH_SIZES` and
    `batch_size`, weights as `quantize` says.

    Args:
        translator: a `zoo.translator.Translator` (e.g. `Translator.from_directory(DIR)`).
        quantize: "int8" (dynamic range), "float16" or "none".
        batch_size: the largest batch of one call (the server's `max_batch_size`; default:
            the translator's batch size).
        out: a text stream told when the file is being made (None: silent).

    Returns:
        The path of the file (`LiteRTTranslator(path)` runs it).
    """
    import hashlib

    from zoo.data.files import cache_dir
    from zoo.export.litert import FORMAT_VERSION, export_litert

    largest = check_int(None, "batch_size", translator.setting("batch_size", batch_size))
    sizes = tuple(sorted(b for b in {*ENGINE_BATCH_SIZES, largest} if b <= largest))
    search = "beam" if translator.beam_size > 1 else "greedy"
    key = hashlib.sha256()
    for weight in translator.model.weights:
        key.update(weight.path.encode())
        key.update(np.ascontiguousarray(weight.numpy()).tobytes())
    settings = dict(translator.get_config(), quantize=quantize, batch_sizes=sizes,
                    format_version=FORMAT_VERSION)  # fmt: skip
    key.update(json.dumps(settings, sort_keys=True, default=str).encode())
    path = os.path.join(cache_dir(), "litert", key.hexdigest()[:20], f"{quantize}.tflite")
    if os.path.isfile(sidecar(path, "json")):  # written last: the export finished
        return path
    if out is not None:
        print(
            f"Converting the model to a LiteRT file ({quantize} weights, {search} search, "
            f"batch sizes {', '.join(map(str, sizes))}); once, kept in {os.path.dirname(path)}",
            file=out,
            flush=True,
        )
    export_litert(translator, path, quantize=quantize, search=search, batch_size=sizes)
    return path
