"""Tests for zoo/evaluation/scores.py against sacrebleu called directly."""

import pytest
import sacrebleu

from zoo.evaluation import bleu_by_length, corpus_scores, format_table

REFS = [
    "A man is riding a bicycle down the street.",
    "Two dogs play in the snow.",
    "A little girl in a pink dress is smiling at the camera while her mother watches.",
    "People are sitting on a bench.",
    "The woman sells fruit at a market in the old town of the city near the river bank.",
]
HYPS = [
    "A man rides a bike down the street.",
    "Two dogs are playing in the snow.",
    "A small girl in a pink dress smiles at the camera while her mother is watching.",
    "People sit on a bench.",
    "A woman is selling fruit at a market in the old part of the city by the river.",
]
SOURCES = [
    "Ein Mann fährt mit dem Fahrrad die Straße entlang.",
    "Zwei Hunde spielen im Schnee.",
    "Ein kleines Mädchen in einem rosa Kleid lächelt in die Kamera während ihre Mutter zusieht .",
    "Leute sitzen auf einer Bank.",
    "Die Frau verkauft Obst auf einem Markt in der Altstadt der Stadt nahe dem Flussufer hier .",
]


def test_identical_text_scores_100():
    scores = corpus_scores(REFS, REFS)
    assert scores["bleu"] == pytest.approx(100.0)
    assert scores["chrf"] == pytest.approx(100.0)
    assert scores["sentences"] == len(REFS)


def test_matches_sacrebleu_called_directly():
    scores = corpus_scores(HYPS, REFS)
    assert scores["bleu"] == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score)
    assert scores["chrf"] == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS]).score)
    assert 0 < scores["bleu"] < 100
    assert "tok:13a" in scores["bleu_signature"]
    assert "case:mixed" in scores["bleu_signature"]
    assert scores["bleu_signature"].startswith("nrefs:1")
    assert scores["chrf_signature"].startswith("nrefs:1")
    assert len(scores["bleu_precisions"]) == 4


def test_case_matters():
    assert corpus_scores([r.lower() for r in REFS], REFS)["bleu"] < 100


def test_mismatched_or_bad_input_raises():
    with pytest.raises(ValueError, match="one reference per hypothesis"):
        corpus_scores(HYPS, REFS[:-1])
    with pytest.raises(ValueError, match="at least one"):
        corpus_scores([], [])
    with pytest.raises(ValueError, match="strings"):
        corpus_scores([["a", "b"]], ["a b"])
    with pytest.raises(ValueError, match="one source per hypothesis"):
        bleu_by_length(SOURCES[:2], HYPS, REFS)
    with pytest.raises(ValueError, match="increasing"):
        bleu_by_length(SOURCES, HYPS, REFS, edges=(0, 10, 10))


def test_bleu_by_length_bins_sum_and_match_direct_scores():
    rows = bleu_by_length(SOURCES, HYPS, REFS, edges=(0, 10, 15))
    assert [r["bin"] for r in rows] == ["0-9", "10-14", "15+"]
    assert sum(r["sentences"] for r in rows) == len(SOURCES)
    lengths = [len(s.split()) for s in SOURCES]  # 9, 5, 16, 5, 17
    assert [r["sentences"] for r in rows] == [3, 0, 2]
    assert rows[1]["bleu"] is None
    members = [k for k, n in enumerate(lengths) if n >= 15]
    expected = sacrebleu.corpus_bleu([HYPS[k] for k in members], [[REFS[k] for k in members]])
    assert rows[2]["bleu"] == pytest.approx(expected.score)
    assert rows[2]["max_length"] is None and rows[0]["max_length"] == 9


def test_bleu_by_length_accepts_integer_lengths_and_formats():
    rows = bleu_by_length([3, 12, 70], HYPS[:3], REFS[:3])
    assert sum(r["sentences"] for r in rows) == 3
    assert rows[-1]["bin"] == "60+" and rows[-1]["sentences"] == 1
    table = format_table(rows)
    assert table.count("\n") == len(rows) + 2 and "60+" in table
