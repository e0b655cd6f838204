"""The argparse parser of `python -m zoo`: one subcommand per module of `zoo.cli`."""

import argparse

from zoo.cli.aer import add_aer_command
from zoo.cli.average import add_average_command
from zoo.cli.compare import add_compare_command
from zoo.cli.evaluate import add_evaluate_command
from zoo.cli.serve import add_serve_command
from zoo.cli.translate import add_translate_command


def build_parser():
    """The argparse parser of `python -m zoo` (every flag has a --help line)."""
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
    commands.add_parser(
        "params",
        help="print the parameter counts of the presets (python -m zoo params --help)",
        add_help=False,
    )
    return parser
