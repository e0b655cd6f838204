"""The recipes' model flags (--size and the architecture switches) and their evaluation and
output flags.

An architecture switch defaults to None, "the preset's value at --size": its help text
renders the presets' values (`zoo.models.preset_arguments`), and the search flags render
`zoo.search.defaults`, so that the command line holds no default of its own.
"""

import argparse

from zoo.checks import non_negative_float, non_negative_int, positive_int
from zoo.errors import DEBUG_HELP
from zoo.layers import LocalAttention
from zoo.layers.local_attention import MODES
from zoo.models import SIZES, preset_arguments, presets, with_tied_embeddings
from zoo.search import defaults as search_defaults
from zoo.workflow.flag_types import library_default, rate

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
