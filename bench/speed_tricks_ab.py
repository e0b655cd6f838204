"""A/B of zoo's hand-written speed tricks on the whole training step, in one process.

The variants (each traced with its switch in place, then timed in alternating blocks, so
that the machine's drift hits them alike):
- `shipped`: the code as it is (the loops' `matmul_pretransposed`);
- `plain_matmul`: `ops.matmul(x, kernel)` where the loops use `matmul_pretransposed`.
The hand-written LSTM backward and the fused Adam/Adadelta updates were measured here on
2026-12-01 (1.03x and 0.82x) and removed; bench/RESULTS.md, "Training speed", keeps their
figures.
The step is `zoo.training.train_step.make_train_step`, what `zoo.training.train` runs, on
real Multi30k batches of 64 pairs (8k SentencePiece vocabularies, sorted pools). Prints
the median step time of each variant and its ratio to `shipped` (> 1: the trick pays).

    python bench/speed_tricks_ab.py                       # luong_global_general, base
    python bench/speed_tricks_ab.py --preset bahdanau_rnnsearch --rounds 6
    python bench/speed_tricks_ab.py --preset luong_global_general:nofeed
"""

import argparse
import contextlib
import statistics
import time

import common

from zoo.data import DEFAULT_BATCH_SIZE

VARIANTS = ("shipped", "plain_matmul")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--preset",
        default="luong_global_general",
        help="a zoo.models preset, with suffixes: "
        + common.SUFFIX_HELP
        + " (default: %(default)s)",
    )
    p.add_argument("--size", default="base", help="preset size (default: %(default)s)")
    p.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"comma-separated subset of {', '.join(VARIANTS)} (default: %(default)s)",
    )
    p.add_argument(
        "--rounds", type=int, default=4, help="alternating rounds (default: %(default)s)"
    )
    p.add_argument(
        "--steps",
        type=int,
        default=6,
        help="timed steps per variant per round (default: %(default)s)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        help="pairs per batch (default: %(default)s)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="batch shuffling seed (default: %(default)s)"
    )
    return p.parse_args(argv)


@contextlib.contextmanager
def switched(variant):
    """The module switch of `variant` (zoo.models.recurrence's public flags), in place while
    its step is traced."""
    from zoo.models import recurrence

    saved = recurrence.PRETRANSPOSED_MATMUL
    recurrence.PRETRANSPOSED_MATMUL = variant != "plain_matmul"
    try:
        yield
    finally:
        recurrence.PRETRANSPOSED_MATMUL = saved


def batches(args, count):
    """`count` real Multi30k training batches (tensors) and the vocabulary sizes."""
    import tensorflow as tf

    from zoo.data import make_dataset

    source, target = common.tokenizers()
    corpus = common.bench_corpus("train")
    dataset = make_dataset(
        corpus.source, corpus.target, source, target, batch_size=args.batch_size, seed=args.seed
    )
    taken = [(x, y) for x, y in dataset.take(count)]
    spec = (
        {
            "source_ids": tf.TensorSpec((None, None), tf.int32),
            "target_ids": tf.TensorSpec((None, None), tf.int32),
        },
        tf.TensorSpec((None, None), tf.int32),
    )
    return taken, (source.vocab_size, target.vocab_size), spec


def build_steps(args, variants, vocab_sizes, spec, warm):
    """One traced train step per variant (each with its own model copy and optimizer)."""
    import keras
    import tensorflow as tf

    import zoo.models
    from zoo.training.train_step import make_train_step, prepare_optimizer

    name, overrides = common.parse_preset(args.preset)
    steps = {}
    for variant in variants:
        keras.utils.set_random_seed(0)
        model = zoo.models.build(
            name, size=args.size, source_vocab_size=vocab_sizes[0],
            target_vocab_size=vocab_sizes[1], **overrides,
        )  # fmt: skip
        optimizer = prepare_optimizer("adam", model)  # zoo.training.make_optimizer("adam")
        step = make_train_step(model, optimizer)
        traced = tf.function(lambda x, y, step=step: step((x, y)), input_signature=spec)
        with switched(variant):
            for x, y in warm:  # traces with the switch in place
                traced(x, y)[0].numpy()
        steps[variant] = traced
    return steps


def main(argv=None):
    args = parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; choose from {VARIANTS}")
    data, vocab_sizes, spec = batches(args, 2 + args.steps)
    warm, timed = data[:2], data[2:]
    steps = build_steps(args, variants, vocab_sizes, spec, warm)
    times = {v: [] for v in variants}
    for _ in range(args.rounds):
        for variant in variants:
            for x, y in timed:
                start = time.perf_counter()
                steps[variant](x, y)[0].numpy()
                times[variant].append(time.perf_counter() - start)
    base = statistics.median(times[variants[0]])
    rows = [
        {
            "variant": v,
            "median_ms": 1e3 * statistics.median(times[v]),
            "mean_ms": 1e3 * statistics.fmean(times[v]),
            "ratio": statistics.median(times[v]) / base,
        }
        for v in variants
    ]
    print(
        f"{args.preset} ({args.size}), {args.rounds} rounds x {args.steps} steps per variant, "
        f"batches of {args.batch_size}; ratio = median step / {variants[0]}'s"
    )
    print(
        common.table(
            rows,
            [
                ("variant", "variant", "{}"),
                ("median_ms", "median ms", "{:.0f}"),
                ("mean_ms", "mean ms", "{:.0f}"),
                ("ratio", "x shipped", "{:.3f}"),
            ],
        )
    )


if __name__ == "__main__":
    main()
