"""A sentence longer than `zoo.translation.MAX_SOURCE_TOKENS`: `translate` (and `python -m
zoo translate`, from stdin or a file) splits it at spaces into pieces the search holds in
bounded memory and joins their translations; the calls that give tokens, attention or
n-best lists per sentence refuse it, naming the limit."""

import os
import subprocess
import sys

import pytest

from zoo import translation
from zoo.translation import split_long


def test_pieces_hold_at_most_the_limit_and_give_the_words_back():
    def count(words):  # a token per character: an independent, exact count
        return [len(w) for w in words]

    sentence = "ab cde f " * 7 + "x" * 23 + " gh"
    pieces = split_long(sentence, count, limit=5)
    assert all(sum(count(p.split())) <= 5 for p in pieces), pieces
    assert "".join(" ".join(pieces).split()) == "".join(sentence.split())
    assert split_long("kurz", count, limit=5) == ["kurz"] and split_long("", count) == [""]


@pytest.fixture(scope="module")
def folder(data_dir, tmp_path_factory):
    from translator_toy import toy_translator

    directory = tmp_path_factory.mktemp("long") / "model"
    translator = toy_translator("bahdanau_rnnsearch", beam_size=1)
    translator.save(directory, serving=False)
    return directory, translator


def test_a_long_sentence_is_split_by_translate_and_refused_where_tokens_are_given(
    folder, monkeypatch
):
    _, translator = folder
    monkeypatch.setattr(translation, "MAX_SOURCE_TOKENS", 8)
    line = "Ein Hund rennt über die Wiese. " * 4
    assert translator.source_lengths([line])[0] > 8
    pieces = split_long(line, translator.source_lengths)
    assert len(pieces) > 1 and max(translator.source_lengths(pieces)) <= 8
    expected = " ".join(translator.translate(pieces))
    assert translator.translate(["Ein Hund.", line]) == [
        translator.translate(["Ein Hund."])[0],
        expected,
    ]
    for call in (translator.translate_with_attention, lambda s: translator.translate_n_best(s, 1)):
        with pytest.raises(ValueError, match=r"sentence 1 has \d+ source tokens; at most 8"):
            call(["Ein Hund.", line])


def test_the_command_translates_a_line_longer_than_the_limit(folder, tmp_path):
    directory, translator = folder
    line = "Ein Hund rennt über die Wiese. " * 180  # over 1024 tokens
    assert translator.source_lengths([line])[0] > translation.MAX_SOURCE_TOKENS
    source = tmp_path / "long.de"
    source.write_text(line + "\nEin Hund.\n", encoding="utf-8")
    with open(source, encoding="utf-8") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "zoo", "translate", str(directory), "--beam-size", "1"],
            stdin=stdin, capture_output=True, text=True, timeout=600,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    pieces = split_long(line, translator.source_lengths)
    expected = [
        " ".join(translator.translate(pieces, beam_size=1)),
        *translator.translate(["Ein Hund."], beam_size=1),
    ]
    assert done.stdout.splitlines() == expected
