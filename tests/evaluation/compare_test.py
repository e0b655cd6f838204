"""`python -m zoo compare` (zoo/cli/compare.py) against sacreBLEU's own command line on the
same files, its table, and its messages for bad input."""

import json

import pytest
from sacrebleu_command import sacrebleu_paired, write_files

from zoo import cli

SAMPLES, SEED = 300, 11


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """write_files' reference and systems, one line of each holding U+2028 and a form feed,
    which str.splitlines would split and a file's lines do not."""
    files = write_files(tmp_path_factory.mktemp("compare"))
    for path, lines in files.values():
        lines[3] = lines[3].replace(" ", "\u2028", 1).replace(" ", "\x0c", 1)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {name: str(path) for name, (path, _) in files.items()}


def _compare(capsys, *argv):
    assert cli.main(["compare", *map(str, argv)]) == 0
    return capsys.readouterr().out


def test_agrees_with_the_sacrebleu_command_line(files, capsys):
    systems = [files["a"], files["b"], files["c"]]
    argv = [files["ref"], *systems, "--samples", SAMPLES, "--seed", SEED]
    results = json.loads(_compare(capsys, *argv, "--method", "both", "--json"))
    assert [r["method"] for r in results] == ["bs", "ar"]
    for result in results:
        assert result["sentences"] == 60  # lines split on "\n" alone
        expected = sacrebleu_paired(files["ref"], systems, result["method"], SAMPLES, SEED)
        assert [s["name"] for s in result["systems"]] == list(expected)
        for record in result["systems"]:
            for metric in ("bleu", "chrf"):
                ours, theirs = record[metric], expected[record["name"]][metric]
                assert ours["score"] == pytest.approx(theirs["score"], abs=1e-6)
                if theirs["mean"] is not None:
                    assert ours["mean"] == pytest.approx(theirs["mean"], abs=1e-6)
                    assert ours["ci"] == pytest.approx(theirs["ci"], abs=1e-6)
                if not record["baseline"]:
                    assert ours["p_value"] == pytest.approx(theirs["p_value"], abs=5e-5)


def test_the_table_marks_the_significant_differences(files, capsys):
    argv = [files["ref"], files["a"], files["b"], files["c"], "--samples", 200, "--seed", SEED]
    (result,) = json.loads(_compare(capsys, *argv, "--json"))
    table = _compare(capsys, *argv).splitlines()
    assert table[0].startswith("Paired bootstrap resampling: 200 resamples, seed 11, 60 sentences")
    rows = {line.split()[0]: line for line in table if line.startswith(files["ref"][:-7])}
    assert rows[files["a"]].split()[1] == "(baseline)"
    for record in result["systems"][1:]:
        for metric in ("bleu", "chrf"):
            p = record[metric]["p_value"]
            mark = "*" if record[metric]["significant"] else ""
            assert f" {p:.4f}{mark}" in rows[record["name"]]
            assert f"{record[metric]['score']:.2f}" in rows[record["name"]]
    assert any(r["bleu"]["significant"] for r in result["systems"][1:])
    assert not all(r["bleu"]["significant"] for r in result["systems"][1:])
    assert any(line.startswith("BLEU: nrefs:1|bs:200|seed:11|") for line in table)


def test_windows_line_ends_read_as_newlines(files, tmp_path, capsys):
    crlf = tmp_path / "b.crlf.txt"
    with open(files["b"], encoding="utf-8", newline="") as f:
        crlf.write_bytes(f.read().replace("\n", "\r\n").encode("utf-8"))
    argv = ["--metrics", "bleu", "--samples", 50, "--json"]
    (plain,) = json.loads(_compare(capsys, files["ref"], files["a"], files["b"], *argv))
    (windows,) = json.loads(_compare(capsys, files["ref"], files["a"], crlf, *argv))
    assert windows["systems"][1]["bleu"] == plain["systems"][1]["bleu"]


def _fails(capsys, *argv):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["compare", *map(str, argv)])
    return stopped.value.code, capsys.readouterr().err


def test_bad_files_are_named(files, tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("one line\nand another\n", encoding="utf-8")
    code, err = _fails(capsys, files["ref"], files["a"], short)
    assert code == 1 and f"{short} has 2 lines and the reference {files['ref']} has 60" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    for argv in ([empty, files["a"], files["b"]], [files["ref"], files["a"], empty]):
        code, err = _fails(capsys, *argv)
        assert code == 1 and f"{empty} is empty" in err
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Müller\n".encode("latin-1"))
    code, err = _fails(capsys, latin, files["a"], files["b"])
    assert code == 1 and f"{latin} is not UTF-8 text" in err
    code, err = _fails(capsys, files["ref"], files["a"], tmp_path / "missing.txt")
    assert code == 1 and "missing.txt" in err


@pytest.mark.parametrize(
    "flags, message",
    [
        (["A"], "at least two systems"),
        (["A", "A"], "given once; A.txt repeated"),
        (["A", "B", "--metrics", "bleu,ter"], "--metrics must be distinct names"),
        (
            ["A", "B", "--samples", "100000000"],
            "--samples 100000000 for 60 sentences: expected at most 35,791,394",
        ),
    ],
)
def test_usage_errors_exit_with_status_2(files, capsys, flags, message):
    names = {"A": files["a"], "B": files["b"]}
    argv = [names.get(flag, flag) for flag in flags]
    code, err = _fails(capsys, files["ref"], *argv)
    assert code == 2 and err.startswith("python -m zoo compare: error: ")
    assert message.replace("A.txt", files["a"]) in err
