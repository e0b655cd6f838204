"""`python -m zoo aer` on hostile but fair files: every bad gold line or text file is an
error naming the file and the line (exit status 1), and text files split on "\\n" alone."""

import pytest

from zoo import cli
from zoo.evaluation import alignment_error_rate, forced_alignments, parse_gold

SOURCES = ["Ein Hund rennt.", "Zwei Männer lachen."]
TARGETS = ["A dog runs.", "Two men laugh."]
GOLD = ["0-0 1-1 2-2", "0-0 1-1 2?2"]


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def aer_argv(folder, tmp_path, sources=SOURCES, targets=TARGETS, gold=GOLD):
    files = {"s.de": sources, "t.en": targets, "g.txt": gold}
    paths = {name: write(tmp_path / name, lines) for name, lines in files.items()}
    return [
        "aer", str(folder),
        "--source", str(paths["s.de"]), "--target", str(paths["t.en"]),
        "--gold", str(paths["g.txt"]),
    ]  # fmt: skip


def refused(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 1 and "Traceback" not in err, err
    return err.splitlines()[0]


def expected_aer(translator, sources, targets, gold):
    links = forced_alignments(
        translator.model, translator.source_tokenizer, translator.target_tokenizer,
        sources, targets,
    )  # fmt: skip
    sure, possible = zip(*map(parse_gold, gold), strict=True)
    return alignment_error_rate(links, sure, possible)["aer"]


@pytest.mark.parametrize(
    "gold, message",
    [
        (
            ["0-0 1-1 2-2", "0-0 99-99"],
            "line 2: the link '99-99' names source word 99 (0-based), but the source sentence has 3 word(s)",
        ),
        (
            ["0-0 1-1 2-3", "0-0"],
            "line 1: the link '2-3' names target word 3 (0-based), but the target sentence has 3 word(s)",
        ),
        (["0-0 1?5", "0-0"], "line 1: the link '1?5' names target word 5"),
        (["٠-٠ ١-١", "0-0"], "line 1: '٠-٠' is not a link"),
        (["0-0", "0–1"], "line 2: '0–1' is not a link"),
        (["", ""], "holds no link on any of its 2 lines"),
    ],
)
def test_bad_gold_lines_are_errors_naming_the_line(model_folder, tmp_path, capsys, gold, message):
    argv = aer_argv(model_folder[0], tmp_path, gold=gold)
    text = refused(argv, capsys)
    where = f"--gold {tmp_path / 'g.txt'}" + (" " if "no link" in message else ", ")
    assert where + message in text, text


def test_empty_files_are_errors(model_folder, tmp_path, capsys):
    argv = aer_argv(model_folder[0], tmp_path, gold=[])
    assert "one line per pair: 2, 2 and 0 lines" in refused(argv, capsys)
    argv = aer_argv(model_folder[0], tmp_path, sources=[], targets=[], gold=[])
    assert "are empty: no pairs" in refused(argv, capsys)


def test_a_line_separator_inside_a_sentence_stays_in_it(model_folder, tmp_path, capsys):
    # U+2028 (line separator), U+0085 (next line) and a form feed are no line ends of a
    # text file: str.splitlines would cut the sentence there and count lines wrongly.
    folder, translator = model_folder
    sources = ["Ein Hund\u2028rennt.", "Zwei\x85Männer\x0clachen."]
    argv = aer_argv(folder, tmp_path, sources=sources)
    assert cli.main(argv) == 0
    aer = expected_aer(translator, sources, TARGETS, GOLD)
    assert capsys.readouterr().out.startswith(f"AER = {aer:.4f}  precision ")


def test_crlf_files_read_as_their_lines(model_folder, tmp_path, capsys):
    folder, translator = model_folder
    argv = aer_argv(folder, tmp_path)
    source = tmp_path / "s.de"
    source.write_bytes(source.read_bytes().replace(b"\n", b"\r\n"))
    assert cli.main(argv) == 0
    aer = expected_aer(translator, SOURCES, TARGETS, GOLD)
    assert capsys.readouterr().out.startswith(f"AER = {aer:.4f}  precision ")


@pytest.mark.parametrize(
    "data, message",
    [
        (
            b"Ein Hund rennt.\rZwei M\xc3\xa4nner lachen.\r",
            "line 1: a carriage return inside the line",
        ),
        (b"Ein Hund rennt.\nZwei \xff M\xc3\xa4nner.\n", "line 2: not valid UTF-8"),
    ],
    ids=["old Mac line ends", "invalid UTF-8"],
)
def test_unreadable_text_files_are_errors_naming_the_line(
    model_folder, tmp_path, capsys, data, message
):
    argv = aer_argv(model_folder[0], tmp_path)
    (tmp_path / "s.de").write_bytes(data)
    assert f"--source {tmp_path / 's.de'}, {message}" in refused(argv, capsys)


def test_missing_files_and_folders_are_errors(model_folder, tmp_path, capsys):
    argv = aer_argv(model_folder[0], tmp_path)
    gone = [*argv[:-1], str(tmp_path / "nowhere.txt")]
    assert f"--gold {tmp_path / 'nowhere.txt'}: no such file." in refused(gone, capsys)
    folder = [*argv[:3], str(tmp_path), *argv[4:]]
    assert f"--source {tmp_path}: a folder, not a text file." in refused(folder, capsys)
    nowhere = [argv[0], str(tmp_path / "no-model"), *argv[2:]]
    assert "is not a zoo output folder: no such folder" in refused(nowhere, capsys)


def test_an_output_that_cannot_be_written_is_refused_first(model_folder, tmp_path, capsys):
    argv = aer_argv(model_folder[0], tmp_path) + ["--output", str(tmp_path)]
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    captured = capsys.readouterr()
    assert stopped.value.code == 2 and captured.out == ""
    assert f"--output {tmp_path}: a folder; expected a file name." in captured.err
