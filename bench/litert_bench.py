"""LiteRT (TFLite) translators beside the SavedModel: file sizes, BLEU and speed.

For a trained output folder (`MODEL_DIR` or `--model-dir`) and each search (greedy, beam `--beam`), this
exports the SavedModel (`Translator.export`, text only) and `.tflite` files with float32,
float16 and int8 (dynamic-range) weights (`zoo.export.litert.export_litert`), then reports
for each:
- the file's size (the `.tflite` file; the SavedModel's folder) and its share of float32's;
- BLEU (sacreBLEU 13a, cased) on `--split` (the corpus' test split) of the whole split (or
  `--limit` sentences), through `LiteRTTranslator` on a file of batch `--batch` (64) and
  through `SavedModelTranslator` at the same batch size, and the difference to the
  SavedModel;
- batch-1 latency: the mean and median seconds of one sentence, strings in and strings out,
  over the first `--latency-sentences` sentences of the split (after one untimed call),
  through a file exported with batch 1 and through the SavedModel;
- batch-`--batch` throughput: sentences per second of the BLEU pass (sorted by length
  and batched as the Translator does; the pass runs once untimed first).
Timings include tokenizing (the SavedModel tokenizes in its graph, `LiteRTTranslator` with
the zoo tokenizers) and run on this machine's CPU (`--threads` for the interpreter).

    python bench/litert_bench.py saved_models/luong_local_general_multi30k_de_en
    python bench/litert_bench.py --model-dir runs/tiny --limit 40 --latency-sentences 5
"""

import os
import statistics
import tempfile
import time

import common

from zoo.search import defaults as search_defaults

QUANTIZATIONS = ("none", "float16", "int8")


def parse_args(argv=None):
    p = common.parser(__doc__)
    common.add_model_dir(p)
    common.add_search_flags(p)
    p.add_argument(
        "--quantize",
        default=",".join(QUANTIZATIONS),
        help="comma-separated weights of the .tflite files (default: %(default)s)",
    )
    p.add_argument(
        "--batch",
        type=int,
        default=search_defaults.BATCH_SIZE,
        help="batch of the BLEU and throughput pass (default: %(default)s)",
    )
    common.add_corpus_flags(p, split="test")
    p.add_argument(
        "--limit", type=int, default=None, help="first N sentences of the split (default: all)"
    )
    p.add_argument(
        "--latency-sentences",
        type=int,
        default=50,
        help="sentences timed one at a time for the batch-1 latency (default: %(default)s)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="interpreter threads (default: every core this process may use)",
    )
    p.add_argument(
        "--out-dir",
        default=None,
        help="where the files and results.json go (default: bench/out/litert/<folder name>)",
    )
    return p.parse_args(argv)


def folder_size(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def measure(translate, one, sentences, references, latency_sentences):
    """BLEU and throughput of `translate(sentences)`, latency of `one(sentence)`."""
    from zoo.evaluation import corpus_scores

    hypotheses, seconds = common.timed(translate, sentences)
    one(sentences[0])
    times, _ = common.time_each(one, sentences[:latency_sentences])
    return {
        "bleu": corpus_scores(hypotheses, references)["bleu"],
        "sent_per_s": len(sentences) / seconds,
        "latency_mean_ms": 1000 * statistics.mean(times),
        "latency_p50_ms": 1000 * statistics.median(times),
    }


COLUMNS = [
    ("search", "search", None),
    ("format", "format", None),
    ("MiB", "MiB", "{:.2f}"),
    ("share", "x float32", "{:.2f}"),
    ("bleu", "BLEU", "{:.2f}"),
    ("bleu_diff", "vs SavedModel", "{:+.2f}"),
    ("latency_mean_ms", "batch-1 ms", "{:.1f}"),
    ("latency_p50_ms", "p50 ms", "{:.1f}"),
]


def main(argv=None):
    args = parse_args(argv)
    from zoo.export import SavedModelTranslator
    from zoo.export.litert import export_litert
    from zoo.export.litert_translator import LiteRTTranslator
    from zoo.translator import Translator

    corpus = common.corpus_split(args, args.limit)
    sentences, references = list(corpus.source), list(corpus.target)
    name = os.path.basename(os.path.normpath(args.model_dir))
    out_dir = args.out_dir or str(common.OUT_DIR / "litert" / name)
    os.makedirs(out_dir, exist_ok=True)
    translator = Translator.from_directory(args.model_dir)
    print(f"{args.model_dir}: {translator.model.count_params():,} parameters", flush=True)
    quantizations = common.split_list(args.quantize)
    rows = []
    for label, beam in common.searches(args):
        search = "greedy" if beam == 1 else "beam"
        serving = tempfile.mkdtemp(prefix="zoo-litert-bench-")
        translator.export(serving, beam_size=beam, greedy=False, attention=False)
        saved = SavedModelTranslator(serving, batch_size=args.batch)
        reference = {"search": label, "format": "SavedModel", "bytes": folder_size(serving)}
        reference.update(
            measure(
                saved.translate,
                lambda s, saved=saved: saved.translate([s], batch_size=1),
                sentences,
                references,
                args.latency_sentences,
            )
        )
        rows.append(reference)
        print(f"  {label} SavedModel: BLEU {reference['bleu']:.2f}", flush=True)
        float32_bytes = None
        for quantize in quantizations:
            files = {}
            for batch in (1, args.batch):
                path = os.path.join(out_dir, f"{search}_{quantize}_batch{batch}.tflite")
                start = time.perf_counter()
                export_litert(
                    translator, path, quantize=quantize, search=search,
                    beam_size=beam if search == "beam" else None, batch_size=batch,
                    greedy=False,
                )  # fmt: skip
                print(f"  exported {path} in {time.perf_counter() - start:.1f} s", flush=True)
                files[batch] = LiteRTTranslator(path, num_threads=args.threads)
            size = os.path.getsize(files[1].path)
            float32_bytes = size if quantize == "none" else float32_bytes
            row = {"search": label, "format": f"tflite {quantize}", "bytes": size}
            if float32_bytes:
                row["share"] = size / float32_bytes
            row.update(
                measure(
                    files[args.batch].translate,
                    lambda s, lite=files[1]: lite.translate([s]),
                    sentences,
                    references,
                    args.latency_sentences,
                )
            )
            row["bleu_diff"] = row["bleu"] - reference["bleu"]
            rows.append(row)
            print(f"  {label} tflite {quantize}: BLEU {row['bleu']:.2f}", flush=True)
    for row in rows:
        row["MiB"] = row["bytes"] / 2**20
    print()
    print(
        f"{args.data} {args.split} {'->'.join(common.corpus_pair(args))}, {len(sentences)} "
        f"sentences, {args.model_dir}; latency: batch 1, first {args.latency_sentences}; "
        f"throughput: batch {args.batch}"
    )
    print(common.table(rows, [*COLUMNS, ("sent_per_s", f"batch-{args.batch} sent/s", "{:.1f}")]))
    results = os.path.join(out_dir, "results.json")
    common.write_json(results, {"args": vars(args), "rows": rows})
    print(f"results: {results}")
    return rows


if __name__ == "__main__":
    main()
