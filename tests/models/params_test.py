"""`python -m zoo params`: its usage line and the defaults its help shows."""

import runpy
import sys

import pytest

from zoo.models import params
from zoo.models.presets import DEFAULT_VOCAB_SIZES


def help_text(capsys, run):
    with pytest.raises(SystemExit) as stopped:
        run()
    assert stopped.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_usage_names_the_command_users_run_and_help_shows_the_library_defaults(capsys):
    text = help_text(capsys, lambda: params.main(["--help"]))
    assert text.startswith("usage: python -m zoo params ")
    bahdanau, luong = DEFAULT_VOCAB_SIZES["bahdanau"], DEFAULT_VOCAB_SIZES["luong"]
    assert f"Bahdanau presets (default: {bahdanau})" in text
    assert f"Luong presets (default: {luong})" in text
    assert "preset size (default: paper)" in text


def test_a_changed_library_default_changes_the_help(capsys, monkeypatch):
    monkeypatch.setitem(DEFAULT_VOCAB_SIZES, "luong", 12345)
    assert "Luong presets (default: 12345)" in help_text(capsys, lambda: params.main(["--help"]))


def test_run_as_a_module_it_names_the_module(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["params.py", "--help"])
    monkeypatch.delitem(sys.modules, "zoo.models.params")  # run afresh, as `python -m` does
    run = lambda: runpy.run_module("zoo.models.params", run_name="__main__")  # noqa: E731
    assert help_text(capsys, run).startswith("usage: python -m zoo.models.params ")
