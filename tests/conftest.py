"""Shared pytest set-up: quiet TensorFlow, the corpora folder, a clean dtype policy, and
Multi30k slices with small tokenizers trained once."""

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# Tests read the real corpora in ../shared/data (never copied into the project).
os.environ.setdefault("ZOO_DATA_DIR", str(REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir():
    path = Path(os.environ["ZOO_DATA_DIR"])
    if not (path / "multi30k" / "train.de").exists():
        pytest.skip(f"corpora not found under ZOO_DATA_DIR={path}")
    return path


@pytest.fixture(autouse=True)
def _restore_dtype_policy():
    """Tests may switch to mixed precision; every test starts and ends in float32."""
    keras.mixed_precision.set_dtype_policy("float32")
    yield
    keras.mixed_precision.set_dtype_policy("float32")


@pytest.fixture(scope="session")
def multi30k_train():
    from zoo.data import load_corpus
    from zoo.data.files import data_dir

    if not (data_dir() / "multi30k" / "train.de").is_file():
        pytest.skip(f"Multi30k not found in {data_dir()}; set ZOO_DATA_DIR.")
    return load_corpus("multi30k", "de", "en", "train")


@pytest.fixture(scope="session")
def small_corpus(multi30k_train):
    return multi30k_train.take(600)


@pytest.fixture(scope="session")
def tokenizer_pair(multi30k_train):
    """(German, English) SentencePiece tokenizers of 500 pieces, on 2000 training lines."""
    from zoo.text import train_tokenizer

    part = multi30k_train.take(2000)
    return (
        train_tokenizer("sentencepiece", part.source, vocab_size=500),
        train_tokenizer("sentencepiece", part.target, vocab_size=500),
    )
