"""How fast a preset learns: the training loss over its first steps on Multi30k, and the
validation perplexity after them.

A cheap way to compare initialisations, optimizers and loss normalisations before a long
run (the Luong models' plateau in bench/RESULTS.md, "Tuning", was found this way). It runs
the one training path (`zoo.training.train`) on the batches the recipes use (SentencePiece
8000 tokenizers cached under bench/out/, sorted pools, batches of 64) and prints the mean
loss of every 50 steps.

    python bench/early_learning.py bahdanau_rnnsearch --steps 200
    python bench/early_learning.py luong_global_general --steps 150 --set input_feeding=false
    python bench/early_learning.py luong_global_general --set init_scale=0 --optimizer luong \
        --loss-normalization sentences
"""

import os
import tempfile
import time

import common

from zoo.models.presets import SIZES
from zoo.training import LOSS_NORMALIZATIONS, OPTIMIZERS


def _value(text):
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def _overrides(pairs):
    result = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set takes NAME=VALUE, got {pair!r}")
        result[name] = _value(value)
    return result


def main(argv=None):
    parser = common.parser(__doc__)
    parser.add_argument(
        "preset", help="a zoo.models preset, e.g. luong_local_p_general (suffixes as --presets')"
    )
    parser.add_argument(
        "--steps", type=int, default=150, help="training steps (default: %(default)s)"
    )
    parser.add_argument(
        "--size", default="base", choices=SIZES, help="preset size (default: %(default)s)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a preset override, e.g. input_feeding=false, init_scale=0 (repeatable)",
    )
    parser.add_argument(
        "--optimizer",
        default=None,
        choices=OPTIMIZERS,
        help="the recipes' optimizer settings (default: those of the preset's family, "
        "zoo.training.training_profile)",
    )
    parser.add_argument("--learning-rate", type=float, default=None, help="initial rate")
    parser.add_argument("--clipnorm", type=float, default=None, help="global norm clipping")
    parser.add_argument(
        "--loss-normalization",
        default=LOSS_NORMALIZATIONS[0],
        choices=LOSS_NORMALIZATIONS,
        help="the loss's mean over tokens or over sentences (default: %(default)s)",
    )
    common.add_batch_flags(parser)
    parser.add_argument(
        "--val-pairs", type=int, default=512, help="validation pairs scored (default: %(default)s)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    args = parser.parse_args(argv)

    import keras
    import numpy as np

    import zoo
    from zoo import training
    from zoo.data import make_dataset

    keras.utils.set_random_seed(args.seed)  # before the tokenizers (`common.build_model`)
    source_tokenizer, target_tokenizer = common.tokenizers(quiet=True)
    train, val = common.bench_corpus("train"), common.bench_corpus("val")

    def dataset(source, target, shuffle, batching):
        return make_dataset(
            source, target, source_tokenizer, target_tokenizer, batch_size=args.batch_size,
            max_length=args.max_length, shuffle=shuffle, seed=args.seed, batching=batching,
        )  # fmt: skip

    train_data = dataset(train.source, train.target, True, args.batching)
    n = args.val_pairs
    val_data = dataset(val.source[:n], val.target[:n], False, "plain")
    vocab_sizes = (source_tokenizer.vocab_size, target_tokenizer.vocab_size)
    model = common.build_model(args.preset, args.size, vocab_sizes, overrides=_overrides(args.set))
    family = zoo.models.family(common.parse_preset(args.preset)[0])
    args.optimizer = args.optimizer or training.training_profile(family)["optimizer"]
    optimizer = training.make_optimizer(
        args.optimizer,
        steps_per_epoch=len(train_data),
        dropout=zoo.models.model_dropout(model),
        learning_rate=args.learning_rate,
        clipnorm=args.clipnorm,
    )
    started, losses = time.perf_counter(), []

    class Report(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            losses.append(logs["loss"])
            if logs["step"] % 50 == 0:
                print(
                    f"step {logs['step']}: mean loss of the last 50 steps "
                    f"{np.mean(losses[-50:]):.3f} ({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )

    with tempfile.TemporaryDirectory() as out:
        summary = training.train(
            model,
            train_data,
            val_data,
            out_dir=os.path.join(out, "run"),
            optimizer=optimizer,
            max_steps=args.steps,
            steps_per_epoch=len(train_data),
            loss_normalization=args.loss_normalization,
            callbacks=[Report()],
            resume=False,
            verbose=0,
        )
    print(
        f"{args.preset} {' '.join(args.set)} optimizer {args.optimizer} "
        f"(lr {args.learning_rate or 'default'}, loss per {args.loss_normalization}): "
        f"after {summary['steps']} steps validation perplexity {summary['val_ppl']:.2f} "
        f"({time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
