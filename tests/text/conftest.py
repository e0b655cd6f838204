"""Session-scoped fixtures for tests/text: real Multi30k sentences and trained tokenizers."""

import pytest

from zoo.data.files import data_dir
from zoo.text import train_tokenizer

TRAIN_LINES = 2000


def _read(name):
    path = data_dir() / "multi30k" / name
    if not path.is_file():
        pytest.skip(f"Multi30k not found at {path}; set ZOO_DATA_DIR to the shared data folder.")
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


@pytest.fixture(scope="session")
def train_en():
    return _read("train.en")[:TRAIN_LINES]


@pytest.fixture(scope="session")
def train_de():
    return _read("train.de")[:TRAIN_LINES]


@pytest.fixture(scope="session")
def val_en():
    return _read("val.en")[:200]


@pytest.fixture(scope="session")
def val_de():
    return _read("val.de")[:200]


@pytest.fixture(scope="session")
def tokenizers(train_en):
    """One small tokenizer of each kind, trained on 2000 English Multi30k lines."""
    return {
        "sentencepiece": train_tokenizer("sentencepiece", train_en, vocab_size=500),
        "wordpiece": train_tokenizer("wordpiece", train_en, vocab_size=500),
        "word": train_tokenizer("word", train_en, vocab_size=1000),
    }
