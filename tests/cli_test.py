"""Tests of the `python -m zoo` command line (zoo.cli)."""

import argparse
import io
import json
import os
import re
import subprocess
import sys

import pytest
from translator_toy import MIXED, toy_translator

from zoo import cli
from zoo.errors import UsageError
from zoo.workflow.arguments import make_parser


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
    with open(f"{os.environ['ZOO_DATA_DIR']}/multi30k/test2016.de", encoding="utf-8") as f:
        sources = f.read().splitlines()[:6]
    assert hypotheses.read_text().splitlines() == translator.translate(sources, beam_size=1)


def test_evaluate_bad_limit(model_dir, capsys):
    with pytest.raises(SystemExit) as stopped:  # a usage error: argparse's status 2
        cli.main(["evaluate", str(model_dir[0]), "--limit", "0"])
    assert stopped.value.code == 2 and "--limit" in capsys.readouterr().err


def test_params_delegates(capsys):
    cli.main(["params", "--size", "tiny", "--preset", "luong_base", "--luong-vocab", "100"])
    out = capsys.readouterr().out
    assert "luong_base" in out and "parameters" in out


def test_every_flag_has_help():
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    expected = {
        "translate",
        "evaluate",
        "aer",
        "average",
        "serve",
        "compare",
        "export",
        "score",
        "list",
        "push",
        "train",
        "params",
    }
    assert set(subparsers.choices) == expected
    for name in sorted(expected - {"params", "train"}):  # their own parsers (--help)
        for action in subparsers.choices[name]._actions:
            assert action.help, f"{name}: {action.dest} has no --help text"


def test_missing_model_dir_is_one_line_and_status_1(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["translate", str(tmp_path), "Ein Hund."])
    assert stopped.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("python -m zoo translate: error: ") and "not a zoo output folder" in err
    with pytest.raises(ValueError, match="not a zoo output folder"):  # --debug: the traceback
        cli.main(["translate", str(tmp_path), "Ein Hund.", "--debug"])


@pytest.mark.parametrize(
    "flags", [["--beam-size", "0"], ["--batch-size", "x"], ["--length-penalty", "-1"]]
)
def test_bad_flag_values_are_usage_errors(tmp_path, flags, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["translate", str(tmp_path), "Ein Hund.", *flags])
    assert stopped.value.code == 2
    assert flags[0] in capsys.readouterr().err


def test_invalid_utf8_on_stdin_loses_no_line(model_dir, tmp_path):
    # `python -m zoo translate DIR < file`, the real command. Before: a UnicodeDecodeError,
    # and no line of output at all.
    directory, translator = model_dir
    data = b"Ein Hund rennt.\n" + b"Zwei \xff\xfe M\xe4nner.\n" + b"Eine Frau.\n"
    (tmp_path / "in.txt").write_bytes(data)
    with open(tmp_path / "in.txt", "rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "zoo", "translate", str(directory), "--beam-size", "1"],
            stdin=stdin,
            capture_output=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.decode("utf-8").split("\n")
    decoded = data.decode("utf-8", errors="replace").splitlines()
    assert lines[:3] == translator.translate(decoded, beam_size=1) and lines[3:] == [""]
    err = done.stderr.decode("utf-8")
    assert "stdin line 2 is not valid UTF-8" in err
    assert "line 1 " not in err and "line 3 " not in err
    assert "Traceback" not in err and "cuda" not in err.lower()


def test_translate_alignments_and_aer(model_dir, capsys, tmp_path):
    from zoo.evaluation import (
        alignment_error_rate,
        forced_alignments,
        format_pharaoh,
        hard_alignment,
        parse_gold,
    )

    directory, translator = model_dir
    assert cli.main(["translate", str(directory), "Ein Hund rennt.", "--alignments"]) == 0
    (t,) = translator.translate_with_attention(["Ein Hund rennt."])
    expected = format_pharaoh(hard_alignment(t.source_tokens, t.target_tokens, t.weights))
    assert capsys.readouterr().out == f"{t.translation} ||| {expected}\n"

    sources, targets = ["Ein Hund rennt.", "Zwei Männer lachen."], ["A dog runs.", "Two men laugh."]
    gold = ["0-0 1-1 2-2", "0-0 1-1 2?2"]
    for name, lines in (("s.de", sources), ("t.en", targets), ("g.txt", gold)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    files = [
        "--source",
        tmp_path / "s.de",
        "--target",
        tmp_path / "t.en",
        "--gold",
        tmp_path / "g.txt",
    ]
    argv = ["aer", str(directory), *map(str, files), "--output", str(tmp_path / "a.txt")]
    assert cli.main(argv) == 0
    links = forced_alignments(
        translator.model, translator.source_tokenizer, translator.target_tokenizer, sources, targets
    )
    sure, possible = zip(*map(parse_gold, gold), strict=True)
    aer = alignment_error_rate(links, sure, possible)["aer"]
    assert capsys.readouterr().out.startswith(f"AER = {aer:.4f}  precision ")
    written = (tmp_path / "a.txt").read_text(encoding="utf-8").splitlines()
    assert written == [format_pharaoh(pair) for pair in links]
    (tmp_path / "g.txt").write_text("0-0\n", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 1 and "one line per pair: 2, 2 and 1" in capsys.readouterr().err


def test_translate_sample(model_dir, capsys):
    directory, translator = model_dir
    sentences = MIXED[:4]
    assert cli.main(["translate", str(directory), *sentences, "--sample", "--top-k", "1"]) == 0
    assert capsys.readouterr().out.split("\n")[:4] == translator.translate(sentences, beam_size=1)
    for flags in (["--top-k", "1"], ["--temperature", "0.5", "--seed", "3"]):  # no --sample
        with pytest.raises(SystemExit) as stopped:
            cli.main(["translate", str(directory), *sentences, *flags])
        captured = capsys.readouterr()
        assert stopped.value.code == 2 and captured.out == "", captured.err
        assert "to sampling only; add --sample to sample" in captured.err
    runs = []
    for _ in range(2):
        assert cli.main(["translate", str(directory), *sentences, "--sample", "--seed", "4"]) == 0
        runs.append(capsys.readouterr().out)
    assert runs[0] == runs[1] and runs[0].split("\n")[:4] == translator.sample(sentences, seed=4)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--sample", "--n-best", "2"], "--n-best cannot be combined with --sample"),
        (["--sample", "--top-p", "1.5"], "--top-p must be in (0, 1]"),
        (["--seed", "3"], "--seed applies to sampling only"),
        (["--temperature", "0"], "--temperature"),
    ],
)
def test_sample_flag_errors_are_usage_errors(model_dir, flags, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["translate", str(model_dir[0]), "Ein Hund.", *flags])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def _help_texts(parser):
    """{command: its --help text} of `python -m zoo`."""
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    names = ("translate", "evaluate", "aer", "average", "serve")
    return {name: " ".join(subparsers.choices[name].format_help().split()) for name in names}


def test_help_renders_the_library_defaults_and_no_results(monkeypatch):
    from zoo.data.registry import CORPORA
    from zoo.search import defaults

    # The search flags show the library's value: change it there and the help follows.
    monkeypatch.setattr(defaults, "BEAM_SIZE", 7)
    monkeypatch.setattr(defaults, "LENGTH_PENALTY", 0.6)
    texts = _help_texts(cli.build_parser())
    for name in ("translate", "evaluate", "serve"):
        assert "MODEL_DIR/translator.json, else 7)" in texts[name]
        assert "MODEL_DIR/translator.json, else 0.6;" in texts[name]
    assert all(name in texts["evaluate"] for name in CORPORA)  # --data: the registry's names
    for text in texts.values():  # measured figures live in the guides, not in --help
        assert re.search(r"\d\.\d+ BLEU|BLEU \d", text) is None, text


def test_debug_help_gives_the_exit_statuses_the_commands_exit_with():
    # The statuses of the tests above: 2 for a bad flag value, 1 for a missing model folder.
    for name, text in _help_texts(cli.build_parser()).items():
        assert "exit status 2 for bad flags, 1 for bad data or files, 130 on Ctrl-C" in text, name
    recipe = " ".join(make_parser("luong_global_dot", "luong").format_help().split())
    assert "exit status 2 for bad flags, 1 for bad data or files" in recipe


def test_evaluate_fills_the_corpus_defaults_from_translator_json_else_the_registry():
    from zoo.cli.evaluate import fill_corpus_defaults
    from zoo.data.registry import DEFAULT_CORPUS, corpus_info

    def filled(metadata, **given):
        flags = dict(data=None, source_lang=None, target_lang=None, split=None)
        args = argparse.Namespace(**{**flags, **given})
        fill_corpus_defaults(args, metadata)
        return args.data, args.source_lang, args.target_lang, args.split

    default = corpus_info(DEFAULT_CORPUS)
    assert filled({}) == (DEFAULT_CORPUS, *default.default_pair, default.test_split)
    saved = {"data": "multi30k", "source_lang": "de", "target_lang": "fr"}
    assert filled(saved) == ("multi30k", "de", "fr", "test2016")
    assert filled(saved, split="val") == ("multi30k", "de", "fr", "val")
    assert filled(saved, source_lang="de", target_lang="fr")[1:3] == ("de", "fr")
    with pytest.raises(UsageError, match=r"translates de->fr .*received --target-lang en"):
        filled(saved, target_lang="en")
    anki = corpus_info("anki-spa-eng")
    assert filled({}, data="anki-spa-eng") == ("anki-spa-eng", *anki.default_pair, "test")
    assert filled({}, data="anki-spa-eng", source_lang="es")[:3] == ("anki-spa-eng", "es", "en")
    with pytest.raises(ValueError, match="--source-lang and --target-lang"):
        filled({}, data="pairs.tsv")
