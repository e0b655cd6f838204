"""Decoding speed (sentences/s) of greedy and beam search on Multi30k test2016 (de->en).

For each preset (untrained, built at `--size` with 8k SentencePiece vocabularies; or a
trained output folder with `--model-dir`), each search (greedy, beam `--beam`) and each
batch size: sentences per second through `zoo.translator.Translator.translate` (strings in,
strings out, sentences sorted by length and batched) and through the SavedModel written by
`Translator.export` (loaded with `tf.saved_model.load` and called as
`loaded.translate(tf.constant(batch))` on the same length-sorted batches). Tracing and the
first call of each function are excluded, and so is the first pass over the sentences: the
Translator path translates them all once untimed, then again timed; the SavedModel path runs
after it in the same process. The first pass is slower for whichever path runs first (every
new sentence length sets up its kernels once), so without it the Translator looked up to 2x
slower than the SavedModel although both run the same graph. Both paths return text only
(`Translator.translate`; the SavedModel exported with `attention=False`); `--attention`
times them with the attention weights too (`translate_with_attention`, the default export).

An UNTRAINED model rarely emits END, so every sentence runs to its length limit
(1.5 x source length + 10): the worst case. A trained model stops earlier; use
`--model-dir` for the realistic figure. The mean output length is printed.

    python bench/decode_speed.py                                   # 3.5 min on 2 cores
    python bench/decode_speed.py --growth 100,2000                 # time per step vs length

`--growth N1,N2,...` instead times one untrained model on one random source of each length
N (tokens; it rarely emits END, so it decodes 1.5 N + 10 steps) through
`zoo.search.search_function` (the traced search of the Translator and the SavedModel),
greedy and beam `--beam`, after one untimed call, and prints the time per step divided by
N: each step attends over N positions, so a search linear in its steps (times the source
length) keeps that figure about constant as N grows; one that copies its whole output
buffers at every step grows it in proportion to N.
    python bench/decode_speed.py --model-dir runs/bahdanau --limit 1000 --batch-sizes 64

`--backend tensorflow,jax,torch` runs the whole measurement once per Keras backend, each in a
process of its own (this script again, under `KERAS_BACKEND`), and prints their rows in one
table. The Translator compiles its search per backend (`zoo.search.compile_search`: the
traced graph on TensorFlow, `jax.jit` on JAX, `torch.no_grad` on PyTorch); the SavedModel
path and `--growth` are TensorFlow's only (a SavedModel is TensorFlow's format).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import common

from zoo.search import defaults as search_defaults
from zoo.text import DEFAULT_VOCAB_SIZE

PEER_KEYS = {("greedy", 64): "decode_greedy_batch64", ("beam", 64): "decode_beam5_batch64"}
PEER_KEYS.update({("greedy", 1): "decode_greedy_batch1", ("beam", 1): "decode_beam5_batch1"})


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--presets",
        default="bahdanau_rnnsearch,luong_global_general",
        help="comma-separated preset names (zoo.models.presets()), with suffixes: "
        + common.SUFFIX_HELP
        + " (default: %(default)s); ignored with --model-dir",
    )
    common.add_model_arguments(p)
    p.add_argument(
        "--model-dir",
        default=None,
        help="a trained output folder (Translator.from_directory) instead of untrained presets",
    )
    p.add_argument(
        "--batch-sizes",
        default="1,32,64,128",
        help="comma-separated batch sizes; 64 is the peer's (default: %(default)s)",
    )
    p.add_argument(
        "--beam",
        type=int,
        default=search_defaults.BEAM_SIZE,
        help="beam size of the beam rows (default: %(default)s, zoo.search.defaults)",
    )
    p.add_argument(
        "--searches",
        default="greedy,beam",
        help="which searches: greedy, beam or both (default: %(default)s)",
    )
    p.add_argument(
        "--paths",
        default="translator,savedmodel",
        help="translator (Translator.translate), savedmodel (exported, reloaded) "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--attention",
        action="store_true",
        help="also return the attention weights (Translator.translate_with_attention; the "
        "SavedModel exported with its attention output, as the recipes write it)",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=80,
        help="sentences of test2016 (first N, of 1000) timed per row (default: %(default)s)",
    )
    p.add_argument(
        "--limit-batch1",
        type=int,
        default=10,
        help="sentences timed at batch size 1 (slow: one search call each) (default: %(default)s)",
    )
    p.add_argument(
        "--vocab-size",
        type=int,
        default=DEFAULT_VOCAB_SIZE,
        help="SentencePiece vocabularies (default: %(default)s)",
    )
    p.add_argument("--backend", default=common.default_backend(), help=common.BACKEND_HELP)
    p.add_argument("--rows-json", default=None, help=argparse.SUPPRESS)  # a child's rows
    p.add_argument(
        "--growth",
        default=None,
        metavar="N1,N2,...",
        help="time the search per output step on sources of these lengths instead (the first "
        "of --presets, untrained; --beam 1 for greedy only)",
    )
    return p.parse_args(argv)


def growth(args):
    """The `--growth` table (module docstring)."""
    import keras
    import numpy as np

    import zoo.models
    from zoo.search import search_function

    name, overrides = common.parse_preset(_split(args.presets)[0])
    keras.utils.set_random_seed(0)
    model = zoo.models.build(
        name, size=args.size, source_vocab_size=args.vocab_size,
        target_vocab_size=args.vocab_size, **overrides,
    )  # fmt: skip
    print(f"{name} ({args.size}), untrained, attention collected: {args.attention}")
    print("| search | N source tokens | steps | seconds | ms per step | us per step per N |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for beam in sorted({1, args.beam}):
        run = search_function(
            model, beam_size=beam, length_penalty=0.0, return_attention=args.attention
        )
        for n in (int(x) for x in _split(args.growth)):
            source = rng.integers(4, args.vocab_size, size=(1, n)).astype("int32")
            run(source[:, :8])  # traced once, outside the timing
            start = time.perf_counter()
            steps = int(np.asarray(run(source).lengths).max())
            seconds = time.perf_counter() - start
            per_step = 1000 * seconds / steps
            print(
                f"| {'greedy' if beam == 1 else f'beam {beam}'} | {n} | {steps} | "
                f"{seconds:.2f} | {per_step:.2f} | {1000 * per_step / n:.2f} |",
                flush=True,
            )


def _split(text):
    return [s.strip() for s in text.split(",") if s.strip()]


def translators(args):
    """Yields (label, Translator) per preset (untrained) or the one trained folder."""
    import keras

    import zoo.models
    from zoo.training import set_precision
    from zoo.translator import Translator

    if args.model_dir:
        yield args.model_dir, Translator.from_directory(args.model_dir)
        return
    # Seed first: keras.utils.set_random_seed (tf.random.set_seed) destroys the SentencePiece
    # resources of tokenizers that exist already (NotFoundError ... SentencepieceOp).
    keras.utils.set_random_seed(0)
    source_tok, target_tok = common.tokenizers(args.vocab_size)
    for spec in _split(args.presets):
        name, overrides = common.parse_preset(spec)
        set_precision(args.precision)
        model = zoo.models.build(
            name,
            size=args.size,
            source_vocab_size=source_tok.vocab_size,
            target_vocab_size=target_tok.vocab_size,
            **overrides,
        )
        # length penalty 0, as the recorded figures of untrained models were taken
        yield f"{spec} (untrained)", Translator(model, source_tok, target_tok, length_penalty=0.0)


def time_translator(translator, sentences, beam, batch, attention):
    translate = translator.translate_with_attention if attention else translator.translate
    translate(sentences, beam_size=beam, batch_size=batch)  # trace, then a first pass
    start = time.perf_counter()
    translate(sentences, beam_size=beam, batch_size=batch)
    return time.perf_counter() - start, None


def time_savedmodel(loaded, sentences, order, beam, batch):
    import tensorflow as tf

    endpoint = loaded.translate if beam > 1 else loaded.translate_greedy
    batches = [[sentences[i] for i in order[s : s + batch]] for s in range(0, len(order), batch)]
    endpoint(tf.constant(batches[0]))  # warm up
    lengths = []
    start = time.perf_counter()
    for b in batches:
        out = endpoint(tf.constant(b))
        lengths += list(out["target_lengths"].numpy())
    return time.perf_counter() - start, statistics.mean(int(x) for x in lengths)


def per_backend(argv, backends):
    """The rows of this script run once per backend, each in its own process."""
    rows = []
    for backend in backends:
        with tempfile.TemporaryDirectory(prefix="zoo-decode-bench-") as folder:
            path = os.path.join(folder, "rows.json")
            command = [sys.executable, __file__, *argv, "--backend", backend, "--rows-json", path]
            print(f"== {backend} ==", flush=True)
            with common.keras_backend(backend):
                done = subprocess.run(command, check=False)
            if done.returncode:
                raise SystemExit(f"the {backend} run failed (exit {done.returncode}); see above.")
            with open(path, encoding="utf-8") as f:
                rows += json.load(f)
    return rows


def main(argv=None):
    args = parse_args(argv)
    backends = common.parse_backends(args.backend)
    if args.growth:
        if backends != ["tensorflow"] or common.default_backend() != "tensorflow":
            raise SystemExit(
                "--growth times TensorFlow's traced search only: --backend tensorflow."
            )
        return growth(args)
    if backends != [common.default_backend()]:  # one process per backend, then one table
        rows = per_backend(sys.argv[1:] if argv is None else list(argv), backends)
    else:
        rows = measure_here(args, backends[0])
    if args.rows_json:
        with open(args.rows_json, "w", encoding="utf-8") as f:
            json.dump(rows, f)
        return rows
    print_table(rows, args)
    return rows


def measure_here(args, backend):
    """The rows of every translator, search, batch size and path, on this process's
    backend (the SavedModel path on TensorFlow only)."""
    from zoo.export import load_exported

    test = list(common.bench_corpus("test2016").source)
    batch_sizes = [int(b) for b in _split(args.batch_sizes)]
    searches = [(s, args.beam if s == "beam" else 1) for s in _split(args.searches)]
    paths = _split(args.paths)
    unknown = sorted(set(paths) - {"translator", "savedmodel"})
    if unknown:
        raise ValueError(f"Unknown path(s) {unknown}; use translator, savedmodel.")
    if backend != "tensorflow" and "savedmodel" in paths:
        print(f"savedmodel: TensorFlow's format, not timed on {backend}", flush=True)
        paths = [p for p in paths if p != "savedmodel"]
    rows = []
    for label, translator in translators(args):
        print(f"{label}: {translator.model.count_params():,} parameters", flush=True)
        cases = []
        for _, beam in searches:
            for batch in batch_sizes:
                n = min(args.limit_batch1 if batch == 1 else args.limit, len(test))
                lengths = translator.source_lengths(test[:n])
                order = sorted(range(n), key=lambda i: -int(lengths[i]))
                cases.append((beam, batch, test[:n], order, float(lengths.mean())))
        loaded = None
        # The Translator runs first: after export + tf.saved_model.load in the same process the
        # original tokenizer's SentencePiece resource is gone (NotFoundError: Resource
        # localhost/_0_SentencepieceOp/... does not exist), a bug reported to the lead.
        for path in [p for p in ("translator", "savedmodel") if p in paths]:
            if path == "savedmodel":
                export_dir = tempfile.mkdtemp(prefix="zoo-decode-bench-")
                start = time.perf_counter()
                translator.export(
                    export_dir, beam_size=args.beam, greedy=True, attention=args.attention
                )
                loaded = load_exported(export_dir)
                print(f"  exported + reloaded in {time.perf_counter() - start:.1f} s: {export_dir}")
            for beam, batch, sentences, order, src_len in cases:
                n = len(sentences)
                if path == "translator":
                    seconds, out_len = time_translator(
                        translator, sentences, beam, batch, args.attention
                    )
                else:
                    seconds, out_len = time_savedmodel(loaded, sentences, order, beam, batch)
                row = {
                    "model": label,
                    "backend": backend,
                    "search": "greedy" if beam == 1 else f"beam {beam}",
                    "batch": batch,
                    "path": path,
                    "sentences": n,
                    "seconds": seconds,
                    "sent_per_s": n / seconds,
                    "out_len": out_len,
                    "src_len": src_len,
                }
                key = PEER_KEYS.get(("greedy" if beam == 1 else "beam", batch))
                if key and beam in (1, 5):
                    row["peer"] = common.PEER_README[key]
                    row["vs_peer"] = row["sent_per_s"] / row["peer"]
                rows.append(row)
                print(
                    f"  {row['search']:7s} batch {batch:4d} {path:10s}: "
                    f"{row['sent_per_s']:7.1f} sentences/s ({n} in {seconds:.1f} s)",
                    flush=True,
                )
        del loaded
    return rows


def print_table(rows, args):
    print()
    print(
        f"Multi30k test2016 de->en, size={args.size}, precision={args.precision}, "
        + ("with attention weights" if args.attention else "text only")
    )
    print(
        common.table(
            rows,
            [
                ("model", "model", None),
                ("backend", "backend", None),
                ("search", "search", None),
                ("batch", "batch", "{}"),
                ("path", "path", None),
                ("sentences", "sentences", "{}"),
                ("src_len", "mean src len", "{:.1f}"),
                ("out_len", "mean out len", "{:.1f}"),
                ("sent_per_s", "sent/s", "{:.1f}"),
                ("peer", "peer (README)", "{:.1f}"),
                ("vs_peer", "x peer", "{:.2f}"),
            ],
        )
    )
    print(
        "peer figures: Joey NMT README (trained model, test2016, batch 64 / 1, 2-core CPU); "
        "an untrained zoo model decodes to its length limit, the worst case."
    )


if __name__ == "__main__":
    main()
