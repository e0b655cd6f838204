import pytest

from zoo.data import Corpus, MissingDataError, load_corpus
from zoo.data.files import data_dir


@pytest.fixture(scope="module")
def anki_splits():
    if not (data_dir() / "anki-spa-eng" / "spa.txt").is_file():
        pytest.skip("anki-spa-eng not found; set ZOO_DATA_DIR.")
    return {s: load_corpus("anki-spa-eng", "en", "es", s) for s in ("train", "val", "test")}


def test_anki_split_by_distinct_sentence(anki_splits):
    total = sum(len(c) for c in anki_splits.values())
    assert total == 118964
    assert 0.03 < len(anki_splits["test"]) / total < 0.07
    for side in ("source", "target"):
        seen = [set(getattr(c, side)) for c in anki_splits.values()]
        assert not (seen[0] & seen[1]) and not (seen[0] & seen[2]) and not (seen[1] & seen[2])


def test_anki_direction_and_determinism(anki_splits):
    reverse = load_corpus("anki-spa-eng", "spa", "eng", "val")
    assert reverse.source == anki_splits["val"].target
    assert reverse.target == anki_splits["val"].source
    assert (reverse.source_lang, reverse.target_lang) == ("es", "en")
    with pytest.raises(ValueError, match="anki-spa-eng has the language pairs en-es"):
        load_corpus("anki-spa-eng", "en", "fr")


def test_tsv_path_and_prefix(tmp_path):
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("".join(f"s{i}\tt{i}\n" for i in range(200)), encoding="utf-8")
    parts = [load_corpus(str(tsv), "xx", "yy", s) for s in ("train", "val", "test")]
    assert sum(len(p) for p in parts) == 200 and len(parts[0]) > 150
    assert parts[0].pairs()[0][1] == "t" + parts[0].pairs()[0][0][1:]
    (tmp_path / "train.de").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "train.en").write_text("A\nB\n", encoding="utf-8")
    corpus = load_corpus(str(tmp_path / "{split}"), "de", "en", "train")
    assert corpus.pairs() == [("a", "A"), ("b", "B")]


def test_prefix_without_split_is_split_into_disjoint_parts(tmp_path):
    # Every split reading the same files would measure test BLEU on training pairs.
    (tmp_path / "all.de").write_text("".join(f"q{i}\n" for i in range(300)), encoding="utf-8")
    (tmp_path / "all.en").write_text("".join(f"Q{i}\n" for i in range(300)), encoding="utf-8")
    parts = {s: load_corpus(str(tmp_path / "all"), "de", "en", s) for s in ("train", "val", "test")}
    assert sum(len(c) for c in parts.values()) == 300
    assert len(parts["val"]) > 0 and len(parts["test"]) > 0
    seen = [set(c.source) for c in parts.values()]
    assert not (seen[0] & seen[1]) and not (seen[0] & seen[2]) and not (seen[1] & seen[2])
    assert all(t == "Q" + s[1:] for c in parts.values() for s, t in c.pairs())


def test_empty_split_names_the_split_the_file_and_the_sizes(tmp_path):
    tsv = tmp_path / "few.tsv"
    tsv.write_text("a\tA\nb\tB\n", encoding="utf-8")
    empty = next(s for s in ("val", "test") if not _has_pairs(tsv, s))
    with pytest.raises(
        ValueError,
        match=rf"few\.tsv: the '{empty}' split has no sentence pairs. "
        r"Its 2 pairs split by distinct sentence into \d train, \d val, \d test",
    ):
        load_corpus(str(tsv), "de", "en", empty)
    (tmp_path / "val.de").write_text("\n", encoding="utf-8")
    (tmp_path / "val.en").write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"the 'val' split has no sentence pairs \(.*val\.de and"):
        load_corpus(str(tmp_path / "{split}"), "de", "en", "val")


def _has_pairs(tsv, split):
    try:
        return len(load_corpus(str(tsv), "de", "en", split)) > 0
    except ValueError:
        return False


def test_directory_as_corpus_says_so(tmp_path):
    with pytest.raises(ValueError, match="is a directory; expected 'multi30k'"):
        load_corpus(str(tmp_path), "de", "en")


def test_missing_data_errors(data_root):
    with pytest.raises(MissingDataError, match="anki-spa-eng/spa.txt"):
        load_corpus("anki-spa-eng", "en", "es")
    with pytest.raises(MissingDataError, match="Unknown corpus"):
        load_corpus(str(data_root / "nothing"), "de", "en")
    with pytest.raises(MissingDataError, match="missing.tsv"):
        load_corpus(str(data_root / "missing.tsv"), "de", "en")
    with pytest.raises(ValueError, match="must differ"):
        load_corpus("multi30k", "en", "eng")


def test_corpus_checks_lengths():
    with pytest.raises(ValueError, match="2 source sentences but 1 target"):
        Corpus("x", "de", "en", "train", ["a", "b"], ["c"])


def test_take_keeps_the_first_pairs_and_refuses_bad_counts():
    corpus = Corpus("x", "de", "en", "train", ["a", "b", "c"], ["A", "B", "C"])
    assert corpus.take(2).pairs() == [("a", "A"), ("b", "B")]
    assert len(corpus.take(5)) == 3 and len(corpus.take(0)) == 0
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="int count >= 0"):
            corpus.take(bad)


def test_default_data_dir_is_beside_the_checkout(monkeypatch):
    from pathlib import Path

    import zoo

    monkeypatch.delenv("ZOO_DATA_DIR", raising=False)
    assert data_dir() == Path(zoo.__file__).resolve().parents[2] / "shared" / "data"
