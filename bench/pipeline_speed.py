"""Sentence pairs per second of the zoo.data input pipeline alone (no model).

Trains (or loads) the tokenizers, builds `zoo.data.make_dataset` on a corpus split and times:
the construction (length pre-pass), the first epoch (tokenisation in the graph) and the
following epochs (from the cache). Example:

    python bench/pipeline_speed.py --corpus multi30k --source de --target en --epochs 3
"""

import argparse
import logging
import time

import tqdm

from zoo.data import BATCHINGS, load_corpus, make_dataset
from zoo.text import KINDS, load_tokenizer, train_tokenizer


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--corpus",
        default="multi30k",
        help="corpus name for zoo.data.load_corpus (default: multi30k)",
    )
    parser.add_argument("--source", default="de", help="source language code (default: de)")
    parser.add_argument("--target", default="en", help="target language code (default: en)")
    parser.add_argument("--split", default="train", help="split to read (default: train)")
    parser.add_argument(
        "--tokenizer",
        choices=KINDS,
        default="sentencepiece",
        help="tokenizer kind trained on the split (default: sentencepiece)",
    )
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=8000,
        help="vocabulary size of each trained tokenizer (default: 8000)",
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
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per batch (default: 64)")
    parser.add_argument(
        "--token-budget",
        type=int,
        default=None,
        help="token-budget batches instead of --batch-size pairs (default: off)",
    )
    parser.add_argument(
        "--max-length",
        type=int,
        default=50,
        help="drop pairs with more tokens on either side (default: 50)",
    )
    parser.add_argument(
        "--batching",
        choices=BATCHINGS,
        default="pools",
        help="make_dataset's grouping of pairs into batches: sorted pools, length buckets "
        "(needed by --token-budget) or plain shuffled batches (default: pools)",
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
        help="epochs to time; the first one fills the cache (default: 3)",
    )
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    corpus = load_corpus(args.corpus, args.source, args.target, args.split)
    if args.limit:
        corpus = corpus.take(args.limit)
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
