"""Where a recipe run starts from: `--config` (a recorded run's settings) and `--init-from`
(a trained translator's weights and tokenizers, for fine-tuning).

- `--config FILE|FOLDER|NAME`: the settings of a run.json (a file, the run.json of a folder,
  or of a shipped translator or hub handle, `zoo.hub.resolve_translator`) become the flags'
  defaults; flags given on the command line replace them. The run retrains the recorded
  model (its output folder is the recipe's default unless --out is given).
- `--init-from FOLDER|NAME|hf://owner/name`: the run keeps that translator's tokenizers
  (so its vocabulary: pieces the new corpus has and the vocabulary lacks train as the
  unknown id, and the run says how many) and starts from its weights. The model the recipe
  builds must be the same preset with the same shapes; another one is refused, naming both.
  Without --learning-rate it trains at `FINE_TUNING_SHARE` of the optimizer's initial rate.
"""

import argparse
import json
import os
import shutil

import tensorflow as tf

from zoo.constants import RUN_FILE, SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR, UNK_ID
from zoo.errors import UsageError
from zoo.hub import HUB_PREFIX, resolve_translator

FINE_TUNING_SHARE = 1 / 8
"""--init-from without --learning-rate: the optimizer's initial learning rate times this, the
rate the main job's schedule ends at (halved after epochs 9, 10 and 11). Measured on the
shipped main job, one epoch on 2,000 pairs: validation BLEU -2.53 at the full rate, -0.29 at
an eighth (bench/RESULTS.md, "Shipped translators")."""

NOT_SETTINGS = ("out", "resume", "config", "debug", "recipe", "family")
"""run.json keys that --config does not take: where and how this run writes, which recipe."""

START_HELP = (
    "a folder, the name of a shipped translator (python -m zoo list) or a hub handle "
    f"{HUB_PREFIX}owner/name"
)


def add_start_flags(parser):
    """--config and --init-from (the "start" group)."""
    start = parser.add_argument_group("starting point")
    start.add_argument(
        "--config",
        metavar="RUN",
        help=f"take the settings of a recorded run as the defaults: its {RUN_FILE}, given as "
        f"the file or as {START_HELP}; flags on the command line replace them "
        "(e.g. retrain a shipped translator from its card)",
    )
    start.add_argument(
        "--init-from",
        metavar="MODEL",
        help=f"fine-tune: start from the weights and keep the tokenizers of MODEL, {START_HELP}; "
        "it must be a model of this recipe's preset at the same --size and architecture "
        "flags; without --learning-rate it trains at an eighth of the optimizer's rate "
        "(default: train from scratch with new tokenizers)",
    )


def run_settings(path):
    """The settings of a run.json (`path`: the file, or a folder, shipped name or hub handle
    holding one), as a dict."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        path = os.path.join(resolve_translator(path), RUN_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            settings = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"--config {path}: no such file.") from None
    except ValueError as error:
        raise UsageError(f"--config {path} is not valid JSON ({error}).") from None
    if not isinstance(settings, dict) or "recipe" not in settings:
        raise UsageError(f"--config {path} holds no run's settings (a recipe's {RUN_FILE}).")
    return path, settings


def apply_config(parser, argv, recipe):
    """Sets `parser`'s defaults from the run.json that `argv`'s --config names (if any)."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--config")
    given, _ = early.parse_known_args(argv)
    if given.config is None:
        return
    try:
        path, settings = run_settings(given.config)
    except ValueError as error:
        parser.error(str(error))
    if settings["recipe"] != recipe:
        parser.error(
            f"--config {path} is a run of recipe {settings['recipe']!r}, not {recipe!r}: run "
            f"python -m zoo train --config {given.config}, which trains it as it was trained"
        )
    known = vars(parser.parse_args([]))
    defaults = {k: v for k, v in settings.items() if k in known and k not in NOT_SETTINGS}
    if "max_minutes" in settings and settings["max_minutes"] is None:
        defaults["max_minutes"] = 0  # the run had no time limit
    parser.set_defaults(**defaults)


def fine_tuning_defaults(args):
    """With --init-from and no --learning-rate: `FINE_TUNING_SHARE` of the optimizer's
    initial learning rate (`args.optimizer` resolved)."""
    from zoo.training.optimizers import OPTIMIZER_SETTINGS

    if getattr(args, "init_from", None) and args.learning_rate is None:
        rate = OPTIMIZER_SETTINGS[args.optimizer]["learning_rate"] * FINE_TUNING_SHARE
        args.learning_rate = rate
    return args


def init_folder(args):
    """The local folder of --init-from, or None."""
    if not getattr(args, "init_from", None):
        return None
    return resolve_translator(args.init_from)


def init_tokenizers(args, out, chief, say):
    """The tokenizers of --init-from's folder, saved into `out` as the run's own."""
    from zoo.text import load_tokenizer

    folder = init_folder(args)
    made = []
    for name in (SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR):
        source = os.path.join(folder, name)
        if not os.path.isdir(source):
            raise ValueError(f"--init-from {args.init_from}: {name}/ is missing in {folder}.")
        if chief:
            shutil.rmtree(os.path.join(out, name), ignore_errors=True)
            shutil.copytree(source, os.path.join(out, name))
        made.append(load_tokenizer(source))
    say(
        f"Tokenizers: those of {args.init_from} ({made[0].vocab_size} and "
        f"{made[1].vocab_size} ids; --tokenizer, --vocab-size and --shared-vocabulary do not "
        "apply)"
    )
    return made


def unknown_pieces(tokenizer, sentences, batch=4096):
    """(pieces that are the unknown id, all pieces) of `sentences` under `tokenizer`."""
    unknown = total = 0
    for start in range(0, len(sentences), batch):
        ids = tokenizer.tokenize(tf.constant(sentences[start : start + batch])).flat_values
        unknown += int(tf.reduce_sum(tf.cast(ids == UNK_ID, tf.int64)))
        total += int(tf.size(ids))
    return unknown, total


def report_unknown(args, sides, tokenizers, say):
    """Says how many training pieces each side's vocabulary lacks (they train as the
    unknown id)."""
    parts = []
    for lang, sentences, tokenizer in zip(
        (args.source_lang, args.target_lang), sides, tokenizers, strict=True
    ):
        unknown, total = unknown_pieces(tokenizer, list(sentences))
        share = 100.0 * unknown / max(total, 1)
        parts.append(f"{unknown:,} of {total:,} {lang} pieces ({share:.2f}%)")
    say(
        f"Unknown pieces in the training data: {' and '.join(parts)} are not in the "
        f"vocabulary of {args.init_from}; they train as the unknown id"
    )


def _description(model, size=None):
    at = f" at --size {size}" if size else ""
    return f"{model.name}{at} ({int(model.count_params()):,} parameters)"


def init_weights(model, args, say):
    """Sets `model`'s weights to --init-from's model's; a UsageError naming both models when
    the preset or a weight's shape differs."""
    from zoo.translator.output_folder import load_model_file, model_file

    folder = init_folder(args)
    trained = load_model_file(os.path.join(folder, model_file(folder)))
    size = _recorded_size(folder)
    weights, expected = trained.get_weights(), model.get_weights()
    shapes = [w.shape for w in weights] == [w.shape for w in expected]
    if trained.name != model.name or not shapes:
        raise UsageError(
            f"--init-from {args.init_from} holds {_description(trained, size)}; this run "
            f"builds {_description(model, args.size)}. Fine-tune with the recipe, --size and "
            "architecture flags of its run (its run.json), or train from scratch."
        )
    model.set_weights(weights)
    say(f"Weights: from {args.init_from} ({_description(trained, size)})")


def _recorded_size(folder):
    try:
        with open(os.path.join(folder, RUN_FILE), encoding="utf-8") as f:
            return json.load(f).get("size")
    except (OSError, ValueError, AttributeError):
        return None
