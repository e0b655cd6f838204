"""Loading the translator a command names: an output folder, its SavedModel, or an ensemble."""

import os

from zoo.cli.flags import check_input_file
from zoo.errors import UsageError

SEARCH_FLAGS = ("beam_size", "batch_size", "length_penalty", "coverage_penalty")


def is_saved_model(directory):
    """Whether `directory` is a SavedModel (the serving/ folder of a run)."""
    return os.path.isfile(os.path.join(directory, "saved_model.pb"))


def search_overrides(args):
    """The search flags given on the command line, as Translator settings."""
    return {name: getattr(args, name) for name in SEARCH_FLAGS if getattr(args, name) is not None}


def unknown_options(args):
    """`Translator.translate`'s replace_unknown/dictionary keywords from the flags."""
    if args.unk_dictionary and not args.replace_unk:
        raise UsageError("--unk-dictionary is used with --replace-unk only.")
    if not args.replace_unk:
        return {}
    if is_saved_model(args.model_dir):
        if args.unk_dictionary:
            raise UsageError("--unk-dictionary needs the model folder, not a SavedModel.")
        return {"replace_unknown": True}
    from zoo.unknown_words import read_dictionary

    dictionary = None
    if args.unk_dictionary:
        dictionary = read_dictionary(check_input_file(args.unk_dictionary, "--unk-dictionary"))
    return {"replace_unknown": True, "dictionary": dictionary}


def load_translator(args):
    """The translator of `args.model_dir` with the command line's search flags (and
    `--ensemble`'s other models)."""
    if is_saved_model(args.model_dir):
        return _saved_model_translator(args)
    from zoo.translator import Translator

    translator = Translator.from_directory(
        args.model_dir, model_file=args.model_file, **search_overrides(args)
    )
    if not args.ensemble:
        return translator
    from zoo.models import Ensemble
    from zoo.translator.output_folder import load_model_file

    members = [translator.model]
    for directory in args.ensemble:
        if not os.path.isdir(directory):
            hint = ""
            if args.command == "translate":
                hint = (
                    " (--ensemble takes every word up to the next flag: give sentences before it)"
                )
            raise UsageError(f"--ensemble {directory!r}: no such folder{hint}.")
        name = args.model_file or Translator.model_file(directory)
        members.append(load_model_file(os.path.join(directory, name)))
    return Translator(
        Ensemble(members),
        translator.source_tokenizer,
        translator.target_tokenizer,
        **translator.get_config(),
    )


def _saved_model_translator(args):
    from zoo.export import SavedModelTranslator

    if args.ensemble:
        raise UsageError("--ensemble needs model folders (model.keras), not a SavedModel.")
    if args.command not in ("translate", "serve"):
        raise ValueError(
            f"{args.model_dir} is a SavedModel; `evaluate` needs the output folder that "
            "holds model.keras (usually its parent)."
        )
    for flag in ("length_penalty", "coverage_penalty"):
        if getattr(args, flag) is not None:
            raise UsageError(
                f"--{flag.replace('_', '-')} is fixed in a SavedModel (set at export time)."
            )
    given = {"batch_size": args.batch_size} if args.batch_size is not None else {}
    return SavedModelTranslator(args.model_dir, **given)  # else the library's batch size
