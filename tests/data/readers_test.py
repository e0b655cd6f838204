import logging

import pytest

from zoo.data import MissingDataError
from zoo.data.files import read_lines, read_parallel, read_tsv


def test_read_parallel_strips_and_drops_empty_pairs_with_a_count(tmp_path, caplog):
    (tmp_path / "a.de").write_text("Hallo \n\nZwei\n  drei\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("Hello\nnothing\n\nthree\r\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="zoo.data"):
        src, tgt = read_parallel(tmp_path / "a.de", tmp_path / "a.en")
    assert (src, tgt) == (["Hallo", "drei"], ["Hello", "three"])
    assert "dropped 2 of 4 pairs" in caplog.text and "a.de" in caplog.text


def test_different_line_counts_name_both_files(tmp_path):
    (tmp_path / "x.de").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "x.en").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.de has 3 lines but .*x\.en has 2"):
        read_parallel(tmp_path / "x.de", tmp_path / "x.en")


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "bad.en"
    path.write_bytes(b"fine\nalso fine\nbroken \xff\xfe here\n")
    with pytest.raises(ValueError, match=r"bad\.en, line 3: invalid UTF-8"):
        read_lines(path)


def test_tsv_line_without_exactly_one_tab(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("Go.\tVe.\nno tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"pairs\.tsv, line 2: expected exactly one tab.*found 0"):
        read_tsv(path)
    path.write_text("a\tb\tc\td\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1: .*found 3"):
        read_tsv(path)


def test_tsv_accepts_manythings_attribution_column(tmp_path):
    path = tmp_path / "spa.txt"
    path.write_text("Go.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org\n", encoding="utf-8")
    assert read_tsv(path) == (["Go."], ["Ve."])


def test_missing_file(tmp_path):
    with pytest.raises(MissingDataError, match=r"Missing corpus file .*nope\.en"):
        read_lines(tmp_path / "nope.en")


def test_control_characters_become_spaces_with_a_count(tmp_path, caplog):
    (tmp_path / "c.de").write_text("ein\x00Hund\nzwei \x1b[31mKatzen\nklar\n", encoding="utf-8")
    (tmp_path / "c.en").write_text("a dog\ntwo\x7f cats\x85\nclear\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="zoo.data"):
        src, tgt = read_parallel(tmp_path / "c.de", tmp_path / "c.en")
    assert src == ["ein Hund", "zwei  [31mKatzen", "klar"]
    assert tgt == ["a dog", "two  cats", "clear"]
    assert "control characters" in caplog.text and "in 2 of 3 lines" in caplog.text


def test_a_directory_is_not_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="is a directory; expected a corpus file") as error:
        read_lines(tmp_path)
    assert not isinstance(error.value, MissingDataError)
