"""Shared fixtures for the model tests (helpers live in model_toy.py)."""

import numpy as np
import pytest


@pytest.fixture
def toy_batch():
    """A small right-padded batch: source (3, 5), target input (3, 6)."""
    source = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12], [4, 0, 0, 0, 0]], "int32")
    target = np.array([[1, 7, 6, 5, 0, 0], [1, 12, 11, 10, 9, 8], [1, 4, 0, 0, 0, 0]], "int32")
    return source, target
