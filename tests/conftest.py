"""Shared pytest set-up: quiet TensorFlow, the corpora folder, a clean dtype policy."""

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
