"""Training a preset of `zoo.models` with the recipes' workflow and flags, without a recipe
file: `python -m zoo train PRESET [flags]`.

A recipe builds its functional model in the open; `zoo.models.build(PRESET)` builds the
same layers with the same names and shapes (`tests/workflow/preset_run_test.py` checks it
for every recipe), so a preset trains through the same `main` as its recipe. A recorded
run (`--config RUN`: a run.json, a run's folder, a shipped name or a hub handle) trains
again under the recipe name it records, so its output folder and settings are the
recipe's own.
"""

import argparse
import sys

from zoo.models import build, presets
from zoo.workflow.flags import add_mode_argument, hyperparameters, preset_switches, recipe_preset
from zoo.workflow.run import main
from zoo.workflow.starting_points import run_settings

PROG = "python -m zoo train"
DESCRIPTION = f"""Trains a preset of zoo.models with the recipes' workflow: data, tokenizers,
training with checkpoints (a plain re-run resumes), the validation choice, the test
scores and the output folder, exactly as `python recipes/<recipe>.py` does.

    {PROG} luong_local_p_general                      # Multi30k de->en, --size base
    {PROG} bahdanau_rnnsearch --data anki-spa-eng --source-lang es --target-lang en
    {PROG} --config luong_local_general_multi30k_de_en   # a recorded run's settings

Presets: {", ".join(presets())}."""


def build_model(args, source_vocab_size, target_vocab_size):
    """The workflow's `build_model`: `zoo.models.build` of the run's preset at `--size`,
    with the architecture switches given."""
    preset = recipe_preset(args.recipe, getattr(args, "mode", None))
    arguments = hyperparameters(args, preset)
    return build(preset, args.size, source_vocab_size, target_vocab_size, **arguments)


def train_preset(argv):
    """`python -m zoo train PRESET [flags]` or `python -m zoo train --config RUN [flags]`."""
    argv = list(argv)
    if argv and not argv[0].startswith("-"):
        recipe = preset = argv.pop(0)
        if preset not in presets():
            return _usage_error(f"unknown preset {preset!r}; presets: {', '.join(presets())}.")
    else:
        early = argparse.ArgumentParser(prog=PROG, add_help=False)
        early.add_argument("--config")
        given, _ = early.parse_known_args(argv)
        if given.config is None:
            if {"-h", "--help"} & set(argv):
                print(f"usage: {PROG} PRESET [flags]  (or --config RUN [flags])\n")
                print(DESCRIPTION)
                print(f"\n{PROG} PRESET --help lists the flags.")
                return 0
            return _usage_error("name a preset (python -m zoo params lists them) or --config RUN.")
        try:
            settings = run_settings(given.config)[1]
            recipe = settings["recipe"]
            preset = recipe_preset(recipe, settings.get("mode"))
        except (ValueError, OSError) as error:  # a UsageError is a ValueError
            return _usage_error(str(error))
    local_recipe = recipe != preset  # a local-attention recipe's run: its --mode too
    return main(
        build_model,
        recipe=recipe,
        description=DESCRIPTION,
        switches=preset_switches(preset),
        add_arguments=add_mode_argument if local_recipe else None,
        argv=argv,
        prog=f"{PROG} {preset}" if not local_recipe else f"{PROG} --config RUN",
    )


def _usage_error(message):
    print(f"usage: {PROG} PRESET [flags]  (or --config RUN [flags])", file=sys.stderr)
    print(f"{PROG}: error: {message}", file=sys.stderr, flush=True)
    return 2
