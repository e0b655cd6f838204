import pytest

from zoo.data import load_corpus

tfds = pytest.importorskip("tensorflow_datasets")


def test_tfds_corpus_through_mock_data():
    with tfds.testing.mock_data(num_examples=5):
        corpus = load_corpus("tfds:ted_hrlr_translate/pt_to_en", "pt", "en", "val")
    assert corpus.split == "val" and len(corpus) == 5
    assert all(isinstance(s, str) for s in corpus.source + corpus.target)
    with tfds.testing.mock_data(num_examples=3):
        with pytest.raises(ValueError, match="fields"):
            load_corpus("tfds:ted_hrlr_translate/pt_to_en", "de", "en", "test2016")


def test_split_names_are_mapped(monkeypatch):
    import zoo.data.tfds_corpus as module

    seen = []

    def fake_load(name, split, data_dir, download):
        seen.append((name, split))
        raise RuntimeError("stop")

    monkeypatch.setattr(tfds, "load", fake_load)
    for split in ("val", "test2016", "train"):
        with pytest.raises(RuntimeError):
            module.load_tfds_pairs("wmt14_translate/de-en", "de", "en", split)
    assert [s for _, s in seen] == ["validation", "test", "train"]
