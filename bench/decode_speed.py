"""Decoding speed (sentences/s) of greedy and beam search on Multi30k test2016 (de->en).

The sentences are the test split of the benchmark corpus (`common.bench_corpus`: the
registry's default corpus in its default pair).

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
process of its own (under `KERAS_BACKEND`), and prints their rows in one table. The
Translator compiles its search per backend (`zoo.search.compile_search`: the traced graph on
TensorFlow, `jax.jit` on JAX, `torch.no_grad` on PyTorch); the SavedModel path and
`--growth` are TensorFlow's only (a SavedModel is TensorFlow's format).
"""

import statistics
import tempfile
import time

import common

PEER_KEYS = {("greedy", 64): "decode_greedy_batch64", ("beam 5", 64): "decode_beam5_batch64"}
PEER_KEYS.update({("greedy", 1): "decode_greedy_batch1", ("beam 5", 1): "decode_beam5_batch1"})
PATHS = ("translator", "savedmodel")


def parse_args(argv=None):
    p = common.parser(__doc__)
    common.add_preset_flags(p, "bahdanau_rnnsearch,luong_global_general")
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
    common.add_search_flags(p)
    p.add_argument(
        "--paths",
        default=",".join(PATHS),
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
        help="sentences of the test split (its first N) timed per row (default: %(default)s)",
    )
    p.add_argument(
        "--limit-batch1",
        type=int,
        default=10,
        help="sentences timed at batch size 1 (slow: one search call each) (default: %(default)s)",
    )
    common.add_backend_flag(p)
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
    import numpy as np

    from zoo.search import search_function

    spec = common.preset_specs(args.presets, args.size)[0]
    vocab = args.vocab_size
    model = common.build_model(spec, args.size, (vocab, vocab), seed=0)
    rng, rows = np.random.default_rng(0), []
    for beam in sorted({1, args.beam}):
        run = search_function(
            model, beam_size=beam, length_penalty=0.0, return_attention=args.attention
        )
        for n in common.split_list(args.growth, int):
            source = rng.integers(4, vocab, size=(1, n)).astype("int32")
            run(source[:, :8])  # traced once, outside the timing
            start = time.perf_counter()
            steps = int(np.asarray(run(source).lengths).max())
            seconds = time.perf_counter() - start
            per_step = 1000 * seconds / steps
            rows.append(
                {
                    "search": "greedy" if beam == 1 else f"beam {beam}",
                    "n": n,
                    "steps": steps,
                    "seconds": seconds,
                    "per_step": per_step,
                    "per_n": 1000 * per_step / n,
                }
            )
            print(f"{rows[-1]['search']}, N {n}: {per_step:.2f} ms per step", flush=True)
    print(f"{spec} ({args.size}), untrained, attention collected: {args.attention}")
    columns = [
        ("search", "search", None),
        ("n", "N source tokens", "{}"),
        ("steps", "steps", "{}"),
        ("seconds", "seconds", "{:.2f}"),
        ("per_step", "ms per step", "{:.2f}"),
        ("per_n", "us per step per N", "{:.2f}"),
    ]
    print(common.table(rows, columns, markdown=True))


def translators(args):
    """Yields (label, Translator) per preset (untrained) or the one trained folder."""
    from zoo.translator import Translator

    if args.model_dir:
        yield args.model_dir, Translator.from_directory(args.model_dir)
        return
    import keras

    keras.utils.set_random_seed(0)  # before the tokenizers (`common.build_model`)
    source, target = common.tokenizers(args.vocab_size)
    for spec in common.preset_specs(args.presets, args.size):
        sizes = (source.vocab_size, target.vocab_size)
        model = common.build_model(spec, args.size, sizes, precision=args.precision)
        # length penalty 0, as the recorded figures of untrained models were taken
        yield f"{spec} (untrained)", Translator(model, source, target, length_penalty=0.0)


def time_savedmodel(loaded, sentences, order, beam, batch):
    """(seconds, mean output length) of the SavedModel's endpoint on the length-sorted
    batches, after one warm-up batch."""
    import tensorflow as tf

    endpoint = loaded.translate if beam > 1 else loaded.translate_greedy
    batches = [[sentences[i] for i in order[s : s + batch]] for s in range(0, len(order), batch)]
    endpoint(tf.constant(batches[0]))
    lengths = []
    start = time.perf_counter()
    for b in batches:
        lengths += list(endpoint(tf.constant(b))["target_lengths"].numpy())
    return time.perf_counter() - start, statistics.mean(int(x) for x in lengths)


def measure_here(args, backend):
    """The rows of every translator, search, batch size and path, on this process's
    backend (the SavedModel path on TensorFlow only)."""
    from zoo.export import load_exported

    test = list(common.bench_corpus(common.BENCH_TEST).source)
    batch_sizes = common.split_list(args.batch_sizes, int)
    paths = common.split_list(args.paths)
    unknown = sorted(set(paths) - set(PATHS))
    if unknown:
        raise ValueError(f"Unknown path(s) {unknown}; use {', '.join(PATHS)}.")
    if backend != "tensorflow" and "savedmodel" in paths:
        print(f"savedmodel: TensorFlow's format, not timed on {backend}", flush=True)
        paths.remove("savedmodel")
    rows = []
    for label, translator in translators(args):
        print(f"{label}: {translator.model.count_params():,} parameters", flush=True)
        cases = []
        for search, beam in common.searches(args):
            for batch in batch_sizes:
                n = min(args.limit_batch1 if batch == 1 else args.limit, len(test))
                lengths = translator.source_lengths(test[:n])
                order = sorted(range(n), key=lambda i: -int(lengths[i]))
                cases.append((search, beam, batch, test[:n], order, float(lengths.mean())))
        # The Translator runs first: after export + tf.saved_model.load in the same process the
        # original tokenizer's SentencePiece resource is gone (NotFoundError: Resource
        # localhost/_0_SentencepieceOp/... does not exist), a bug reported to the lead.
        for path in [p for p in PATHS if p in paths]:
            if path == "savedmodel":
                export_dir = tempfile.mkdtemp(prefix="zoo-decode-bench-")
                start = time.perf_counter()
                translator.export(
                    export_dir, beam_size=args.beam, greedy=True, attention=args.attention
                )
                loaded = load_exported(export_dir)
                print(f"  exported + reloaded in {time.perf_counter() - start:.1f} s: {export_dir}")
            translate = (
                translator.translate_with_attention if args.attention else translator.translate
            )
            for search, beam, batch, sentences, order, src_len in cases:
                n = len(sentences)
                if path == "translator":
                    _, seconds = common.timed(
                        translate, sentences, beam_size=beam, batch_size=batch
                    )
                    out_len = None
                else:
                    seconds, out_len = time_savedmodel(loaded, sentences, order, beam, batch)
                row = {
                    "model": label,
                    "backend": backend,
                    "search": search,
                    "batch": batch,
                    "path": path,
                    "sentences": n,
                    "seconds": seconds,
                    "sent_per_s": n / seconds,
                    "out_len": out_len,
                    "src_len": src_len,
                }
                if (search, batch) in PEER_KEYS:
                    row["peer"] = common.PEER_README[PEER_KEYS[search, batch]]
                    row["vs_peer"] = row["sent_per_s"] / row["peer"]
                rows.append(row)
                print(
                    f"  {search:7s} batch {batch:4d} {path:10s}: "
                    f"{row['sent_per_s']:7.1f} sentences/s ({n} in {seconds:.1f} s)",
                    flush=True,
                )
    return rows


COLUMNS = [
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
]


def main(argv=None):
    args = parse_args(argv)
    backends = common.parse_backends(args.backend)
    if args.growth:
        if backends != ["tensorflow"] or common.default_backend() != "tensorflow":
            raise SystemExit(
                "--growth times TensorFlow's traced search only: --backend tensorflow."
            )
        return growth(args)
    if backends == [common.default_backend()]:
        rows = measure_here(args, backends[0])
    else:  # one process per backend, then one table
        rows = [row for b in backends for row in common.run_on(b, measure_here, args, b)]
    print()
    pair = "->".join(common.BENCH_PAIR)
    what = "with attention weights" if args.attention else "text only"
    print(f"{common.BENCH_TEST} {pair}, size={args.size}, precision={args.precision}, {what}")
    print(common.table(rows, COLUMNS))
    print(
        "peer figures: Joey NMT README (trained model, test2016, batch 64 / 1, 2-core CPU); "
        "an untrained zoo model decodes to its length limit, the worst case."
    )
    return rows


if __name__ == "__main__":
    main()
