"""zoo.workflow.report: the files written after training."""

from zoo.evaluation import bleu_by_length
from zoo.workflow.report import write_bleu_by_length


def test_bleu_by_length_table_has_one_column_per_system(tmp_path):
    sources = ["a b c", "a b c d e f g h i j k l", "x y"]
    references = ["one two three four five", "the cat sat on the mat today", "hello big wide world"]
    greedy = bleu_by_length(sources, ["one two three", "a cat", "hi there"], references)
    beam = bleu_by_length(sources, references, references)
    write_bleu_by_length(str(tmp_path), {"greedy": greedy, "beam5": beam})
    rows = (tmp_path / "bleu_by_length.tsv").read_text().splitlines()
    assert rows[0].split("\t") == ["source_length", "sentences", "bleu_greedy", "bleu_beam5"]
    first = rows[1].split("\t")
    assert first[:2] == ["0-9", "2"]
    assert float(first[3]) == 100.0 and float(first[2]) == round(greedy[0]["bleu"], 2)
    assert rows[2].split("\t") == ["10-19", "1", f"{greedy[1]['bleu']:.2f}", "100.00"]
    assert rows[3].split("\t") == ["20-29", "0", "", ""]
    md = (tmp_path / "bleu_by_length.md").read_text().splitlines()
    assert md[0].startswith("| source length") and md[4] == "| 20-29 | 0 | - | - |"


def test_bleu_by_length_table_brackets_buckets_too_small_to_trust(tmp_path):
    sources = ["a b c"] * 12 + ["a b c d e f g h i j k l"]
    references = ["one two three four"] * 13
    tables = {"beam5": bleu_by_length(sources, references, references)}
    write_bleu_by_length(str(tmp_path), tables)
    md = (tmp_path / "bleu_by_length.md").read_text().splitlines()
    assert "| 0-9 | 12 | 100.00 |" in md and "| 10-19 | 1 | (100.00) |" in md
