"""Sentence pairs per second of the zoo.data input pipeline alone (no model).

In memory (default): trains (or loads) the tokenizers, builds `zoo.data.make_dataset` on a
corpus split and times the construction (length pre-pass), the first epoch (tokenisation in
the graph) and the following epochs (from the cache):

    python bench/pipeline_speed.py --data multi30k --source-lang de --target-lang en --epochs 3

Streamed, on a synthetic corpus of N pairs (the scale test; figures in bench/RESULTS.md,
"Data pipeline and scale"): writes N pairs made from the split's
sentences, each side the first half of one sentence's words and the second half of
another's (so that they are not repeats; the two sides stay aligned), as plain or gzip
files, then times `zoo.data.count_stream` (the one counting pass, cached beside the files),
the time to the first batch of `stream_dataset` and the steady rate over the epoch, and
prints the process' peak resident memory:

    python bench/pipeline_speed.py --synthetic 1000000 --compression gzip \\
        --source-tokenizer DIR --target-tokenizer DIR
"""

import gzip
import logging
import os
import random
import time

import common  # quiet TensorFlow start, repository on the path
import tqdm

# isort: split

from zoo.data import (  # noqa: E402
    DEFAULT_SHUFFLE_BUFFER,
    count_stream,
    load_corpus,
    make_dataset,
    open_stream,
    stream_dataset,
)
from zoo.data.registry import find_corpus  # noqa: E402
from zoo.text import (  # noqa: E402
    DEFAULT_KIND,
    DEFAULT_VOCAB_SIZE,
    KINDS,
    load_tokenizer,
    train_tokenizer,
)


def parse_args(argv=None):
    parser = common.parser(__doc__)
    common.add_corpus_flags(parser, split="train")
    parser.add_argument(
        "--tokenizer",
        choices=KINDS,
        default=DEFAULT_KIND,
        help="tokenizer kind trained on the split (default: %(default)s)",
    )
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=DEFAULT_VOCAB_SIZE,
        help="vocabulary size of each trained tokenizer (default: %(default)s)",
    )
    parser.add_argument(
        "--source-tokenizer",
        default=None,
        help="directory of a saved source tokenizer (skips training)",
    )
    parser.add_argument(
        "--target-tokenizer",
        default=None,
        help="directory of a saved target tokenizer (skips training)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="use only the first N pairs of the split (default: all)",
    )
    common.add_batch_flags(parser)
    parser.add_argument(
        "--token-budget",
        type=int,
        default=None,
        help="token-budget batches instead of --batch-size pairs (default: off)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="tokenize again every epoch instead of caching"
    )
    parser.add_argument(
        "--nondeterministic", action="store_true", help="allow out-of-order parallel maps (faster)"
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=3,
        help="epochs to time; the first one fills the cache (default: %(default)s)",
    )
    parser.add_argument(
        "--synthetic",
        type=int,
        default=None,
        metavar="N",
        help="stream a synthetic corpus of N pairs recombined from --data's split instead "
        "(written once into --synthetic-dir)",
    )
    parser.add_argument(
        "--synthetic-dir",
        default="/tmp/zoo-synthetic",
        help="where the synthetic files go (default: %(default)s)",
    )
    parser.add_argument(
        "--compression",
        choices=("none", "gzip"),
        default="gzip",
        help="synthetic files plain or gzip-compressed (default: %(default)s)",
    )
    parser.add_argument(
        "--shuffle-buffer",
        type=int,
        default=DEFAULT_SHUFFLE_BUFFER,
        help="streamed: stream_dataset's shuffle buffer, in pairs (default: %(default)s)",
    )
    parser.add_argument(
        "--max-batches",
        type=int,
        default=None,
        help="streamed: stop the timed epoch after this many batches (default: the epoch)",
    )
    return parser.parse_args(argv)


def _tokenizers(args, corpus):
    start = time.perf_counter()
    tokenizers = []
    for directory, sentences in (
        (args.source_tokenizer, corpus.source),
        (args.target_tokenizer, corpus.target),
    ):
        if directory:
            tokenizers.append(load_tokenizer(directory))
        else:
            tokenizers.append(train_tokenizer(args.tokenizer, sentences, args.vocab_size))
    print(
        f"tokenizers ready in {time.perf_counter() - start:.1f} s "
        f"(vocab {tokenizers[0].vocab_size} / {tokenizers[1].vocab_size})"
    )
    return tokenizers


def _recombined(sentence_a, sentence_b):
    a, b = sentence_a.split(), sentence_b.split()
    return " ".join(a[: (len(a) + 1) // 2] + b[len(b) // 2 :])


def _open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "wt", encoding="utf-8", compresslevel=1)
    return open(path, "w", encoding="utf-8")


def write_synthetic(corpus, count, directory, compression, seed=0):
    """Writes `count` recombined pairs as directory/train.{src,tgt}[.gz] (unless they are
    there already); returns the corpus prefix `directory/{split}`."""
    os.makedirs(directory, exist_ok=True)
    suffix = ".gz" if compression == "gzip" else ""
    paths = [os.path.join(directory, f"train.{lang}{suffix}") for lang in ("src", "tgt")]
    marker = os.path.join(directory, f"synthetic{suffix}.json")
    wanted = {"pairs": count, "compression": compression, "seed": seed}
    if all(os.path.isfile(p) for p in [*paths, marker]) and common.read_json(marker) == wanted:
        return os.path.join(directory, "{split}")
    for other in ("", ".gz"):  # open_stream reads the plain file when both exist
        for lang in ("src", "tgt"):
            path = os.path.join(directory, f"train.{lang}{other}")
            if other != suffix and os.path.exists(path):
                os.remove(path)
    rng = random.Random(seed)
    n = len(corpus)
    start = time.perf_counter()
    with _open_text(paths[0]) as fs, _open_text(paths[1]) as ft:
        for _ in tqdm.trange(count, desc="writing pairs", leave=False, disable=None):
            i, j = rng.randrange(n), rng.randrange(n)
            fs.write(_recombined(corpus.source[i], corpus.source[j]) + "\n")
            ft.write(_recombined(corpus.target[i], corpus.target[j]) + "\n")
    common.write_json(marker, wanted)
    sizes = ", ".join(f"{os.path.getsize(p) / 2**20:.0f} MiB" for p in paths)
    print(f"wrote {count:,} pairs in {time.perf_counter() - start:.0f} s ({sizes})")
    return os.path.join(directory, "{split}")


def _counts(args, stream, tokenizers):
    path = os.path.join(args.synthetic_dir, f"counts.{args.compression}.{args.max_length}.json")
    if os.path.isfile(path):
        print(f"count_stream: cached in {path}")
        return common.read_json(path)
    start = time.perf_counter()
    counts = count_stream(stream, *tokenizers, args.max_length)
    seconds = time.perf_counter() - start
    common.write_json(path, counts)
    print(
        f"count_stream: {counts['pairs']:,} pairs in {seconds:.1f} s "
        f"= {counts['pairs'] / seconds:,.0f} pairs/s (kept {counts['kept']:,})"
    )
    return counts


def write_evaluation_splits(args, directory):
    """The corpus' validation and test splits as directory/{val,test}.{src,tgt}: with them a
    recipe runs on the synthetic corpus (`--data DIR/{split} --source-lang src --target-lang
    tgt`). Only for a corpus of the registry (files have no split names to copy)."""
    info = find_corpus(args.data)
    if info is None:
        return
    for split, name in (("val", info.validation_split), ("test", info.test_split)):
        corpus = load_corpus(args.data, *common.corpus_pair(args), name)
        for lang, lines in (("src", corpus.source), ("tgt", corpus.target)):
            with open(os.path.join(directory, f"{split}.{lang}"), "w", encoding="utf-8") as f:
                f.writelines(line + "\n" for line in lines)


def main_streamed(args, corpus):
    prefix = write_synthetic(corpus, args.synthetic, args.synthetic_dir, args.compression)
    write_evaluation_splits(args, args.synthetic_dir)
    tokenizers = _tokenizers(args, corpus)
    stream = open_stream(prefix, "src", "tgt", "train")
    counts = _counts(args, stream, tokenizers)
    print(f"peak RSS before the pipeline: {common.peak_memory_mib() / 1024:.2f} GiB")
    start = time.perf_counter()
    dataset = stream_dataset(
        stream,
        *tokenizers,
        batch_size=args.batch_size,
        max_length=args.max_length,
        batching=args.batching,
        shuffle_buffer=args.shuffle_buffer,
        counts=counts,
        deterministic=not args.nondeterministic,
    )
    iterator = iter(dataset)
    next(iterator)
    print(f"first batch after {time.perf_counter() - start:.1f} s ({len(dataset):,} batches)")
    total = len(dataset) if args.max_batches is None else min(args.max_batches, len(dataset))
    pairs, start = 0, time.perf_counter()
    for _ in tqdm.trange(total - 1, desc="epoch", leave=False, disable=None):
        features, _ = next(iterator)
        pairs += int(features["source_ids"].shape[0])
    seconds = time.perf_counter() - start
    print(
        f"steady: {pairs:,} pairs in {seconds:.1f} s = {pairs / seconds:,.0f} pairs/s "
        f"({total - 1:,} batches after the first)"
    )
    print(f"peak RSS: {common.peak_memory_mib() / 1024:.2f} GiB")


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    corpus = common.corpus_split(args, args.limit)
    if args.synthetic:
        return main_streamed(args, corpus)
    tokenizers = _tokenizers(args, corpus)

    start = time.perf_counter()
    dataset = make_dataset(
        corpus.source,
        corpus.target,
        *tokenizers,
        batch_size=args.batch_size,
        max_length=args.max_length,
        shuffle=True,
        seed=0,
        batching=args.batching,
        token_budget=args.token_budget,
        deterministic=not args.nondeterministic,
        cache=not args.no_cache,
    )
    print(f"make_dataset: {time.perf_counter() - start:.2f} s, {len(dataset)} batches per epoch")
    for epoch in range(1, args.epochs + 1):
        pairs = 0
        start = time.perf_counter()
        for features, _ in tqdm.tqdm(
            dataset, total=len(dataset), desc=f"epoch {epoch}", leave=False, disable=None
        ):
            pairs += int(features["source_ids"].shape[0])
        seconds = time.perf_counter() - start
        print(f"epoch {epoch}: {pairs} pairs in {seconds:.2f} s = {pairs / seconds:,.0f} pairs/s")


if __name__ == "__main__":
    main()
