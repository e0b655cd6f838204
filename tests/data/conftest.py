"""Fixtures for tests/data (the corpora slices and tokenizers are in tests/conftest.py)."""

import pytest


@pytest.fixture
def data_root(tmp_path, monkeypatch):
    """An empty ZOO_DATA_DIR and ZOO_CACHE_DIR, for tests that write their own files."""
    monkeypatch.setenv("ZOO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "data").mkdir()
    return tmp_path / "data"
