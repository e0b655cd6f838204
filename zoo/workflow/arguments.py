"""The command line every recipe shares: `make_parser` and `hyperparameters`.

Flags fall in four groups (see `python recipes/luong_local_general.py --help`): data,
model, training and evaluation. Architecture switches (`--dropout`, `--reverse-source`,
`--no-input-feeding`, `--window`) default to None, meaning "the preset's value at --size";
`hyperparameters(args, preset)` applies the ones given on the command line to the preset's
keyword arguments, so recipes and `zoo.models.build` agree on every size.
"""

import argparse
import os

from zoo import checks
from zoo.data import BATCHINGS, DEFAULT_SHUFFLE_BUFFER
from zoo.models import SIZES, preset_arguments
from zoo.text import KINDS
from zoo.search import defaults as search_defaults
from zoo.training import (
    LOSS_NORMALIZATIONS,
    PRECISIONS,
    STRATEGIES,
    default_loss_normalization,
)
from zoo.training.profiles import FAMILIES, PAPER_TRAINING, TRAINING_DEFAULTS
from zoo.training.profiles import OPTIMIZER_DESCRIPTIONS as PAPER_OPTIMIZERS
OPTIMIZER_CHOICES = ("adam", "paper", "bahdanau", "luong")
# Architecture switches, by the name of the preset argument they override.
ARCHITECTURE_SWITCHES = ("dropout", "reverse_source", "bidirectional", "input_feeding", "window")
DEFAULT_SWITCHES = {"bahdanau": ("dropout",), "luong": ARCHITECTURE_SWITCHES}
DROPOUT_HELP = {
    "bahdanau": "dropout on the source and target embeddings and on the maxout output t_i, "
    "in training (default: the preset's: 0.3 at --size base, 0 at tiny and paper; the paper "
    "mentions none)",
    "luong": "dropout on every non-recurrent connection: the embeddings, between LSTM "
    "layers and on h~ before the softmax (Zaremba et al., as Luong et al. section 4.1; "
    "default: the preset's: 0.3 at --size base, not the paper's, it overfits less on "
    "Multi30k; 0.2 at tiny and paper, as in the paper)",
}
DEFAULT_VOCAB_SIZE = 8000
DEFAULT_TOKENIZER_SAMPLE = 1_000_000
STREAM_ABOVE_MB = 100  # --streaming auto streams {split} file sets larger than this
# WMT'14 as each paper translated it (Luong et al.: English->German; Bahdanau et al.:
# English->French), when --data wmt14 comes without languages.
WMT14_LANGUAGES = {"luong": ("en", "de"), "bahdanau": ("en", "fr")}

# What --optimizer paper gives on Multi30k, by family (bench/RESULTS.md, sessions 20 and 21).
PAPER_ON_MULTI30K = {
    "bahdanau": "On a corpus as small as Multi30k its 10 epochs are too few updates for "
    "Adadelta: 21.6 BLEU (3,630 updates; validation perplexity still falling); 34.0 with "
    "--batch-size 20 (14,500) and 37.6 with --batch-size 20 --epochs 20, against about 39 "
    "for the default in little more than half the time. ",
    "luong": "On a corpus as small as Multi30k its 12 epochs are too few updates for SGD: "
    "9.4 BLEU at batches of 128 (2,724 updates); with --batch-size 32 (10,884) 35.3 and "
    "39.4 (two seeds), against about 40 for the default in less time. ",
}
# Beam search's length penalty by family: the library's one default (zoo.search.defaults).
LENGTH_PENALTY = {family: search_defaults.LENGTH_PENALTY for family in FAMILIES}

_EPILOG = """\
Data: corpora are read from $ZOO_DATA_DIR (default: the shared/data folder beside the
checkout), e.g. $ZOO_DATA_DIR/multi30k/train.de. Multi30k is downloaded into $ZOO_CACHE_DIR
when no local copy exists.

Output (--out): model.keras (best by validation loss), model.averaged.keras (the mean of the
last checkpoints; translator.json's "model_file" names the one delivered), source_tokenizer/, target_tokenizer/,
vocab.<lang>.txt, serving/ (SavedModel: translate strings without zoo), metrics.json,
translations.<split>.{greedy,beam}.txt, bleu_by_length.{png,tsv,md}, attention_*.png,
logs/ (TensorBoard: tensorboard --logdir <out>/logs), checkpoints/.

Re-running the same command continues from the last checkpoint (--resume is the default);
--no-resume starts over in the same folder.
"""


_positive_float = checks.positive_float
positive_int = checks.positive_int
_non_negative_int = checks.non_negative_int
_non_negative_float = checks.non_negative_float


def _rate(text):
    value = _non_negative_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {value}")
    return value


def make_parser(recipe, family, description=None, switches=None):
    """The `argparse.ArgumentParser` of recipe `recipe` (a name such as "luong_global_dot").

    Args:
        recipe: the recipe's name; the default output folder is `saved_models/<recipe>/`.
        family: "bahdanau" or "luong": picks the paper optimizer and the default epochs.
        description: --help text (a recipe passes its module docstring).
        switches: which architecture switches the recipe accepts, a subset of
            `ARCHITECTURE_SWITCHES` (default: all for Luong, none for Bahdanau).

    Recipes add their own flags to the returned parser (e.g. `--mode` for local attention).
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}; received {family!r}.")
    switches = DEFAULT_SWITCHES[family] if switches is None else tuple(switches)
    unknown = sorted(set(switches) - set(ARCHITECTURE_SWITCHES))
    if unknown:
        raise ValueError(
            f"Unknown architecture switch(es) {unknown}; valid: {ARCHITECTURE_SWITCHES}."
        )
    parser = argparse.ArgumentParser(
        prog=f"python recipes/{recipe}.py",
        description=description,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(recipe=recipe, family=family)
    _add_data_flags(parser)
    _add_model_flags(parser, family, switches)
    training = _add_optimizer_flags(parser, family)
    _add_schedule_flags(training, family)
    _add_output_flags(parser, recipe, family)
    return parser


def _add_data_flags(parser):
    data = parser.add_argument_group("data")
    _add_corpus_flags(data)
    _add_text_flags(data)
    _add_batching_flags(data)


def _add_corpus_flags(data):
    """--data and how a large corpus is streamed."""
    data.add_argument(
        "--data",
        default="multi30k",
        help="corpus: 'multi30k' (default), 'anki-spa-eng', 'anki-fra-eng', 'wmt14' (the "
        "papers' WMT'14 through TFDS: en->de for Luong recipes, en->fr for Bahdanau ones, "
        "unless the languages are given), a tab-separated file (source<TAB>target), a file "
        "prefix (PREFIX{split}.{lang} or PREFIX.{lang}; .gz files too when streamed), or "
        "'tfds:NAME' (e.g. tfds:wmt14_translate/de-en)",
    )
    data.add_argument(
        "--streaming",
        choices=("auto", "on", "off"),
        default="auto",
        help="read the training split from disk each epoch in bounded memory ('on'), or hold "
        "it in memory, tokenized once and shuffled whole ('off'). 'auto' (default) streams "
        "TFDS corpora and wmt14, and {split} file sets that are gzip-compressed or larger "
        f"than {STREAM_ABOVE_MB} MB; Multi30k and the Anki corpora stay in memory. A streamed "
        "corpus needs {split} in its name (one file or pair of files per split)",
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
        "--tokenizer-sample",
        type=positive_int,
        default=DEFAULT_TOKENIZER_SAMPLE,
        help="train the tokenizers on a seeded sample of at most this many training pairs, "
        f"read by streaming (default: {DEFAULT_TOKENIZER_SAMPLE:,}; Multi30k's 29,000 are "
        "all used)",
    )


def _add_text_flags(data):
    """Languages, the test split and the tokenizers."""
    data.add_argument(
        "--source-lang",
        default=None,
        help="source language (default: de for multi30k, en for anki-spa-eng/anki-fra-eng; "
        "required for other corpora)",
    )
    data.add_argument(
        "--target-lang",
        default=None,
        help="target language (default: en for multi30k, es/fr for anki-spa-eng/anki-fra-eng; "
        "required for other corpora)",
    )
    data.add_argument(
        "--test-split",
        default=None,
        help="split scored at the end (default: test2016 for multi30k, test otherwise)",
    )
    data.add_argument(
        "--tokenizer",
        choices=KINDS,
        default="sentencepiece",
        help="subword model trained on the training split, one per language "
        "(default: sentencepiece)",
    )
    data.add_argument(
        "--vocab-size",
        type=positive_int,
        default=DEFAULT_VOCAB_SIZE,
        help=f"vocabulary size per language, 4 reserved ids included (default: "
        f"{DEFAULT_VOCAB_SIZE}; the papers used 30k (Bahdanau) and 50k (Luong) words on WMT)",
    )
    data.add_argument("--lowercase", action="store_true", help="lowercase text before tokenizing")


def _add_batching_flags(data):
    """The length filter, the batching and the quick-run slices."""
    data.add_argument(
        "--max-length",
        type=positive_int,
        default=50,
        help="drop training pairs with more tokens than this on either side (default: 50, "
        "as in Luong et al.)",
    )
    data.add_argument(
        "--batching",
        choices=BATCHINGS,
        default="pools",
        help="how training pairs are grouped into batches to cut padding: pools of "
        "--pool-batches batches sorted by (target, source) length, their batches shuffled "
        "(as fairseq, OpenNMT-py); length buckets of width 2; or plain shuffled batches "
        "(default: pools)",
    )
    data.add_argument(
        "--pool-batches",
        type=positive_int,
        default=1024,
        help="batches per sorted pool with --batching pools; larger pools pad less (default: 1024)",
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


def _add_model_flags(parser, family, switches):
    model = parser.add_argument_group("model")
    model.add_argument(
        "--size",
        choices=SIZES,
        default="base",
        help="tiny (tests), base (default: trains on one machine) or paper (the paper's sizes)",
    )
    if "dropout" in switches:
        model.add_argument(
            "--dropout",
            type=_rate,
            default=None,
            help=DROPOUT_HELP[family],
        )
    if "reverse_source" in switches:
        model.add_argument(
            "--reverse-source",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="read the source sentence backwards (default: on, as in Luong et al.)",
        )
    if "bidirectional" in switches:
        model.add_argument(
            "--bidirectional",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="the encoder's first layer reads the source both ways, half the units per "
            "direction (default: on at --size tiny and base, not the paper's: it trains a "
            "better model here, bench/RESULTS.md; off at --size paper); --no-bidirectional "
            "is Luong et al.'s unidirectional encoder",
        )
    if "input_feeding" in switches:
        model.add_argument(
            "--input-feeding",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="feed the attentional vector h~_t to the next step (section 3.3). Default: "
            "off at --size base, not the paper's: the decoder then runs in one pass, about 20%% "
            "faster a step, and gives the better model in an hour here (bench/RESULTS.md); on "
            "at tiny and paper, as in the paper",
        )
    if "window" in switches:
        model.add_argument(
            "--window",
            type=positive_int,
            default=None,
            help="half-width D of the local attention window (default: the preset's, 10)",
        )


def _add_optimizer_flags(parser, family):
    """The training group's optimizer flags; returns the group."""
    training = parser.add_argument_group("training")
    ours, paper = TRAINING_DEFAULTS[family], PAPER_TRAINING[family]
    training.add_argument(
        "--optimizer",
        choices=OPTIMIZER_CHOICES,
        default="adam",
        help=f"'adam' (default, not the paper's; it trains the best model here in an hour): "
        f"{PAPER_OPTIMIZERS['adam']}, batches of {ours['batch_size']}, {ours['epochs']} "
        f"epochs, halving after epoch {ours['decay_after']}, at most "
        f"{ours['max_minutes']:g} minutes. 'paper': the paper's {PAPER_OPTIMIZERS[family]}, "
        f"batches of {paper['batch_size']}, {paper['epochs']} epochs, no time limit, the "
        f"loss summed per sentence. {PAPER_ON_MULTI30K[family]}'bahdanau' and 'luong' pick "
        "either paper's optimizer (with the default batch size and epochs). Flags given "
        "explicitly override all of these",
    )
    training.add_argument(
        "--learning-rate",
        type=_positive_float,
        default=None,
        help="initial learning rate (default: the optimizer's: 1.0 for Adadelta and Luong's "
        "SGD, 1e-3 for Adam)",
    )
    training.add_argument(
        "--loss-normalization",
        choices=LOSS_NORMALIZATIONS,
        default=None,
        help="divide each batch's summed cross-entropy by its target tokens (the mean per "
        "token) or by its sentences (a sentence's summed loss: what the papers' SGD at "
        "learning rate 1.0 and Adadelta minimised; its gradient is about the mean target "
        "length times larger). Default: the optimizer's, tokens for Adam, sentences for "
        "the papers' optimizers",
    )
    training.add_argument(
        "--label-smoothing",
        type=_rate,
        default=0.0,
        metavar="EPS",
        help="train on label-smoothed cross-entropy: EPS of each target's probability spread "
        "over the vocabulary (default: 0, as in the papers; 0.1 is common). Perplexity and "
        "model selection use the plain cross-entropy",
    )
    training.add_argument(
        "--decay-after",
        type=_non_negative_int,
        default=None,
        metavar="EPOCHS",
        help="halve the learning rate every epoch after this many epochs (Luong et al. "
        f"section 4.1's rule, for any --optimizer; default: {ours['decay_after']} for the "
        "default Adam, 5 for Luong's SGD (8 with dropout), none for Adadelta)",
    )
    return training


def _add_schedule_flags(training, family):
    """Epochs, limits, batches, precision and distribution; then checkpoints and seeds."""
    ours, paper = TRAINING_DEFAULTS[family], PAPER_TRAINING[family]
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
        type=_non_negative_float,
        default=None,
        help="stop training after this many minutes of wall-clock time in this run (then "
        "validate, checkpoint, evaluate and export as usual; a re-run continues). When the "
        "learning rate is halved per epoch and the epochs will not all fit, the schedule "
        "shrinks to the epochs that fit, estimated from the time of this run's second "
        "epoch: the halving starts earlier, the full-rate epochs keeping their "
        "share. The plan is kept in checkpoints/time_plan.json: a re-run keeps it, "
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
        choices=PRECISIONS,
        default="float32",
        help="float32 (default), mixed_float16 (GPUs; with loss scaling) or mixed_bfloat16",
    )
    training.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="default",
        help="default (one device), mirrored (all GPUs of this machine) or multiworker "
        "(MultiWorkerMirroredStrategy; cluster from TF_CONFIG, run the command on each worker)",
    )
    _add_checkpoint_flags(training)


def _add_checkpoint_flags(training):
    """Checkpoints, averaging, resuming, seeds and compilation."""
    training.add_argument(
        "--checkpoint-every",
        type=positive_int,
        default=500,
        help="write a checkpoint every N steps (and at each epoch end); a crash loses at most "
        "N steps (default: 500)",
    )
    training.add_argument(
        "--keep-checkpoints",
        type=positive_int,
        default=3,
        help="how many of the newest checkpoints to keep (default: 3); `python -m zoo "
        "average OUT --last N` averages the last N of them into one model",
    )
    training.add_argument(
        "--average-last",
        type=_non_negative_int,
        default=3,
        metavar="N",
        help="after training, average the weights of the last N checkpoints and deliver that "
        "model instead of the best one by validation loss when it scores a higher validation "
        "BLEU with the run's beam search (default: 3, at most --keep-checkpoints; 0 or 1: "
        "off, the papers' way); translator.json names the file delivered",
    )
    training.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="continue from the last checkpoint in --out (default); --no-resume starts over",
    )
    training.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    training.add_argument(
        "--deterministic",
        action="store_true",
        help="use deterministic TensorFlow ops (reproducible, slower)",
    )
    training.add_argument(
        "--jit-compile", action="store_true", help="compile the training step with XLA"
    )


def _add_output_flags(parser, recipe, family):
    evaluation = parser.add_argument_group("evaluation and output")
    evaluation.add_argument(
        "--beam-size",
        type=positive_int,
        default=5,
        help="beam size of the final evaluation and of the exported translator (default: 5); "
        "greedy search is scored too",
    )
    evaluation.add_argument(
        "--length-penalty",
        type=_non_negative_float,
        default=None,
        help="GNMT length penalty alpha for beam search (default: "
        f"{LENGTH_PENALTY[family]:g}, chosen on Multi30k's validation split, bench/RESULTS.md; "
        "0 is plain log-probability, as in the papers, which favours short translations in a "
        "beam that keeps its finished hypotheses)",
    )
    evaluation.add_argument(
        "--coverage-penalty",
        type=_non_negative_float,
        default=0.0,
        metavar="BETA",
        help="GNMT coverage penalty beta for beam search (Wu et al. 2016, eq. 14), favouring "
        "translations that cover the source (default: 0, none)",
    )
    evaluation.add_argument(
        "--eval-batch-size",
        type=positive_int,
        default=64,
        help="sentences translated at once (default: 64)",
    )
    evaluation.add_argument(
        "--attention-plots",
        type=_non_negative_int,
        default=4,
        help="attention heatmaps drawn for this many test sentences (default: 4)",
    )
    evaluation.add_argument(
        "--out",
        default=None,
        help=f"output folder (default: saved_models/{recipe}/)",
    )
    evaluation.add_argument(
        "--no-export", action="store_true", help="skip writing the serving/ SavedModel"
    )
    evaluation.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error (default: the message alone; exit status 2 for "
        "bad flags, 1 for bad data)",
    )


def add_mode_argument(parser):
    """`--mode predictive|monotonic` of the local-attention recipes (Luong et al. section 3.2)."""
    parser.add_argument(
        "--mode",
        choices=("predictive", "monotonic"),
        default="predictive",
        help="local attention: 'predictive' (local-p, default: the paper's best system) "
        "predicts the aligned position p_t (eq. 9) and weights the window by a Gaussian "
        "(eq. 10); 'monotonic' (local-m) sets p_t = t",
    )
    return parser


def resolve_defaults(args):
    """Fills the defaults that depend on other flags (languages, split, epochs, out, ...)."""
    if args.source_lang is None or args.target_lang is None:
        pairs = {
            "multi30k": ("de", "en"),
            "anki-spa-eng": ("en", "es"),
            "anki-fra-eng": ("en", "fr"),
            "wmt14": WMT14_LANGUAGES[args.family],
        }
        if args.data not in pairs:
            raise ValueError(
                f"--data {args.data!r}: give --source-lang and --target-lang (the defaults are "
                f"known only for {sorted(pairs)})."
            )
        source, target = pairs[args.data]
        if args.source_lang is None:
            args.source_lang = target if args.target_lang == source else source
        if args.target_lang is None:
            args.target_lang = source if args.source_lang == target else target
    if args.test_split is None:
        args.test_split = "test2016" if args.data == "multi30k" else "test"
    profile = (PAPER_TRAINING if args.optimizer == "paper" else TRAINING_DEFAULTS)[args.family]
    if args.optimizer == "paper":
        args.optimizer = profile["optimizer"]
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
    if args.length_penalty is None:
        args.length_penalty = LENGTH_PENALTY[args.family]
    if args.loss_normalization is None:
        args.loss_normalization = default_loss_normalization(args.optimizer)
    if args.out is None:
        args.out = os.path.join("saved_models", args.recipe)
    return args


def hyperparameters(args, preset):
    """`zoo.models.preset_arguments(preset, args.size)` with the command line's switches.

    Returns a new dict of the preset's keyword arguments (sizes, dropout, ...) where every
    architecture switch given on the command line (not None) replaces the preset's value.

    Example:
        >>> hp = hyperparameters(args, "luong_global_general")
        >>> hp["units"], hp["dropout"], hp["input_feeding"]
        (512, 0.2, True)
    """
    values = preset_arguments(preset, args.size)
    for name in ARCHITECTURE_SWITCHES:
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
