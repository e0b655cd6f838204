r"""Hyperparameter search over the attention variants and sizes of both papers (keras-tuner).

    python recipes/tune.py --tuner bayesian --objective bleu --max-trials 20 --epochs 2 \
        --size base --fix optimizer=adam --directory runs/tune

The space (see `zoo.tuning.space`): attention (bahdanau, luong_global_{dot,general,concat,
location}, luong_local_{m,p}_{dot,general}), local window D, input feeding, embedding and
hidden sizes (around the --size preset), layers, dropout, optimizer and learning rate.
Rerun the same command to resume: finished trials are kept, not repeated. At the end it
prints the trials sorted by objective and writes <directory>/trials.csv,
<directory>/objective_by_attention.png and <directory>/best/ (model.keras, tokenizers).
"""
# ruff: noqa: E402  (the imports that load TensorFlow follow its quiet start)

import zoo_startup

zoo_startup.quiet_tensorflow_start()  # first: no CUDA start-up lines on a CPU-only machine

import argparse
import functools
import sys

from zoo import tuning
from zoo.checks import seed_int
from zoo.data.registry import corpora_help
from zoo.errors import DEBUG_HELP, exit_on_user_error
from zoo.tuning import space
from zoo.workflow.arguments import positive_int
from zoo.workflow.flags import library_default, resolve_languages


def parser():
    p = argparse.ArgumentParser(
        prog="recipes/tune.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--data",
        default=library_default(tuning.tune, "data"),
        help=f"{corpora_help()}; local files under $ZOO_DATA_DIR (default: %(default)s)",
    )
    p.add_argument(
        "--source-lang", default=None, help="source language code (default: the corpus's)"
    )
    p.add_argument(
        "--target-lang", default=None, help="target language code (default: the corpus's)"
    )
    p.add_argument(
        "--tuner",
        choices=tuning.TUNERS,
        default=library_default(tuning.tune, "tuner"),
        help="search algorithm: random search, Hyperband (needs --epochs >= 2: it compares "
        "configurations after few epochs and trains the best longer) or Bayesian "
        "optimisation (Gaussian process; needs scikit-learn). Default: %(default)s.",
    )
    p.add_argument(
        "--objective",
        choices=("loss", "bleu"),
        default=library_default(tuning.tune, "objective"),
        help="what to optimise: loss = validation cross-entropy per token (minimised); bleu = "
        "sacreBLEU (13a, cased) of greedy translations of the validation slice after each "
        "trial's training (maximised). Default: %(default)s.",
    )
    p.add_argument(
        "--max-trials",
        type=positive_int,
        default=library_default(tuning.tune, "max_trials"),
        help="configurations to try in all, counting those of an earlier run in the same "
        "--directory (default %(default)s).",
    )
    p.add_argument(
        "--epochs",
        type=positive_int,
        default=library_default(tuning.tune, "epochs"),
        help="epochs per trial (Hyperband: the most a configuration gets). Default %(default)s.",
    )
    p.add_argument(
        "--steps-per-trial",
        type=positive_int,
        default=library_default(tuning.tune, "steps_per_trial"),
        help="train each trial for this many batches in all (spread over --epochs) instead "
        "of whole passes over the training data.",
    )
    p.add_argument(
        "--size",
        choices=space.SIZES,
        default=library_default(tuning.tune, "size"),
        help="preset sizes the space is built around: embedding and hidden sizes are "
        f"searched at half, once and twice the preset's ({space.sizes_help()}; tiny is for "
        "tests). Default: %(default)s.",
    )
    p.add_argument(
        "--fix",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="hold one dimension fixed; repeatable. Names: "
        + ", ".join(space.DIMENSIONS)
        + ". E.g. --fix attention=luong_global_general --fix units=64 --fix "
        "input_feeding=false. Attention values: " + ", ".join(space.ATTENTIONS) + ".",
    )
    p.add_argument(
        "--directory",
        default=library_default(tuning.tune, "directory"),
        help="where the search is written and resumed from (default %(default)s).",
    )
    p.add_argument(
        "--train-limit",
        type=positive_int,
        default=library_default(tuning.tune, "train_limit"),
        help="use only the first N training pairs (default: all).",
    )
    p.add_argument(
        "--eval-limit",
        type=positive_int,
        default=library_default(tuning.tune, "eval_limit"),
        help="use only the first N validation pairs for the objective (default %(default)s).",
    )
    p.add_argument(
        "--vocab-size",
        type=positive_int,
        default=library_default(tuning.tune, "vocab_size"),
        help="SentencePiece vocabulary size per language, trained on the training slice "
        "(default %(default)s; use a few hundred with a small --train-limit).",
    )
    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=library_default(tuning.tune, "batch_size"),
        help="sentence pairs per batch (%(default)s).",
    )
    p.add_argument(
        "--max-length",
        type=positive_int,
        default=library_default(tuning.tune, "max_length"),
        help="drop training pairs with a side longer than this many tokens (default %(default)s).",
    )
    p.add_argument(
        "--seed",
        type=seed_int,
        default=library_default(tuning.tune, "seed"),
        help="seed of the tuner, data order and weights (%(default)s).",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars or trial summaries.")
    p.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    return p


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    try:
        fixed = space.parse_fixed(args.fix)
    except ValueError as error:
        p.error(str(error))
    try:
        source_lang, target_lang = resolve_languages(args.data, args.source_lang, args.target_lang)
    except ValueError as error:
        p.error(str(error))
    search = functools.partial(
        tuning.tune,
        args.data,
        source_lang,
        target_lang,
        tuner=args.tuner,
        objective=args.objective,
        max_trials=args.max_trials,
        epochs=args.epochs,
        steps_per_trial=args.steps_per_trial,
        size=args.size,
        fixed=fixed,
        directory=args.directory,
        train_limit=args.train_limit,
        eval_limit=args.eval_limit,
        seed=args.seed,
        vocab_size=args.vocab_size,
        batch_size=args.batch_size,
        max_length=args.max_length,
        verbose=0 if args.quiet else 1,
    )
    result = exit_on_user_error(search, prog=p.prog, debug=args.debug)
    return 0 if result["rows"] else 1


if __name__ == "__main__":
    sys.exit(main())
