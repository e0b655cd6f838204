"""The recipes' training flags: optimizer, schedule, batches, precision, distribution,
gradient accumulation, the validation metric and early stopping, subword regularisation,
checkpoints and seeds.

Their defaults are the training profiles of `zoo.training.profiles` (the recipes' defaults
and, with `--optimizer paper`, the paper's own settings); `zoo.workflow.defaults` fills
them in after parsing, and the help texts render them.
"""

import argparse

from zoo.checks import (
    argparse_number,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    seed_int,
)
from zoo.constants import CHECKPOINT_DIR
from zoo.data import make_dataset
from zoo.errors import UsageError
from zoo.text import SAMPLING_KINDS
from zoo.training import (
    AUTO,
    LOSS_NORMALIZATIONS,
    PRECISIONS,
    STRATEGIES,
    TIME_PLAN_FILE,
    VALIDATION_METRICS,
    ValidationBleu,
    average_checkpoints,
    make_strategy,
    train,
)
from zoo.training.optimizers import (
    OPTIMIZER_SETTINGS,
    default_loss_normalization,
    format_number,
    own_decay_after,
)
from zoo.training.profiles import OPTIMIZER_DESCRIPTIONS, training_profile
from zoo.training.train_step import MAX_ACCUMULATE_STEPS
from zoo.translator import CONFIG_FILE
from zoo.workflow.flag_types import library_default, rate

OPTIMIZER_CHOICES = ("adam", "paper", "bahdanau", "luong")


def add_training_flags(parser, family):
    """The "training" group: optimizer, schedule and checkpoint flags."""
    training = parser.add_argument_group("training")
    add_optimizer_flags(training, family)
    add_schedule_flags(training, family)
    add_validation_flags(training)
    add_subword_flags(training)
    add_checkpoint_flags(training)
    return training


def add_subword_flags(training):
    """--subword-regularization."""
    training.add_argument(
        "--subword-regularization",
        type=non_negative_float,
        default=library_default(make_dataset, "subword_regularization"),
        metavar="ALPHA",
        help="subword regularisation (Kudo 2018): each time a training pair is read, sample "
        "its SentencePiece segmentation (unigram sampling over all segmentations, "
        "probabilities to the power ALPHA: smaller is more varied; Kudo used 0.1 to 0.5). "
        "Validation, test and translation use the exact segmentation. Needs --tokenizer "
        "sentencepiece (a unigram model) and --batching pools or plain. SentencePiece's "
        "sampler takes no seed: two runs with the same --seed differ. 0 = off (default: "
        "%(default)g; measured results: docs/training.md)",
    )


def check_training_flags(args):
    """Refuses the combinations of training flags that cannot run (a `UsageError` naming
    them), when the command line is parsed: before the run's folder is written."""
    if args.validation_bleu_limit is not None and args.validation_metric != "bleu":
        raise UsageError("--validation-bleu-limit applies to --validation-metric bleu.")
    alpha = args.subword_regularization
    if alpha > 0 and args.batching == "buckets":
        raise UsageError(
            f"--subword-regularization {alpha:g} changes the pairs' lengths each epoch, and "
            "with them the number of batches of length buckets; use --batching pools or plain."
        )
    if alpha > 0 and args.tokenizer not in SAMPLING_KINDS:
        raise UsageError(
            f"--subword-regularization {alpha:g} samples the segmentations of a SentencePiece "
            f"unigram model; --tokenizer {args.tokenizer} has one segmentation per text. Use "
            f"--tokenizer {' or '.join(SAMPLING_KINDS)}, or leave subword regularisation off."
        )


def subword_regularization(args, tokenizers):
    """--subword-regularization, checked against the run's tokenizers (a `UsageError` naming
    what does not fit; `check_training_flags` has checked the flags)."""
    alpha = args.subword_regularization
    for tokenizer in tokenizers if alpha > 0 else ():
        try:
            tokenizer.sampling_tokenizer(alpha)
        except ValueError as error:
            raise UsageError(f"--subword-regularization {alpha:g}: {error}") from None
    return alpha


def add_validation_flags(training):
    """Gradient accumulation, the validation metric and early stopping."""
    training.add_argument(
        "--accumulate-steps",
        type=argparse_number(
            int,
            1,
            False,
            f"an integer from 1 to {MAX_ACCUMULATE_STEPS}",
            maximum=MAX_ACCUMULATE_STEPS,
        ),
        default=library_default(train, "accumulate_steps"),
        metavar="N",
        help="sum the gradients of N batches before each optimizer update: the update of one "
        "batch N times larger (--batch-size times N pairs, its loss normalisation and "
        "clipping) on a device that cannot hold it. Steps count updates: --max-steps, "
        "--checkpoint-every and the learning-rate halving; an epoch's last step takes the "
        f"batches left over. One device only (default: %(default)s; at most "
        f"{MAX_ACCUMULATE_STEPS})",
    )
    training.add_argument(
        "--validation-metric",
        choices=tuple(VALIDATION_METRICS),
        default=library_default(train, "validation_metric"),
        help="what judges the model after each epoch: 'loss' (the validation split's "
        "cross-entropy) or 'bleu' (the BLEU of the validation split translated with greedy "
        "search, see --validation-bleu-limit). model.keras is the best model by it (the one "
        "--average-last compares with), and --early-stopping follows it (default: "
        "%(default)s)",
    )
    training.add_argument(
        "--early-stopping",
        type=positive_int,
        default=library_default(train, "early_stopping"),
        metavar="PATIENCE",
        help="stop training after PATIENCE epochs in a row without improvement of "
        "--validation-metric (default: off: all --epochs are trained). A run that stopped "
        "stays stopped when re-run; --no-resume starts over",
    )
    training.add_argument(
        "--validation-bleu-limit",
        type=positive_int,
        default=library_default(ValidationBleu, "limit"),
        metavar="N",
        help="with --validation-metric bleu: translate only the first N validation sentences "
        "after each epoch (default: the whole validation split)",
    )


def training_options(args, val, tokenizers):
    """`zoo.training.train`'s keyword arguments of the flags of `add_validation_flags`:
    accumulation, metric, early stopping and, with --validation-metric bleu, the
    `ValidationBleu` of the validation `Corpus` `val` (translated in batches of
    --eval-batch-size)."""
    bleu = None
    if args.validation_metric == "bleu":
        bleu = ValidationBleu(
            *tokenizers, val.source, val.target, limit=args.validation_bleu_limit,
            batch_size=args.eval_batch_size,
        )  # fmt: skip
    return dict(
        accumulate_steps=args.accumulate_steps,
        validation_metric=args.validation_metric,
        early_stopping=args.early_stopping,
        validation_bleu=bleu,
    )


def by_optimizer(describe, skip=()):
    """ "VALUE for NAME, ..." over the optimizer names, merging the names of equal values:
    the optimizers' own defaults (`zoo.training.optimizers.OPTIMIZER_SETTINGS`) in a help
    text."""
    names = {}
    for name in OPTIMIZER_SETTINGS:
        if name in skip:
            continue
        names.setdefault(describe(name), []).append(f"'{name}'")
    return ", ".join(f"{value} for {' and '.join(group)}" for value, group in names.items())


def learning_rate(name):
    return format_number(OPTIMIZER_SETTINGS[name]["learning_rate"])


def own_rule(name):
    plain, with_dropout = own_decay_after(name), own_decay_after(name, dropout=1e-9)
    if plain is None:
        return "none"
    return f"{plain}" if with_dropout == plain else f"{plain} ({with_dropout} with dropout)"


def optimizer_help(family):
    ours, paper = training_profile(family), training_profile(family, paper=True)
    default, papers = ours["optimizer"], paper["optimizer"]
    return (
        f"'{default}' (default): {OPTIMIZER_DESCRIPTIONS[default]}, batches of "
        f"{ours['batch_size']}, {ours['epochs']} epochs, halving after epoch "
        f"{ours['decay_after']}, at most {ours['max_minutes']:g} minutes. 'paper': the paper's "
        f"{OPTIMIZER_DESCRIPTIONS[papers]}, batches of {paper['batch_size']}, "
        f"{paper['epochs']} epochs, no time limit, the loss normalised per "
        f"{default_loss_normalization(papers)[:-1]} (measured on Multi30k: docs/papers.md). "
        "'bahdanau' and 'luong' pick either paper's optimizer (with the default batch size and "
        "epochs). Flags given explicitly override all of these"
    )


def add_optimizer_flags(training, family):
    ours = training_profile(family)
    normalizations = by_optimizer(default_loss_normalization)
    own_rules = by_optimizer(own_rule, skip=[ours["optimizer"]])
    training.add_argument(
        "--optimizer",
        choices=OPTIMIZER_CHOICES,
        default=ours["optimizer"],
        help=optimizer_help(family),
    )
    training.add_argument(
        "--learning-rate",
        type=positive_float,
        default=None,
        help=f"initial learning rate (default: the optimizer's: {by_optimizer(learning_rate)})",
    )
    training.add_argument(
        "--loss-normalization",
        choices=LOSS_NORMALIZATIONS,
        default=None,
        help="divide each batch's summed cross-entropy by its target tokens (the mean per "
        "token) or by its sentences (a sentence's summed loss: what the papers' SGD at "
        "learning rate 1.0 and Adadelta minimised; its gradient is about the mean target "
        f"length times larger). Default: the optimizer's: {normalizations}",
    )
    training.add_argument(
        "--label-smoothing",
        type=rate,
        default=library_default(train, "label_smoothing"),
        metavar="EPS",
        help="train on label-smoothed cross-entropy: EPS of each target's probability spread "
        "over the vocabulary (default: %(default)g, as in the papers; 0.1 is common). "
        "Perplexity and model selection use the plain cross-entropy",
    )
    training.add_argument(
        "--decay-after",
        type=non_negative_int,
        default=None,
        metavar="EPOCHS",
        help="halve the learning rate every epoch after this many epochs (Luong et al. "
        f"section 4.1's rule, for any --optimizer; default: {ours['decay_after']} with "
        f"'{ours['optimizer']}', else the optimizer's own rule: {own_rules})",
    )


def add_schedule_flags(training, family):
    """Epochs, limits, batches, precision and distribution."""
    ours, paper = training_profile(family), training_profile(family, paper=True)
    training.add_argument(
        "--epochs",
        type=positive_int,
        default=None,
        help=f"passes over the training data (default: {ours['epochs']}; {paper['epochs']} "
        "with --optimizer paper)",
    )
    training.add_argument(
        "--max-steps",
        type=positive_int,
        default=None,
        help="stop after this many optimizer steps in total",
    )
    training.add_argument(
        "--max-minutes",
        type=non_negative_float,
        default=None,
        help="stop training after this many minutes of wall-clock time in this run (then "
        "validate, checkpoint, evaluate and export as usual; a re-run continues). When the "
        "learning rate is halved per epoch and the epochs will not all fit, the schedule "
        "shrinks to the epochs that fit, estimated from the time of this run's second "
        "epoch: the halving starts earlier, the full-rate epochs keeping their "
        f"share. The plan is kept in {CHECKPOINT_DIR}/{TIME_PLAN_FILE}: a re-run keeps it, "
        "--no-resume deletes it; none is made with --strategy multiworker. "
        f"Default: {ours['max_minutes']:g}; no limit with --optimizer paper; 0 = no limit",
    )
    training.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        help=f"sentence pairs per batch (default: {ours['batch_size']}; "
        f"{paper['batch_size']} with --optimizer paper, as in the paper)",
    )
    training.add_argument(
        "--precision",
        choices=(*PRECISIONS, AUTO),
        default="float32",
        help="mixed_float16 computes in float16 on GPUs, with loss scaling; mixed_bfloat16 in "
        "bfloat16; auto: mixed_bfloat16 on a CPU with AMX bfloat16 units, else float32, the "
        "log says which and why (default: %(default)s)",
    )
    training.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=library_default(make_strategy, "name"),
        help="default (one device), mirrored (all GPUs of this machine) or multiworker "
        "(MultiWorkerMirroredStrategy; cluster from TF_CONFIG, run the command on each worker)",
    )


def add_checkpoint_flags(training):
    """Checkpoints, averaging, resuming, seeds and compilation."""
    training.add_argument(
        "--checkpoint-every",
        type=positive_int,
        default=library_default(train, "checkpoint_every"),
        help="write a checkpoint every N steps (and at each epoch end); a crash loses at most "
        "N steps (default: %(default)s)",
    )
    training.add_argument(
        "--keep-checkpoints",
        type=positive_int,
        default=library_default(train, "keep_checkpoints"),
        help="how many of the newest checkpoints to keep (default: %(default)s); `python -m "
        "zoo average OUT --last N` averages the last N of them into one model",
    )
    training.add_argument(
        "--average-last",
        type=non_negative_int,
        default=library_default(average_checkpoints, "last"),
        metavar="N",
        help="after training, average the weights of the last N checkpoints and deliver that "
        "model instead of the best one by --validation-metric when it scores a higher "
        "validation BLEU with the run's beam search (default: %(default)s, at most --keep-checkpoints; "
        f"0 or 1: off, the papers' way); {CONFIG_FILE} names the file delivered",
    )
    training.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="continue from the last checkpoint in --out (default); --no-resume starts over",
    )
    training.add_argument(
        "--seed", type=seed_int, default=0, help="random seed (default: %(default)s)"
    )
    training.add_argument(
        "--deterministic",
        action="store_true",
        help="use deterministic TensorFlow ops (reproducible, slower)",
    )
    training.add_argument(
        "--jit-compile", action="store_true", help="compile the training step with XLA"
    )
