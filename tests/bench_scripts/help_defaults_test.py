"""Every benchmark script's --help states the defaults its flags really have: a
"(default: X)" in a flag's help is X, the parser's default, or says what None stands for."""

import argparse
import importlib
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

SCRIPTS = sorted(
    path.stem
    for path in BENCH.glob("*.py")
    if re.search(r"^def (main|parse_args)\(argv=None\)", path.read_text(), re.M)
)
STATED = re.compile(r"\(default: ([^;()]+?)[;)]")


class Parsed(Exception):
    def __init__(self, parser):
        self.parser = parser


def parser_of(module, monkeypatch):
    """The parser `module` builds, caught where it would parse the command line."""

    def catch(self, *args, **kwargs):
        raise Parsed(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", catch)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", catch)
    entry = getattr(module, "parse_args", None) or module.main
    with pytest.raises(Parsed) as caught:
        entry([])
    return caught.value.parser


def same(stated, default):
    """Whether the word `stated` is `default`: numbers compared as numbers (60 is 60.0), a
    path inside the repository by its path from the repository's root."""
    try:
        return float(stated) == float(default)
    except (TypeError, ValueError):
        return stated in (str(default), os.path.relpath(str(default), REPO))


def test_the_scripts_are_found():
    assert {"paper_table", "train_speed", "decode_speed", "serve_load"} <= set(SCRIPTS), SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_stated_default_is_the_flags_default(script, monkeypatch):
    parser = parser_of(importlib.import_module(script), monkeypatch)
    for action in parser._actions:
        if not action.help or action.default is None or action.default == argparse.SUPPRESS:
            continue
        for stated in STATED.findall(action.help % dict(vars(action), prog=parser.prog)):
            value = re.split(r",?\s", stated)[0]
            assert same(value, action.default), (
                f"{script} {'/'.join(action.option_strings)}: help says (default: {stated}), "
                f"the flag's default is {action.default!r}"
            )
