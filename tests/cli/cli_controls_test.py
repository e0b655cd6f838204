"""`python -m zoo translate|evaluate` with the decoding controls (--min-length, --ban-unk,
--no-repeat-ngram-size) and translate's --prefix and --constraints files: the command's
output equals the Translator's with the same arguments, and bad files are named."""

import io
import json
import sys

import pytest

from zoo import cli

SENTENCES = ["Ein Hund rennt.", "Zwei Männer lachen auf einer Bank.", "", "Eine Frau."]


def _run(argv, capsys, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    assert cli.main(argv) == 0
    return capsys.readouterr().out


def _refused(argv, capsys, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code in (1, 2) and "Traceback" not in err, err
    return err


def test_controls_translate_as_the_translator_does(model_folder, capsys):
    directory, translator = model_folder
    controls = {"min_length": 3, "ban_unknown": True, "no_repeat_ngram_size": 2}
    flags = ["--min-length", "3", "--ban-unk", "--no-repeat-ngram-size", "2"]
    out = _run(["translate", str(directory), *SENTENCES, *flags], capsys)
    expected = translator.translate(SENTENCES, **controls)
    assert out == "".join(f"{text}\n" for text in expected)
    assert expected != translator.translate(SENTENCES)  # the controls changed something


def test_prefix_and_constraints_files_follow_the_input_lines(
    model_folder, capsys, monkeypatch, tmp_path
):
    directory, translator = model_folder
    prefix = tmp_path / "prefix.en"
    prefix.write_bytes(b"A dog\n\n\nThe woman\r\n")
    constraints = tmp_path / "terms.tsv"
    constraints.write_text("\nbench\ttwo men\n\nbook\t\n", encoding="utf-8")
    prefixes = ["A dog", "", "", "The woman"]
    phrases = [[], ["bench", "two men"], [], ["book"]]
    argv = ["translate", str(directory), "--prefix", str(prefix), "--constraints", str(constraints)]
    stdin = "".join(f"{s}\n" for s in SENTENCES)
    out = _run([*argv, "--batch-size", "2"], capsys, stdin, monkeypatch)
    expected = translator.translate(SENTENCES, prefix=prefixes, constraints=phrases)
    assert out == "".join(f"{text}\n" for text in expected)
    assert expected[0].startswith("A dog") and "bench" in expected[1] and "book" in expected[3]
    # The same through the n-best and attention paths, sentences given as arguments.
    out = _run([*argv, "--n-best", "2", *SENTENCES], capsys)
    best = translator.translate_n_best(SENTENCES, 2, prefix=prefixes, constraints=phrases)
    assert [line.split(" ||| ")[1] for line in out.splitlines()][::2] == [b[0][0] for b in best]
    out = _run([*argv, "--alignments", *SENTENCES], capsys)
    assert [line.split(" ||| ")[0] for line in out.splitlines()] == expected


def test_files_of_another_length_and_bad_combinations_are_refused(
    model_folder, capsys, monkeypatch, tmp_path
):
    directory, _ = model_folder
    short = tmp_path / "short.en"
    short.write_text("A dog\n", encoding="utf-8")
    for flag in ("--prefix", "--constraints"):
        err = _refused(["translate", str(directory), flag, str(short), "a", "b"], capsys)
        assert f"{flag} {short} has 1 line for 2 input sentences" in err
        err = _refused(
            ["translate", str(directory), flag, str(short)], capsys, "a\nb\n", monkeypatch
        )
        assert f"{flag} {short} has 1 line for 2 input sentences" in err
    err = _refused(["translate", str(directory), "--prefix", str(tmp_path / "none"), "a"], capsys)
    assert "--prefix" in err and "no such file" in err
    bad = tmp_path / "latin1.en"
    bad.write_bytes(b"caf\xe9\n")
    err = _refused(["translate", str(directory), "--prefix", str(bad), "a"], capsys)
    assert f"--prefix {bad}, line 1: not valid UTF-8" in err
    err = _refused(["translate", str(directory), "--ban-unk", "--sample", "a"], capsys)
    assert "--ban-unk cannot be combined with --sample" in err
    err = _refused(["translate", str(directory), "--min-length", "-1", "a"], capsys)
    assert "--min-length" in err


def test_evaluate_takes_the_controls_and_records_them(model_folder, capsys, tmp_path):
    directory, translator = model_folder
    output, hypotheses = tmp_path / "scores.json", tmp_path / "hyp.txt"
    argv = ["evaluate", str(directory), "--limit", "3", "--min-length", "2", "--ban-unk"]
    _run([*argv, "--output", str(output), "--hypotheses", str(hypotheses)], capsys)
    result = json.loads(output.read_text())
    assert (result["min_length"], result["ban_unknown"], result["no_repeat_ngram_size"]) == (
        2,
        True,
        0,
    )
    from zoo.data import load_corpus

    sources = load_corpus("multi30k", "de", "en", result["split"]).take(3).source
    expected = translator.translate(sources, min_length=2, ban_unknown=True)
    assert hypotheses.read_text(encoding="utf-8").splitlines() == expected


def test_help_shows_the_library_defaults(capsys):
    from zoo.search import defaults

    with pytest.raises(SystemExit):
        cli.main(["translate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"0: off; default: {defaults.MIN_LENGTH}" in text
    assert f"Paulus et al. 2017; 0: off; default: {defaults.NO_REPEAT_NGRAM_SIZE}" in text
    assert "never emit <unk>" in text and "--prefix FILE" in text and "--constraints FILE" in text


def test_a_saved_model_refuses_the_controls_before_loading(capsys, tmp_path):
    """A SavedModel's search is fixed at export: the flags are refused before it loads
    (this folder is no real SavedModel: it is never read)."""
    serving = tmp_path / "serving"
    serving.mkdir()
    (serving / "saved_model.pb").write_bytes(b"")
    prefix = tmp_path / "prefix.en"
    prefix.write_text("A\n", encoding="utf-8")
    for flags in (["--min-length", "2"], ["--ban-unk"], ["--prefix", str(prefix)]):
        err = _refused(["translate", str(serving), *flags, "a"], capsys)
        assert f"{flags[0]} needs the model folder, not a SavedModel" in err
    err = _refused(["translate", str(serving), "--ban-unk", "--prefix", str(prefix), "a"], capsys)
    assert "--prefix, --ban-unk need the model folder, not a SavedModel" in err


def test_prefix_and_constraint_lines_the_target_vocabulary_cannot_write_are_refused(
    model_folder, capsys, tmp_path
):
    """Their <unk> would reach the translation as "⁇" (with --ban-unk: an empty one): the
    file's line, the text and the characters are named, on every output path. The files are
    split on "\\n" alone: the U+2028 inside line 2 stays there."""
    directory, _ = model_folder
    prefix = tmp_path / "prefix.en"
    prefix.write_bytes("A dog\nThe\u2028woman\r\n".encode())
    constraints = tmp_path / "terms.tsv"
    constraints.write_text("dog\n\t日本語 ✓\n", encoding="utf-8")
    files = (
        ("--prefix", prefix, "the prefix 'The\\u2028woman' holds characters that the "
         "target vocabulary lacks ('\\u2028')"),
        ("--constraints", constraints, "the constraint '日本語 ✓' holds characters that the "
         "target vocabulary lacks ('日', '本', '語', '✓')"),
    )  # fmt: skip
    for flag, path, named in files:
        for extra in ([], ["--ban-unk"], ["--n-best", "2"], ["--alignments"]):
            err = _refused(["translate", str(directory), flag, str(path), "a", "b", *extra], capsys)
            assert f"{flag} {path} line 2: {named}" in err, err
