"""The flags that several commands share: search settings, unknown words, sampling, --debug.

Every default shown here is the library's: a translator folder's translator.json value, else
`zoo.search.defaults` (the one place the search defaults live).
"""

import os

from zoo.checks import non_negative_float, non_negative_int, positive_float, positive_int, seed_int
from zoo.errors import DEBUG_HELP, UsageError
from zoo.hub import HUB_PREFIX
from zoo.search import defaults as search_defaults
from zoo.search import sample
from zoo.translator import CONFIG_FILE, MODEL_FILE
from zoo.workflow.flags import library_default

MODEL_FILE_DEFAULT = (
    f"the file MODEL_DIR/{CONFIG_FILE} names, the one the run chose on validation; else "
    f"{MODEL_FILE}"
)

MODEL_HELP = (
    "a zoo output folder, the name of a shipped translator (python -m zoo list) or a hub "
    f"handle {HUB_PREFIX}owner/name"
)
"""MODEL_DIR's help in every command that reads a translator."""


def check_output_path(path, flag, reads=()):
    """A usage error, before any work, unless `path` (a file that `flag` names, to be
    written) can be a file: not a folder, in a folder that exists, and none of the files the
    command reads or writes besides it: `reads`, pairs (flag, path) of its other files (None:
    not given) and ("MODEL_DIR", folder), whose translator.json, .keras files and subfolders
    (the tokenizers) an output must not replace."""
    if path is None:
        return None
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: a folder; expected a file name.")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"{flag} {path}: the folder {parent} does not exist.")
    for other, other_path in reads:
        if other_path is None:
            continue
        if other == "MODEL_DIR" and os.path.isdir(other_path):
            folder, real = os.path.realpath(other_path), os.path.realpath(path)
            inside = os.path.commonpath([folder, real]) == folder
            if inside and (
                os.path.dirname(real) != folder
                or os.path.basename(real) == CONFIG_FILE
                or real.endswith(".keras")
            ):
                raise UsageError(
                    f"{flag} {path} would replace a file of the model folder {other_path} that "
                    "the command reads; choose a file outside it, or one not named "
                    f"{CONFIG_FILE} or *.keras."
                )
        elif _same_file(path, other_path):
            raise UsageError(
                f"{flag} {path} is the file of {other} too; writing it would replace that "
                f"file. Choose another {flag}."
            )
    return path


def _same_file(a, b):
    """Whether paths `a` and `b` name one file (the same path, a link, a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet)
        return False


def check_input_file(path, flag):
    """`path` when it is a file to read; else a ValueError naming `flag`."""
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path}: a folder, not a file.")
    if not os.path.isfile(path):
        raise ValueError(f"{flag} {path}: no such file.")
    return path


def folder_default(value):
    """The default text of a search flag: translator.json's value, else the library's."""
    return f"default: MODEL_DIR/{CONFIG_FILE}, else {value:g}"


def add_debug_flag(parser):
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)


def add_model_file_flag(parser):
    parser.add_argument(
        "--model-file",
        default=None,
        help=f"model file inside MODEL_DIR (default: {MODEL_FILE_DEFAULT})",
    )


def add_search_flags(parser):
    """--beam-size, --batch-size, the penalties, --model-file and --ensemble (translate,
    evaluate, serve)."""
    add_debug_flag(parser)
    parser.add_argument(
        "--beam-size",
        type=positive_int,
        default=None,
        help=f"beam size K; 1 is greedy search ({folder_default(search_defaults.BEAM_SIZE)})",
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        help=f"sentences per search call ({folder_default(search_defaults.BATCH_SIZE)})",
    )
    parser.add_argument(
        "--length-penalty",
        type=non_negative_float,
        default=None,
        help="GNMT length penalty alpha, 0 ranks by log-probability as the papers did "
        f"({folder_default(search_defaults.LENGTH_PENALTY)}; measured: docs/decoding.md)",
    )
    parser.add_argument(
        "--coverage-penalty",
        type=non_negative_float,
        default=None,
        help="GNMT coverage penalty beta for beam search, favouring translations that cover "
        f"the source ({folder_default(search_defaults.COVERAGE_PENALTY)})",
    )
    add_model_file_flag(parser)
    parser.add_argument(
        "--ensemble",
        nargs="+",
        default=None,
        metavar="OTHER_DIR",
        help="decode with an ensemble: MODEL_DIR's model and these folders' models (the mean "
        "of their distributions at every step); all must share MODEL_DIR's target vocabulary "
        "and read its source tokenizer's ids (it takes every word up to the next flag: give "
        "sentences before it)",
    )


CONTROL_FLAGS = {
    "min_length": "--min-length",
    "ban_unknown": "--ban-unk",
    "no_repeat_ngram_size": "--no-repeat-ngram-size",
}
"""The decoding controls' flags, by `Translator.translate` keyword."""

CONTROL_HELP = {
    "min_length": "at least N target tokens before the end (0: off; default: %(default)s)",
    "ban_unknown": "never emit <unk> (default: off)",
    "no_repeat_ngram_size": "no n-gram of N tokens twice in a translation (Paulus et al. "
    "2017; 0: off; default: %(default)s)",
}
"""What each decoding control's flag does; its type and default are the library's
(`zoo.search.defaults.CONTROL_DEFAULTS`)."""


def add_control_flags(parser):
    """--min-length, --ban-unk and --no-repeat-ngram-size, the decoding controls of
    `zoo.search.search` (translate, evaluate); off by default, as in the library."""
    group = parser.add_argument_group(
        "decoding controls", 'what the search may emit (docs/decoding.md, "Decoding controls")'
    )
    for name, flag in CONTROL_FLAGS.items():
        default = search_defaults.CONTROL_DEFAULTS[name]
        if isinstance(default, bool):
            group.add_argument(
                flag, dest=name, action="store_true", default=default, help=CONTROL_HELP[name]
            )
        else:
            group.add_argument(
                flag, dest=name, type=non_negative_int, default=default, metavar="N",
                help=CONTROL_HELP[name],
            )  # fmt: skip


def control_options(args):
    """The decoding controls of the command line, as `Translator.translate` keywords."""
    return {name: getattr(args, name) for name in CONTROL_FLAGS}


def controls_given(args):
    """The flags of the decoding controls given other values than their defaults."""
    return [
        flag
        for name, flag in CONTROL_FLAGS.items()
        if getattr(args, name, None) not in (None, search_defaults.CONTROL_DEFAULTS[name])
    ]


def add_unknown_word_flags(parser):
    """--replace-unk and --unk-dictionary (translate and evaluate; a server's requests ask
    for replacement themselves)."""
    parser.add_argument(
        "--replace-unk",
        action="store_true",
        help="replace each <unk> of a translation by the source word it attends to most "
        "(Luong et al. 2015 section 4.1; for word-level vocabularies)",
    )
    parser.add_argument(
        "--unk-dictionary",
        default=None,
        metavar="FILE",
        help="with --replace-unk: translate the copied source word with this dictionary "
        "(one 'source<TAB>target' pair a line) where it has an entry",
    )


def add_sampling_flags(parser):
    """--sample and its shaping options (translate)."""
    group = parser.add_argument_group(
        "sampling",
        "draw one translation per sentence at random instead of searching (zoo.search.sample; "
        "synthetic sources for back-translation); --temperature, --top-k, --top-p and --seed "
        "need --sample. A SavedModel samples with the settings it was exported with.",
    )
    group.add_argument(
        "--sample", action="store_true", help="sample instead of greedy or beam search"
    )
    group.add_argument(
        "--temperature",
        type=positive_float,
        default=None,
        help="divide the logits by T: below 1 sharper, above 1 flatter (default: "
        f"{library_default(sample, 'temperature'):g})",
    )
    group.add_argument(
        "--top-k",
        type=positive_int,
        default=None,
        metavar="K",
        help="draw from the K most likely tokens only (default: all)",
    )
    group.add_argument(
        "--top-p",
        type=positive_float,
        default=None,
        metavar="P",
        help="draw from the smallest set of most likely tokens holding probability P, in "
        "(0, 1] (nucleus sampling; default: all)",
    )
    group.add_argument(
        "--seed",
        type=seed_int,
        default=None,
        help="make the draws reproducible: the same input, seed and --batch-size give the "
        "same translations (default: fresh draws)",
    )
