"""Every `python -m zoo translate|evaluate|aer|average` command that README.md, docs/*.md and
the command line's own docstring show runs as written: each is parsed, and the translate,
evaluate and aer ones run on tiny output folders named as the pages name them (evaluate on
the first sentences of its split)."""

import io
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from zoo import cli
from zoo.cli.parser import parse_arguments

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DOCSTRINGS = [REPO / "zoo" / "cli" / "__init__.py", REPO / "zoo" / "training" / "checkpoints.py"]
COMMAND = re.compile(r"python -m zoo (translate|evaluate|aer|average)\b.*")
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)


def documented_commands():
    """(where, command line) of every command in the pages' ```bash blocks and the
    docstrings' example lines."""
    found = []
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        for block in BLOCK.finditer(text):
            line = text[: block.start()].count("\n") + 1
            for k, row in enumerate(block.group(1).splitlines(), start=1):
                if COMMAND.search(row):
                    found.append((f"{path.name}:{line + k}", row))
    for path in DOCSTRINGS:
        for number, row in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if row.startswith("    ") and COMMAND.search(row):
                found.append((f"{path.relative_to(REPO)}:{number}", row.strip()))
    return found


COMMANDS = documented_commands()


def split_command(row):
    """(argv after `python -m zoo`, stdin text or None) of a documented shell line."""
    stdin = None
    if "|" in row:  # cat FILE | python -m zoo ...
        stdin, row = row.split("|", 1)
    row = row.split("  #", 1)[0]
    words = shlex.split(row)
    if "<" in words:  # ... < FILE
        stdin = words[words.index("<") + 1]
        words = words[: words.index("<")]
    assert words[:3] == ["python", "-m", "zoo"], row
    return words[3:], stdin


def test_the_pages_show_each_command():
    shown = {split_command(row)[0][0] for _, row in COMMANDS}
    assert shown == {"translate", "evaluate", "aer", "average"}


@pytest.mark.parametrize("where, row", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_each_documented_command_parses_as_meant(where, row):
    argv, _ = split_command(row)
    args = parse_arguments(argv)
    quoted = [w for w in argv if " " in w]  # the sentences of the example
    if args.command == "translate":
        assert args.sentences == quoted, f"{where}: {row}"
    for directory in getattr(args, "ensemble", None) or []:
        assert directory.startswith("saved_models/"), f"{where}: {row}"


@pytest.fixture(scope="module")
def scratch(model_folder, tmp_path_factory):
    """A folder holding the saved_models/ the pages name (copies of one tiny folder) and
    the files their commands read."""
    root = tmp_path_factory.mktemp("commands")
    names = set()
    for _, row in COMMANDS:
        names.update(re.findall(r"saved_models/([\w.-]+)", row))
    for name in names:  # with the file `python -m zoo average` writes
        folder = shutil.copytree(model_folder[0], root / "saved_models" / name)
        shutil.copyfile(folder / "model.keras", folder / "model.averaged.keras")
    lines = {
        "sentences.de": "Ein Hund rennt.\nZwei Männer lachen.\n",
        "mono.en": "A dog runs.\nTwo men laugh.\n",
        "s.de": "Ein Hund rennt.\n",
        "t.en": "A dog runs.\n",
        "gold.txt": "0-0 1-1 2-2\n",
    }
    for name, text in lines.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "g.txt").write_text(lines["gold.txt"], encoding="utf-8")
    return root


RUNNABLE = [(w, r) for w, r in COMMANDS if " average " not in r]  # average: needs checkpoints


@pytest.mark.parametrize("where, row", RUNNABLE, ids=[w for w, _ in RUNNABLE])
def test_each_documented_command_runs(where, row, scratch, monkeypatch, capsys):
    argv, stdin = split_command(row)
    monkeypatch.chdir(scratch)
    if stdin is not None:
        name = stdin.split()[-1]
        monkeypatch.setattr(sys, "stdin", io.StringIO((scratch / name).read_text("utf-8")))
    if argv[0] == "evaluate":
        argv += ["--limit", "3"]
    assert cli.main(argv) == 0, f"{where}: {row}"
    out = capsys.readouterr().out
    assert out.endswith("\n"), f"{where}: {row} printed nothing"  # (untrained: "" may be one)


def test_sentences_after_the_flags_in_the_real_command(model_folder):
    """`python -m zoo translate DIR --alignments "Ein Hund rennt."`, as a user types it."""
    import subprocess

    folder, translator = model_folder
    command = [sys.executable, "-m", "zoo", "translate", str(folder)]
    command += ["--alignments", "Ein Hund rennt.", "--beam-size", "1", "Zwei Männer."]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    expected = [
        f"{t.translation} ||| {t.alignment()}"
        for t in translator.translate_with_attention(["Ein Hund rennt.", "Zwei Männer."], 1)
    ]
    assert done.stdout.split("\n") == [*expected, ""]
