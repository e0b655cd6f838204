"""The command line every recipe shares: `make_parser`, `resolve_defaults` and
`hyperparameters`.

Flags fall in four groups (see `python recipes/luong_local_general.py --help`): data
(`zoo.workflow.flags`), model (`model_flags`), training (`training_flags`), and
evaluation and output (`model_flags.add_output_flags`). Architecture switches (`--dropout`, `--reverse-source`,
`--no-input-feeding`, `--window`) default to None, meaning "the preset's value at --size";
`hyperparameters(args, preset)` applies the ones given on the command line to the preset's
keyword arguments, so recipes and `zoo.models.build` agree on every size. The defaults that
depend on other flags are filled in by `resolve_defaults` (`zoo.workflow.flags`) from the
library: the training profiles (`zoo.training.settings`) and the search defaults
(`zoo.search.defaults`).
"""

import argparse

from zoo.checks import positive_int
from zoo.constants import CHECKPOINT_DIR, LOG_DIR, MODEL_FILE
from zoo.training.settings import FAMILIES
from zoo.translator import (
    CONFIG_FILE,
    SERVING_DIR,
    SOURCE_TOKENIZER_DIR,
    TARGET_TOKENIZER_DIR,
)
from zoo.workflow.flags import (
    ARCHITECTURE_SWITCHES,
    DEFAULT_SWITCHES,
    STREAM_ABOVE_MIB,
    add_data_flags,
    add_mode_argument,
    add_model_flags,
    add_output_flags,
    add_training_flags,
    hyperparameters,
    resolve_defaults,
)
from zoo.workflow.report import (
    ATTENTION_PLOT,
    AVERAGED_FILE,
    BLEU_BY_LENGTH,
    METRICS_FILE,
    TRANSLATIONS_FILE,
    VOCABULARY_FILE,
)
from zoo.workflow.starting_points import add_start_flags

__all__ = [
    "ARCHITECTURE_SWITCHES",
    "STREAM_ABOVE_MIB",
    "add_mode_argument",
    "hyperparameters",
    "make_parser",
    "positive_int",
    "resolve_defaults",
]

EPILOG = f"""\
Data: corpora are read from $ZOO_DATA_DIR (default: the shared/data folder beside the
checkout), e.g. $ZOO_DATA_DIR/multi30k/train.de. Multi30k is downloaded into $ZOO_CACHE_DIR
when no local copy exists (docs/corpora.md).

Output (--out): {MODEL_FILE} (best by --validation-metric), {AVERAGED_FILE} (the mean
of the last checkpoints; {CONFIG_FILE}'s "model_file" names the one delivered),
{SOURCE_TOKENIZER_DIR}/, {TARGET_TOKENIZER_DIR}/, {VOCABULARY_FILE.format(lang="<lang>")},
{SERVING_DIR}/ (SavedModel: translate strings without zoo), {METRICS_FILE},
{TRANSLATIONS_FILE.format(split="<split>", search="{greedy,beam}")},
{BLEU_BY_LENGTH.format(extension="{png,tsv,md}")}, {ATTENTION_PLOT.format(index="*")},
{LOG_DIR}/ (TensorBoard: tensorboard --logdir <out>/{LOG_DIR}), {CHECKPOINT_DIR}/.

Re-running the same command continues from the last checkpoint (--resume is the default);
--no-resume starts over in the same folder. Measured results of the defaults and of the
papers' settings: docs/training.md and docs/papers.md.
"""


def make_parser(recipe, family, description=None, switches=None, prog=None):
    """The `argparse.ArgumentParser` of recipe `recipe` (a name such as "luong_global_dot").

    Args:
        recipe: the recipe's name; the default output folder is `saved_models/<recipe>/`.
        family: "bahdanau" or "luong": picks the paper optimizer and the default epochs.
        description: --help text (a recipe passes its module docstring).
        switches: which architecture switches the recipe accepts, a subset of
            `ARCHITECTURE_SWITCHES` (default: all for Luong, none but dropout for Bahdanau).
        prog: the command's name in --help and errors (default: `python recipes/<recipe>.py`).

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
        prog=prog or f"python recipes/{recipe}.py",
        description=description,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(recipe=recipe, family=family)
    add_data_flags(parser)
    add_model_flags(parser, family, switches)
    add_training_flags(parser, family)
    add_output_flags(parser, recipe)
    add_start_flags(parser)
    return parser
