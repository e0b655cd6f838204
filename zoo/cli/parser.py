"""The argparse parser of `python -m zoo`: one subcommand per module of `zoo.cli`."""

import argparse

from zoo.cli.aer import add_aer_command
from zoo.cli.average import add_average_command
from zoo.cli.compare import add_compare_command
from zoo.cli.evaluate import add_evaluate_command
from zoo.cli.export import add_export_command, add_list_command, add_push_command
from zoo.cli.score import add_score_command
from zoo.cli.serve import add_serve_command
from zoo.cli.translate import add_translate_command


def build_parser():
    """The argparse parser of `python -m zoo` (every flag has a --help line)."""
    return _parser_and_commands()[0]


def parse_arguments(argv):
    """`argv` (the arguments after `python -m zoo`) parsed. `translate` takes its sentences
    before, between or after its flags (`translate DIR --alignments "Ein Hund rennt."`):
    argparse alone would give SENTENCE only the words right after MODEL_DIR."""
    parser, commands = _parser_and_commands()
    if argv[:1] == ["translate"]:
        namespace = argparse.Namespace(command="translate")
        return commands.choices["translate"].parse_intermixed_args(argv[1:], namespace)
    return parser.parse_args(argv)


def _parser_and_commands():
    """(the parser, its subparsers action)."""
    parser = argparse.ArgumentParser(
        prog="python -m zoo",
        description="Attention-based recurrent NMT (Bahdanau et al. 2014; Luong et al. 2015).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_translate_command(commands)
    add_evaluate_command(commands)
    add_aer_command(commands)
    add_average_command(commands)
    add_serve_command(commands)
    add_compare_command(commands)
    add_export_command(commands)
    add_score_command(commands)
    add_list_command(commands)
    add_push_command(commands)
    commands.add_parser(
        "train",
        help="train a preset with the recipes' workflow (python -m zoo train PRESET --help)",
        add_help=False,
    )
    commands.add_parser(
        "params",
        help="print the parameter counts of the presets (python -m zoo params --help)",
        add_help=False,
    )
    return parser, commands
