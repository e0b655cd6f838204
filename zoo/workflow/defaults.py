"""The defaults a recipe's flags leave open, filled in from the library after parsing.

- `resolve_defaults(args)`: the languages and test split (the corpus registry,
  `zoo.data.corpora`), the training profile (`zoo.training.profiles`: the recipes' defaults,
  or the paper's own settings with `--optimizer paper`), the loss normalisation and the
  output folder.
- `hyperparameters(args, preset)`: the preset's keyword arguments at `--size`
  (`zoo.models.presets`) with the architecture switches given on the command line.
- `recipe_preset(recipe, mode)` and `preset_switches(preset)`: the preset a recipe trains
  and the architecture switches that apply to it.
"""

import os
import re

from zoo.data.corpora import CORPORA, complete_languages, default_test_split, find_corpus
from zoo.errors import UsageError
from zoo.models import attention_presets, family, preset_arguments, presets
from zoo.training import default_loss_normalization
from zoo.training.profiles import training_profile
from zoo.workflow.model_flags import ARCHITECTURE_SWITCHES, DEFAULT_SWITCHES
from zoo.workflow.starting_points import fine_tuning_defaults
from zoo.workflow.training_flags import check_training_flags


def test_split_help():
    """The default test split of each corpus, for a help text."""
    others = [name for name, info in CORPORA.items() if info.test_split == "test"]
    named = [
        f"{info.test_split} for {name}" for name, info in CORPORA.items() if name not in others
    ]
    return ", ".join(named + ["test otherwise"])


def resolve_languages(data, source_lang, target_lang, family=None):
    """(source, target): the given languages, the missing ones from the corpus' default pair
    in the registry (`zoo.data.corpora.complete_languages`)."""
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
