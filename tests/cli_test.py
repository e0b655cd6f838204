"""Tests of the `python -m zoo` command line (zoo.cli)."""

import argparse
import io
import json
import subprocess
import sys

import pytest
from translator_toy import MIXED, toy_translator

from zoo import cli


@pytest.fixture(scope="module")
def model_dir(data_dir, tmp_path_factory):
    """An output folder (model.keras, tokenizers, translator.json) and its translations."""
    directory = tmp_path_factory.mktemp("model")
    translator = toy_translator("bahdanau_rnnsearch", beam_size=2)
    metadata = {"data": "multi30k", "source_lang": "de", "target_lang": "fr"}
    translator.save(directory, serving=False, metadata=metadata)
    return directory, translator


def test_translate_arguments(model_dir, capsys):
    directory, translator = model_dir
    assert cli.main(["translate", str(directory), *MIXED[:4]]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[:4] == translator.translate(MIXED[:4]) and lines[4:] == [""]


def test_translate_stdin_line_by_line(model_dir, capsys, monkeypatch):
    directory, translator = model_dir
    sentences = ["Ein Hund rennt.", "", "Zwei Männer lachen.", "Eine Frau."]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(sentences) + "\n"))
    assert cli.main(["translate", str(directory), "--batch-size", "3", "--beam-size", "1"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[:4] == translator.translate(sentences, beam_size=1) and lines[4:] == [""]


def test_translate_attention(model_dir, capsys, tmp_path):
    directory, translator = model_dir
    plots = tmp_path / "plots"
    cli.main(
        ["translate", str(directory), "Ein Hund rennt.", "--attention", "--plot-dir", str(plots)]
    )
    out = capsys.readouterr().out
    (expected,) = translator.translate_with_attention(["Ein Hund rennt."])
    assert out.startswith(expected.translation + "\n# score ")
    assert "▁Hund" in out and "</s>" in out
    assert (plots / "attention_1.png").stat().st_size > 0


def test_evaluate_writes_scores(model_dir, capsys, tmp_path):
    directory, translator = model_dir
    output = tmp_path / "scores.json"
    hypotheses = tmp_path / "hyp.txt"
    args = ["evaluate", str(directory), "--limit", "6", "--output", str(output)]
    assert cli.main([*args, "--hypotheses", str(hypotheses), "--beam-size", "1"]) == 0
    out = capsys.readouterr().out
    result = json.loads(output.read_text())
    assert result["sentences"] == 6 and result["split"] == "test2016"
    # --source-lang/--target-lang default to the languages in translator.json.
    assert (result["data"], result["source_lang"], result["target_lang"]) == (
        "multi30k",
        "de",
        "fr",
    )
    assert result["beam_size"] == 1
    assert f"BLEU = {result['bleu']:.2f}  {result['bleu_signature']}" in out
    assert result["chrf_signature"] in out
    assert 0.0 <= result["bleu"] <= 100.0 and 0.0 <= result["chrf"] <= 100.0
    with open(f"{cli.os.environ['ZOO_DATA_DIR']}/multi30k/test2016.de", encoding="utf-8") as f:
        sources = f.read().splitlines()[:6]
    assert hypotheses.read_text().splitlines() == translator.translate(sources, beam_size=1)


def test_evaluate_bad_limit(model_dir):
    with pytest.raises(ValueError, match="--limit"):
        cli.main(["evaluate", str(model_dir[0]), "--limit", "0"])


def test_params_delegates(capsys):
    cli.main(["params", "--size", "tiny", "--preset", "luong_base", "--luong-vocab", "100"])
    out = capsys.readouterr().out
    assert "luong_base" in out and "parameters" in out


def test_every_flag_has_help():
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) == {"translate", "evaluate", "params"}
    for name in ("translate", "evaluate"):
        for action in subparsers.choices[name]._actions:
            assert action.help, f"{name}: {action.dest} has no --help text"


def test_missing_model_dir_is_clear(tmp_path):
    with pytest.raises(ValueError, match="not a zoo output folder"):
        cli.main(["translate", str(tmp_path), "Ein Hund."])


def test_python_m_zoo_help():
    done = subprocess.run(
        [sys.executable, "-m", "zoo", "translate", "--help"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--beam-size" in done.stdout and "stdin" in done.stdout
