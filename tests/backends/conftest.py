"""Tests that run on every Keras backend.

The main suite runs this folder on TensorFlow; `tests/backend_suites_test.py` runs it again
in one process per other backend (`KERAS_BACKEND=jax`, `KERAS_BACKEND=torch`), since Keras
reads the backend once, at import. A test here uses `keras.ops` and NumPy only, and checks
behaviour that must hold on any backend; comparisons with TensorFlow's own numbers go
through `zoo.testing.backend_probe` (a subprocess per backend, compared in the main suite).
"""

import keras
import pytest


@pytest.fixture
def backend():
    """The Keras backend this process runs: "tensorflow", "jax" or "torch"."""
    return keras.backend.backend()
