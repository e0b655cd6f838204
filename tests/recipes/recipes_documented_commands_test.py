"""Every `python recipes/<name>.py FLAGS` line that README.md, CONTRIBUTING.md, docs/*.md, the
recipes' own docstrings (their --help), bench/ and zoo/ show is accepted by that recipe's
command line as written: parsed and its defaults resolved, as `zoo.workflow.main` does before
it trains (the training itself is replaced by a stub). bench/RESULTS.md is left out: its
commands are dated records of what ran."""

import re
import runpy
import shlex
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "recipes"
SOURCES = [
    REPO / "README.md",
    REPO / "CONTRIBUTING.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted(RECIPES.glob("*.py")),
    *sorted((REPO / "bench").glob("*.py")),
    *sorted((REPO / "bench").glob("*.sh")),
    *sorted((REPO / "zoo").rglob("*.py")),
]
COMMAND = re.compile(r"python recipes/(\w+)\.py((?:[^`#\n|)\"\\]|\\\n)*)")
PLACEHOLDER = re.compile(r"\.\.\.|[\[{<]|\bDIR\b|\bN\b|\bFILE\b|\$")


def documented_commands():
    """(where, recipe, flags) of every command line the sources show, placeholders left out."""
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        for match in COMMAND.finditer(text):
            flags = match.group(2).replace("\\\n", " ").split("&&")[0].strip().rstrip(".,;:'")
            if PLACEHOLDER.search(flags):
                continue
            line = text[: match.start()].count("\n") + 1
            found.append((f"{path.relative_to(REPO)}:{line}", match.group(1), flags))
    return found


COMMANDS = documented_commands()


def test_the_sources_show_commands_of_most_recipes():
    shown = {recipe for _, recipe, _ in COMMANDS}
    assert len(COMMANDS) > 40 and len(shown) > 8, (len(COMMANDS), shown)
    assert shown <= {path.stem for path in RECIPES.glob("*.py")}, shown


def accepted(recipe, flags, monkeypatch, capsys):
    """(exit status, stderr) of `python recipes/<recipe>.py FLAGS` up to where it would train."""
    run_module = sys.modules["zoo.workflow.run"]
    monkeypatch.setattr(run_module, "run", lambda build_model, args: {})
    monkeypatch.setattr(sys, "argv", [str(RECIPES / f"{recipe}.py"), *shlex.split(flags)])
    monkeypatch.syspath_prepend(str(RECIPES))
    status = 0
    try:
        if recipe == "tune":  # its own command line (zoo.tuning), no training entry point
            module = runpy.run_path(str(RECIPES / "tune.py"), run_name="tune_recipe")
            module["parser"]().parse_args(sys.argv[1:])
        else:
            runpy.run_path(str(RECIPES / f"{recipe}.py"), run_name="__main__")
    except SystemExit as stopped:
        status = stopped.code
    return status, capsys.readouterr().err


@pytest.mark.parametrize("where, recipe, flags", COMMANDS, ids=[w for w, _, _ in COMMANDS])
def test_each_documented_recipe_command_is_accepted(where, recipe, flags, monkeypatch, capsys):
    import zoo.workflow.run  # noqa: F401  (the module whose `run` the stub replaces)

    status, err = accepted(recipe, flags, monkeypatch, capsys)
    assert not status, f"{where}: python recipes/{recipe}.py {flags}\n{err}"


def test_a_flag_the_recipe_lacks_is_refused(monkeypatch, capsys):
    import zoo.workflow.run  # noqa: F401

    status, err = accepted("luong_global_dot", "--mode monotonic", monkeypatch, capsys)
    assert status == 2 and "--mode" in err
    for recipe in ("luong_global_general", "luong_global_location"):  # no window to set
        status, err = accepted(recipe, "--window 5", monkeypatch, capsys)
        assert status == 2 and "--window" in err, recipe
    assert accepted("luong_local_general", "--window 5", monkeypatch, capsys)[0] == 0
