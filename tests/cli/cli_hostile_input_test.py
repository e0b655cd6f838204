"""`python -m zoo translate|evaluate|average` on hostile but fair input: a missing file or
folder, a folder where a file belongs, a file where a folder belongs, a malformed
translator.json value. Each is one message (usage errors exit 2, data errors 1), never a
traceback, and each usage error comes before any translating."""

import io
import json
import shutil
import sys

import pytest

from zoo import cli


@pytest.fixture
def folder(model_folder, tmp_path):
    return shutil.copytree(model_folder[0], tmp_path / "run")


def refused(argv, capsys, status):
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    captured = capsys.readouterr()
    assert stopped.value.code == status, captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""  # nothing translated or scored first
    return captured.err.splitlines()[0]


def test_bad_paths(folder, tmp_path, capsys):
    a_file = tmp_path / "a.txt"
    a_file.write_text("x\n", encoding="utf-8")
    nowhere = tmp_path / "nowhere"
    cases = [
        (
            ["translate", str(a_file), "Ein Hund."],
            1,
            f"{a_file} is not a zoo output folder: a file.",
        ),
        (["translate", str(nowhere), "Ein Hund."], 1, "is not a zoo output folder: no such folder"),
        (
            [
                "translate",
                str(folder),
                "Ein Hund.",
                "--replace-unk",
                "--unk-dictionary",
                str(nowhere),
            ],
            1,
            f"--unk-dictionary {nowhere}: no such file.",
        ),
        (
            [
                "translate",
                str(folder),
                "Ein Hund.",
                "--replace-unk",
                "--unk-dictionary",
                str(tmp_path),
            ],
            1,
            f"--unk-dictionary {tmp_path}: a folder, not a file.",
        ),
        (
            ["translate", str(folder), "Ein Hund.", "--plot-dir", str(a_file)],
            2,
            f"--plot-dir {a_file}: a file; expected a folder.",
        ),
        (
            ["translate", str(folder), "Ein Hund.", "--ensemble", str(nowhere)],
            2,
            f"--ensemble '{nowhere}': no such folder",
        ),
        (
            ["evaluate", str(folder), "--limit", "2", "--output", str(tmp_path)],
            2,
            f"--output {tmp_path}: a folder; expected a file name.",
        ),
        (
            ["evaluate", str(folder), "--limit", "2", "--hypotheses", str(nowhere / "h.txt")],
            2,
            f"--hypotheses {nowhere / 'h.txt'}: the folder {nowhere} does not exist.",
        ),
        (["evaluate", str(folder), "--data", str(nowhere / "x.tsv")], 1, "x.tsv"),
        (["average", str(nowhere)], 1, "is not a zoo output folder: no such folder"),
        (["average", str(folder)], 1, "holds no checkpoints/ folder"),
        (
            ["average", str(folder), "--output", "../x.keras"],
            2,
            "--output must be a file name inside",
        ),
        (
            ["average", str(folder), "--output", "model.keras"],
            2,
            "would replace the run's best model",
        ),
    ]
    for argv, status, message in cases:
        line = refused(argv, capsys, status)
        assert line.startswith(f"python -m zoo {argv[0]}: error: "), line
        assert message in line, (argv, line)


@pytest.mark.parametrize(
    "key, value",
    [("data", 5), ("source_lang", ["de"]), ("target_lang", {"en": 1})],
)
def test_evaluate_refuses_a_corpus_default_of_the_wrong_type(folder, capsys, key, value):
    config = json.loads((folder / "translator.json").read_text())
    (folder / "translator.json").write_text(json.dumps({**config, key: value}))
    line = refused(["evaluate", str(folder), "--limit", "2"], capsys, 1)
    assert f"{folder / 'translator.json'}: {key!r} must be a string" in line


def test_translate_reads_stdin_lines_split_on_newlines_alone(model_folder, capsys, monkeypatch):
    # A U+2028 or U+0085 inside a line is part of the sentence: one translation per line.
    folder, translator = model_folder
    sentences = ["Ein Hund\u2028rennt.", "Zwei\x85Männer.", "Eine Frau."]
    data = "".join(s + "\r\n" for s in sentences).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    assert cli.main(["translate", str(folder), "--beam-size", "1"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines == [*translator.translate(sentences, beam_size=1), ""]


def test_an_unk_dictionary_that_is_not_utf8_is_named_with_its_line(folder, tmp_path, capsys):
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_bytes(b"Hund\tdog\nK\xffatze\tcat\n")
    argv = ["translate", str(folder), "--replace-unk", "--unk-dictionary", str(lexicon), "a"]
    line = refused(argv, capsys, 1)
    assert f"{lexicon}, line 2: invalid UTF-8" in line, line
    assert "codec can't decode" not in line


def test_n_best_refuses_what_it_cannot_print_before_the_model_loads(folder, capsys, monkeypatch):
    """--n-best prints n-best lists only, of at most the beam size (--beam-size, else the
    folder's translator.json): usage errors, found before the model loads."""
    monkeypatch.setattr("zoo.cli.translate.load_translator", lambda args: pytest.fail("loaded"))
    base = ["translate", str(folder), "Ein Hund.", "--n-best", "2"]
    for flags, shown in (
        (["--alignments"], "--alignments"),
        (["--attention"], "--attention"),
        (["--plot-dir", str(folder / "plots")], "--plot-dir"),
        (["--replace-unk"], "--replace-unk"),
    ):
        line = refused([*base, *flags], capsys, 2)
        assert line.endswith(
            f"--n-best prints n-best lists only; it cannot be combined with {shown}."
        ), line
    line = refused(["translate", str(folder), "a", "--beam-size", "2", "--n-best", "5"], capsys, 2)
    assert "--n-best 5 is more than --beam-size 2" in line, line
    # The folder's beam size (translator.json: 2) when --beam-size is not given.
    line = refused(["translate", str(folder), "a", "--n-best", "3"], capsys, 2)
    assert f"--n-best 3 is more than the beam size 2 of {folder / 'translator.json'}" in line


def test_n_best_of_a_saved_model_is_checked_against_its_export(tmp_path, capsys):
    """A SavedModel's n-best lists come from its export (zoo_export.json): a larger --n-best,
    another --beam-size or a SavedModel without them are usage errors before it loads (this
    folder is no real SavedModel: it is never read)."""
    serving = tmp_path / "serving"
    serving.mkdir()
    (serving / "saved_model.pb").write_bytes(b"")
    metadata = serving / "zoo_export.json"
    metadata.write_text(json.dumps({"beam_size": 4, "n_best": 3}))
    line = refused(["translate", str(serving), "a", "--n-best", "4"], capsys, 2)
    assert "--n-best 4 is more than the 3 best that the SavedModel" in line, line
    line = refused(["translate", str(serving), "a", "--n-best", "2", "--beam-size", "2"], capsys, 2)
    assert (
        "--beam-size 2 with --n-best: the SavedModel's n-best lists come from its beam of 4" in line
    )
    metadata.write_text(json.dumps({"beam_size": 4, "n_best": None}))
    line = refused(["translate", str(serving), "a", "--n-best", "2"], capsys, 2)
    assert "was exported without n-best lists" in line, line
