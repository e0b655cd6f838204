"""Fixtures of the workflow tests: a tiny corpus of files in a temporary folder."""

import pytest
from recipe_runs import write_corpus


@pytest.fixture
def tiny_corpus(tmp_path, small_corpus):
    """A 200-pair training split with 8-pair val and test splits, as files."""
    return write_corpus(tmp_path / "corpus", small_corpus)
