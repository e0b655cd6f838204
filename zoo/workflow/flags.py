"""The recipes' command line: their flags (model, training, data), each default rendered
from the library's, and how a preset and the flags given resolve into a run's settings.

What the recipes' flag modules share: the [0, 1) number type and the library's defaults.

The recipes' model flags (--size and the architecture switches) and their evaluation and
output flags.

An architecture switch defaults to None, "the preset's value at --size": its help text
renders the presets' values (`zoo.models.preset_arguments`), and the search flags render
`zoo.search.defaults`, so that the command line holds no default of its own.

The recipes' training flags: optimizer, schedule, batches, precision, distribution,
gradient accumulation, the validation metric and early stopping, subword regularisation,
checkpoints and seeds.

Their defaults are the training profiles of `zoo.training.settings` (the recipes' defaults
and, with `--optimizer paper`, the paper's own settings); `zoo.workflow.flags` fills
them in after parsing, and the help texts render them.

The defaults a recipe's flags leave open, filled in from the library after parsing.

- `resolve_defaults(args)`: the languages and test split (the corpus registry,
  `zoo.data.registry`), the training profile (`zoo.training.settings`: the recipes' defaults,
  or the paper's own settings with `--optimizer paper`), the loss normalisation and the
  output folder.
- `hyperparameters(args, preset)`: the preset's keyword arguments at `--size`
  (`zoo.models.presets`) with the architecture switches given on the command line.
- `recipe_preset(recipe, mode)` and `preset_switches(preset)`: the preset a recipe trains
  and the architecture switches that apply to it.

The recipes' data flags: the corpus and how it is streamed, the languages and tokenizers,
the length filter and the batching.
"""

import argparse
import inspect
import os
import re

from zoo.checks import (
    argparse_number,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    seed_int,
)
from zoo.constants import CHECKPOINT_DIR, RESERVED_TOKENS
from zoo.data import (
    BATCHINGS,
    DEFAULT_BUCKET_WIDTH,
    DEFAULT_SHUFFLE_BUFFER,
    DEFAULT_TOKENIZER_SAMPLE,
    make_dataset,
)
from zoo.data.registry import (
    CORPORA,
    DEFAULT_CORPUS,
    complete_languages,
    corpora_help,
    default_test_split,
    find_corpus,
)
from zoo.errors import DEBUG_HELP, UsageError
from zoo.layers import LocalAttention
from zoo.layers.local_attention import MODES
from zoo.models import (
    SIZES,
    attention_presets,
    family,
    preset_arguments,
    presets,
    with_tied_embeddings,
)
from zoo.models.presets import DEFAULT_VOCAB_SIZES
from zoo.search import defaults as search_defaults
from zoo.text import DEFAULT_KIND, DEFAULT_VOCAB_SIZE, KINDS, SAMPLING_KINDS
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
from zoo.training.settings import OPTIMIZER_DESCRIPTIONS, training_profile
from zoo.training.train_step import MAX_ACCUMULATE_STEPS
from zoo.translator import CONFIG_FILE
from zoo.workflow.starting_points import fine_tuning_defaults


def rate(text):
    """An argparse type: a number in [0, 1) (dropout, label smoothing)."""
    value = non_negative_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {value}")
    return value


def library_default(function, name):
    """The default of `function`'s argument `name`: a flag shows and passes the library's
    value instead of keeping a copy of it."""
    return inspect.signature(function).parameters[name].default


# Architecture switches, by the name of the preset argument they override.
ARCHITECTURE_SWITCHES = ("dropout", "reverse_source", "bidirectional", "input_feeding", "window")
DEFAULT_SWITCHES = {"bahdanau": ("dropout",), "luong": ARCHITECTURE_SWITCHES}
# The preset whose values a family's help texts show (every preset of a family shares them).
HELP_PRESET = {"bahdanau": "bahdanau_rnnsearch", "luong": "luong_global_general"}


def preset_default(family, name):
    """The preset's value of argument `name` by size, for a help text: e.g. "the preset's:
    0.3 at --size base, 0.2 at tiny and paper"."""
    by_value = {}
    for size in SIZES:
        value = preset_arguments(HELP_PRESET[family], size)[name]
        text = ("on" if value else "off") if isinstance(value, bool) else f"{value:g}"
        by_value.setdefault(text, []).append(size)
    if len(by_value) == 1:
        return f"the preset's: {next(iter(by_value))} at every --size"
    parts = [f"{text} at {' and '.join(sizes)}" for text, sizes in by_value.items()]
    return "the preset's: " + ", ".join(parts).replace(" at ", " at --size ", 1)


def dropout_help(family):
    if family == "bahdanau":
        return (
            "dropout on the source and target embeddings and on the maxout output t_i, in "
            f"training (default: {preset_default(family, 'dropout')}; the paper mentions none)"
        )
    return (
        "dropout on every non-recurrent connection: the embeddings, between LSTM layers and on "
        "h~ before the softmax (Zaremba et al., as Luong et al. section 4.1, who used 0.2; "
        f"default: {preset_default(family, 'dropout')})"
    )


def add_model_flags(parser, family, switches):
    model = parser.add_argument_group("model")
    model.add_argument(
        "--size",
        choices=SIZES,
        default=library_default(preset_arguments, "size"),
        help="tiny (tests), base (trains on one machine) or paper (the paper's sizes); the "
        "sizes of each: zoo.models.presets (default: %(default)s)",
    )
    if "dropout" in switches:
        model.add_argument("--dropout", type=rate, default=None, help=dropout_help(family))
    if "reverse_source" in switches:
        model.add_argument(
            "--reverse-source",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="read the source sentence backwards, as Luong et al. did (default: "
            f"{preset_default(family, 'reverse_source')})",
        )
    if "bidirectional" in switches:
        model.add_argument(
            "--bidirectional",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="the encoder's first layer reads the source both ways, half the units per "
            f"direction (default: {preset_default(family, 'bidirectional')}); "
            "--no-bidirectional is Luong et al.'s unidirectional encoder (measured: "
            "docs/training.md)",
        )
    if "input_feeding" in switches:
        model.add_argument(
            "--input-feeding",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="feed the attentional vector h~_t to the next step, as Luong et al. section "
            "3.3 did; without it the decoder runs in one pass (default: "
            f"{preset_default(family, 'input_feeding')}; measured: docs/training.md)",
        )
    if "window" in switches:
        model.add_argument(
            "--window",
            type=positive_int,
            default=None,
            help="half-width D of the local attention window, 10 in the paper (default: "
            f"{preset_default(family, 'window')})",
        )
    add_tie_flag(model)


def tied_presets_help():
    """Which presets tie their embeddings at which size, for a help text: e.g. "the preset's:
    on for luong_local_p_general at --size base, off for the others, as in the papers"."""
    tied = [
        f"{name} at --size {size}"
        for name in presets()
        for size in SIZES
        if preset_arguments(name, size)["tie_embeddings"]
    ]
    if not tied:
        return "the preset's: off, as in the papers"
    return f"the preset's: on for {', '.join(tied)}, off for the others, as in the papers"


def add_tie_flag(model):
    """--tie-embeddings: every recipe has it; None leaves the preset's choice (the recipes
    that build a preset's decoder pass `hyperparameters(...)["tie_embeddings"]` to it)."""
    model.add_argument(
        "--tie-embeddings",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the decoder's output layer reads the target embedding matrix instead of a "
        "matrix of its own (Press and Wolf 2017; Inan et al. 2017): logits = h E^T + b, "
        "through a projection to the embedding size where the readout (Luong: h~, of "
        "--size's units; Bahdanau: the maxout output) has another size; fewer parameters by "
        "vocabulary x embedding size; with --shared-vocabulary the source embeddings too "
        f"(three-way tying) (default: {tied_presets_help()}; measured: docs/training.md)",
    )


def apply_model_flags(model, args):
    """The recipe's `model`, tied with --tie-embeddings (`zoo.models.with_tied_embeddings`):
    the target embeddings and the output layer, and with --shared-vocabulary the source
    embeddings too (three-way)."""
    tie = getattr(args, "tie_embeddings", None)
    if tie is None:  # the preset's choice, which the recipe built the decoder with
        tie = bool(getattr(model.get_layer("decoder"), "tie_embeddings", False))
    if tie:
        three_way = bool(getattr(args, "shared_vocabulary", False))
        return with_tied_embeddings(model, three_way=three_way)
    return model


def add_output_flags(parser, recipe):
    evaluation = parser.add_argument_group("evaluation and output")
    evaluation.add_argument(
        "--beam-size",
        type=positive_int,
        default=search_defaults.BEAM_SIZE,
        help="beam size of the final evaluation and of the exported translator (default: "
        "%(default)s); greedy search is scored too",
    )
    evaluation.add_argument(
        "--length-penalty",
        type=non_negative_float,
        default=search_defaults.LENGTH_PENALTY,
        help="GNMT length penalty alpha for beam search (default: %(default)g, chosen on "
        "Multi30k's validation split; 0 is plain log-probability, as in the papers, which "
        "favours short translations in a beam that keeps its finished hypotheses; measured: "
        "docs/decoding.md)",
    )
    evaluation.add_argument(
        "--coverage-penalty",
        type=non_negative_float,
        default=search_defaults.COVERAGE_PENALTY,
        metavar="BETA",
        help="GNMT coverage penalty beta for beam search (Wu et al. 2016, eq. 14), favouring "
        "translations that cover the source (default: %(default)g, none)",
    )
    evaluation.add_argument(
        "--eval-batch-size",
        type=positive_int,
        default=search_defaults.BATCH_SIZE,
        help="sentences translated at once (default: %(default)s)",
    )
    evaluation.add_argument(
        "--attention-plots",
        type=non_negative_int,
        default=4,
        help="attention heatmaps drawn for this many test sentences (default: %(default)s)",
    )
    evaluation.add_argument(
        "--out",
        default=None,
        help=f"output folder (default: saved_models/{recipe}/)",
    )
    evaluation.add_argument(
        "--no-export", action="store_true", help="skip writing the serving/ SavedModel"
    )
    evaluation.add_argument("--debug", action="store_true", help=DEBUG_HELP)


def add_mode_argument(parser):
    """`--mode predictive|monotonic` of the local-attention recipes (Luong et al. section 3.2)."""
    parser.add_argument(
        "--mode",
        choices=MODES,
        default=library_default(LocalAttention.__init__, "mode"),
        help="local attention: 'predictive' (local-p, the paper's best system) predicts the "
        "aligned position p_t (eq. 9) and weights the window by a Gaussian (eq. 10); "
        "'monotonic' (local-m) sets p_t = t (default: %(default)s)",
    )
    return parser


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


def test_split_help():
    """The default test split of each corpus, for a help text."""
    others = [name for name, info in CORPORA.items() if info.test_split == "test"]
    named = [
        f"{info.test_split} for {name}" for name, info in CORPORA.items() if name not in others
    ]
    return ", ".join(named + ["test otherwise"])


def resolve_languages(data, source_lang, target_lang, family=None):
    """(source, target): the given languages, the missing ones from the corpus' default pair
    in the registry (`zoo.data.registry.complete_languages`)."""
    if source_lang is not None and target_lang is not None:
        return source_lang, target_lang
    info = find_corpus(data)
    if info is None or info.default_pair is None:
        raise ValueError(
            f"--data {data!r}: give --source-lang and --target-lang (the defaults are known "
            f"only for {', '.join(CORPORA)})."
        )
    return complete_languages(data, source_lang, target_lang, family)


def resolve_defaults(args):
    """Fills the defaults that depend on other flags (languages, split, epochs, out, ...);
    refuses flags that cannot run together (`check_training_flags`)."""
    check_training_flags(args)
    args.source_lang, args.target_lang = resolve_languages(
        args.data, args.source_lang, args.target_lang, args.family
    )
    if args.test_split is None:
        args.test_split = default_test_split(args.data)
    profile = training_profile(args.family, paper=args.optimizer == "paper")
    if args.optimizer == "paper":
        args.optimizer = profile["optimizer"]
    fine_tuning_defaults(args)  # --init-from: a lower learning rate
    for name in ("batch_size", "epochs", "max_minutes"):
        if getattr(args, name) is None:
            setattr(args, name, profile[name])
    if args.max_minutes == 0:
        args.max_minutes = None
    if args.decay_after is None and args.optimizer == profile["optimizer"]:
        args.decay_after = profile["decay_after"]  # else the optimizer's own rule
    if args.average_last > args.keep_checkpoints:
        raise ValueError(
            f"--average-last {args.average_last} needs at least as many kept checkpoints; got "
            f"--keep-checkpoints {args.keep_checkpoints}."
        )
    if args.loss_normalization is None:
        args.loss_normalization = default_loss_normalization(args.optimizer)
    if args.out is None:
        args.out = os.path.join("saved_models", args.recipe)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out}: a file; expected the run's output folder.")
    return args


def hyperparameters(args, preset):
    """`zoo.models.preset_arguments(preset, args.size)` with the command line's switches.

    Returns a new dict of the preset's keyword arguments (sizes, dropout, ...; their values
    live in `zoo.models.presets`) where every architecture switch given on the command line
    (not None) replaces the preset's value.

    Example:
        >>> args = make_parser("luong_global_general", "luong").parse_args(
        ...     ["--size", "tiny", "--no-input-feeding"])
        >>> hp = hyperparameters(args, "luong_global_general")
        >>> hp["input_feeding"]  # the switch given; every other value is the preset's
        False
    """
    values = preset_arguments(preset, args.size)
    for name in (*ARCHITECTURE_SWITCHES, "tie_embeddings"):
        given = getattr(args, name, None)
        if given is None:
            continue
        if name not in values:
            raise ValueError(
                f"--{name.replace('_', '-')} does not apply to preset {preset!r} (its arguments: "
                f"{', '.join(sorted(values))})."
            )
        values[name] = given
    return values


LOCAL_MODES = {"predictive": "p", "monotonic": "m"}  # --mode -> the preset's letter


def recipe_preset(recipe, mode=None):
    """The preset that recipe `recipe` trains: its own name, or for the local-attention
    recipes (`luong_local_general`, `luong_local_dot`) `luong_local_{p|m}_<score>` by
    `mode` ("predictive", the default, or "monotonic")."""
    if recipe in presets():
        return recipe
    local = re.fullmatch(r"luong_local_(\w+)", recipe or "")
    letter = LOCAL_MODES.get(mode or "predictive")
    if local and letter and f"luong_local_{letter}_{local[1]}" in presets():
        return f"luong_local_{letter}_{local[1]}"
    raise UsageError(
        f"{recipe!r} names no preset of zoo.models (nor a recipe of one); presets: "
        f"{', '.join(presets())}."
    )


def preset_switches(preset):
    """The architecture switches (`--dropout`, `--window`, ...) that apply to `preset`: its
    family's, less `--window` without local attention and `--input-feeding` without
    attention."""
    switches = DEFAULT_SWITCHES[family(preset)]
    attention = preset_arguments(preset).get("attention", "")
    if not attention.startswith("local"):
        switches = tuple(s for s in switches if s != "window")
    if preset not in attention_presets():
        switches = tuple(s for s in switches if s != "input_feeding")
    return switches


def recipe_family(recipe):
    """ "bahdanau" or "luong": the family of the preset recipe `recipe` trains."""
    return family(recipe_preset(recipe))


STREAM_ABOVE_MIB = 100  # --streaming auto streams {split} file sets larger than this
# --vocab-size: more than the reserved ids (<pad>, <s>, </s>, <unk>)
VOCABULARY_SIZE = argparse_number(
    int, len(RESERVED_TOKENS), True, f"an integer > {len(RESERVED_TOKENS)} (the reserved ids)"
)


def streaming_help():
    """--streaming's help: which corpora 'auto' streams, from the corpus registry."""
    tfds = [name for name, info in CORPORA.items() if info.tfds_datasets is not None]
    in_memory = [name for name in CORPORA if name not in tfds]
    return (
        "read the training split from disk each epoch in bounded memory ('on'), or hold it in "
        "memory, tokenized once and shuffled whole ('off'). 'auto' (default) streams the TFDS "
        f"corpora ({', '.join([*tfds, 'tfds:NAME'])}) and {{split}} file sets that are "
        f"gzip-compressed or larger than {STREAM_ABOVE_MIB} MiB; {', '.join(in_memory)} stay in "
        "memory. A streamed corpus needs {split} in its name (one file or pair of files per "
        "split)"
    )


def add_data_flags(parser):
    data = parser.add_argument_group("data")
    add_corpus_flags(data)
    add_text_flags(data)
    add_batching_flags(data)
    return data


def add_corpus_flags(data):
    """--data and how a large corpus is streamed."""
    data.add_argument(
        "--data", default=DEFAULT_CORPUS, help=f"{corpora_help()} (default: %(default)s)"
    )
    data.add_argument(
        "--streaming",
        choices=("auto", "on", "off"),
        default="auto",
        help=streaming_help(),
    )
    data.add_argument(
        "--shuffle-buffer",
        type=positive_int,
        default=DEFAULT_SHUFFLE_BUFFER,
        help="streamed training pairs are shuffled within a window of this many pairs "
        f"(default: {DEFAULT_SHUFFLE_BUFFER:,}); in memory the whole split is shuffled",
    )
    data.add_argument(
        "--steps-per-epoch",
        type=positive_int,
        default=None,
        help="streamed corpora: batches per epoch for the progress bar and the learning-rate "
        "schedule, instead of counting them in one pass before training (the count is "
        "cached in --out beside the vocabulary; an epoch still ends where the data ends, and "
        "the pairs the length filter dropped are then reported after the first epoch)",
    )
    data.add_argument(
        "--allow-corpus-change",
        action="store_true",
        help="resume a run although its training or validation files changed since it began "
        "(run.json holds their fingerprints; without this flag such a rerun is refused, naming "
        "the file and what changed)",
    )
    data.add_argument(
        "--tokenizer-sample",
        type=positive_int,
        default=DEFAULT_TOKENIZER_SAMPLE,
        help="train the tokenizers on a seeded sample of at most this many training pairs "
        f"(default: {DEFAULT_TOKENIZER_SAMPLE:,}; Multi30k's 29,000 are all used): the "
        "memory of tokenizer training grows with it (measured: docs/corpora.md)",
    )


def add_text_flags(data):
    """Languages, the test split and the tokenizers."""
    data.add_argument(
        "--source-lang",
        default=None,
        help="source language (default: the corpus' default pair, see --data; required for "
        "corpora without one)",
    )
    data.add_argument(
        "--target-lang",
        default=None,
        help="target language (default: the corpus' default pair, see --data; required for "
        "corpora without one)",
    )
    data.add_argument(
        "--test-split",
        default=None,
        help=f"split scored at the end (default: {test_split_help()})",
    )
    data.add_argument(
        "--tokenizer",
        choices=KINDS,
        default=DEFAULT_KIND,
        help="subword model trained on the training split, one per language (default: %(default)s)",
    )
    data.add_argument(
        "--shared-vocabulary",
        action="store_true",
        help="one subword model trained on both languages' training text (both sides of the "
        "--tokenizer-sample pairs), saved as source_tokenizer/ and target_tokenizer/, of "
        "--vocab-size pieces; what three-way tied embeddings need (Press and Wolf 2017; "
        "default: one model per language; see docs/training.md)",
    )
    bahdanau, luong = DEFAULT_VOCAB_SIZES["bahdanau"], DEFAULT_VOCAB_SIZES["luong"]
    data.add_argument(
        "--vocab-size",
        type=VOCABULARY_SIZE,
        default=DEFAULT_VOCAB_SIZE,
        help=f"vocabulary size per language, {len(RESERVED_TOKENS)} reserved ids included "
        "(default: %(default)s; "
        f"the papers used {bahdanau:,} (Bahdanau) and {luong:,} (Luong) words on WMT)",
    )
    data.add_argument("--lowercase", action="store_true", help="lowercase text before tokenizing")


def add_batching_flags(data):
    """The length filter, the batching and the quick-run slices."""
    data.add_argument(
        "--max-length",
        type=positive_int,
        default=library_default(make_dataset, "max_length"),
        help="drop training pairs with more tokens than this on either side (default: "
        "%(default)s, as in Luong et al.)",
    )
    data.add_argument(
        "--batching",
        choices=BATCHINGS,
        default=library_default(make_dataset, "batching"),
        help="how training pairs are grouped into batches to cut padding: pools of "
        "--pool-batches batches sorted by (target, source) length, their batches shuffled "
        f"(as fairseq, OpenNMT-py); length buckets of width {DEFAULT_BUCKET_WIDTH}; or plain "
        "shuffled batches (default: %(default)s)",
    )
    data.add_argument(
        "--pool-batches",
        type=positive_int,
        default=library_default(make_dataset, "pool_batches"),
        help="batches per sorted pool with --batching pools; larger pools pad less "
        "(default: %(default)s)",
    )
    data.add_argument(
        "--train-limit",
        type=positive_int,
        default=None,
        help="use only the first N training pairs (quick runs, CI)",
    )
    data.add_argument(
        "--eval-limit",
        type=positive_int,
        default=None,
        help="use only the first N validation and test pairs (quick runs, CI)",
    )
