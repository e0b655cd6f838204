import pytest

from zoo.data import load_corpus, open_stream

tfds = pytest.importorskip("tensorflow_datasets")


def test_tfds_corpus_through_mock_data():
    with tfds.testing.mock_data(num_examples=5):
        corpus = load_corpus("tfds:ted_hrlr_translate/pt_to_en", "pt", "en", "val")
    assert corpus.split == "validation" and len(corpus) == 5
    assert all(isinstance(s, str) for s in corpus.source + corpus.target)
    with tfds.testing.mock_data(num_examples=3):
        with pytest.raises(ValueError, match="fields"):
            load_corpus("tfds:ted_hrlr_translate/pt_to_en", "de", "en", "test2016")


def test_split_names_are_mapped_by_the_registry(monkeypatch):
    seen = []

    def fake_load(name, split, data_dir, download):
        seen.append((name, split))
        raise RuntimeError("stop")

    monkeypatch.setattr(tfds, "load", fake_load)
    requested = ("val", "dev", "validation", "test", "test2016", "train", "train[:1%]")
    for split in requested:
        with pytest.raises(RuntimeError):
            load_corpus("wmt14", "en", "fr", split)
    expected = ["validation"] * 3 + ["test"] * 2 + ["train", "train[:1%]"]
    assert seen == [("wmt14_translate/fr-en", s) for s in expected]
    streams = [open_stream("tfds:ted_hrlr_translate/pt_to_en", "pt", "en", s) for s in requested]
    assert [s.files[0][1] for s in streams] == expected
    assert {s.kind for s in streams} == {"tfds"}
