"""`python -m zoo score DIR --source F --target F`: one line per pair, its total and
per-token log-probability, equal to Translator.score's; bad files named."""

import subprocess
import sys

import pytest

from zoo import cli

SOURCES = ["Ein Hund rennt.", "", "Zwei Männer lachen auf einer Bank.", "Eine Frau."]
TARGETS = ["A dog runs.", "", "Two men laugh on a bench.", ""]


@pytest.fixture
def files(tmp_path):
    source, target = tmp_path / "s.de", tmp_path / "t.en"
    source.write_text("".join(f"{s}\n" for s in SOURCES), encoding="utf-8")
    target.write_bytes("".join(f"{t}\r\n" for t in TARGETS).encode())  # CRLF read as LF
    return source, target


def _numbers(text):
    return [tuple(float(x) for x in line.split("\t")) for line in text.splitlines()]


def test_score_prints_the_translators_scores(model_folder, files, capsys, tmp_path):
    directory, translator = model_folder
    source, target = files
    argv = ["score", str(directory), "--source", str(source), "--target", str(target)]
    assert cli.main([*argv, "--batch-size", "2"]) == 0
    printed = _numbers(capsys.readouterr().out)
    expected = translator.score(SOURCES, TARGETS)
    assert len(printed) == len(expected) == 4
    for (total, per_token), (want_total, want_per_token) in zip(printed, expected, strict=True):
        assert total == pytest.approx(want_total, abs=6e-5)
        assert per_token == pytest.approx(want_per_token, abs=6e-5)
    assert printed[1] == (0.0, 0.0) and printed[3][0] < 0  # "" -> "" is sure; END alone is not
    output = tmp_path / "scores.tsv"
    assert cli.main([*argv, "--output", str(output)]) == 0
    assert capsys.readouterr().out == ""
    assert _numbers(output.read_text(encoding="utf-8")) == printed


def test_score_refuses_files_that_do_not_pair_up(model_folder, files, tmp_path):
    directory, _ = model_folder
    source, _ = files
    short = tmp_path / "short.en"
    short.write_text("A dog.\n", encoding="utf-8")
    for target, message in ((short, "4 and 1 lines"), (tmp_path / "none.en", "no such file")):
        done = subprocess.run(
            [sys.executable, "-m", "zoo", "score", str(directory), "--source", str(source),
             "--target", str(target)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_score_is_a_command_whose_flags_have_help():
    import argparse

    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert "score" in commands.choices and "score" in cli.COMMANDS
    for action in commands.choices["score"]._actions:
        assert action.help, f"score: {action.dest} has no --help text"
