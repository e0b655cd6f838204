"""Fixtures for tests/data: real corpora slices and small tokenizers trained once."""

import pytest

from zoo.data import load_corpus
from zoo.data.paths import data_dir
from zoo.text import train_tokenizer


@pytest.fixture(scope="session")
def multi30k_train():
    if not (data_dir() / "multi30k" / "train.de").is_file():
        pytest.skip(f"Multi30k not found in {data_dir()}; set ZOO_DATA_DIR.")
    return load_corpus("multi30k", "de", "en", "train")


@pytest.fixture(scope="session")
def small_corpus(multi30k_train):
    return multi30k_train.take(600)


@pytest.fixture(scope="session")
def tokenizer_pair(multi30k_train):
    """(German, English) SentencePiece tokenizers of 500 pieces, on 2000 training lines."""
    part = multi30k_train.take(2000)
    return (
        train_tokenizer("sentencepiece", part.source, vocab_size=500),
        train_tokenizer("sentencepiece", part.target, vocab_size=500),
    )


@pytest.fixture
def data_root(tmp_path, monkeypatch):
    """An empty ZOO_DATA_DIR and ZOO_CACHE_DIR, for tests that write their own files."""
    monkeypatch.setenv("ZOO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "data").mkdir()
    return tmp_path / "data"
