"""tests/backends/ again under JAX and PyTorch, each backend in its own process (Keras
reads KERAS_BACKEND once, at import). Skipped, with the install command, where the
backend's package is missing."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parent / "backends"


@pytest.mark.parametrize(
    "backend, selection",
    [
        ("jax", "not slow"),
        ("torch", "not slow"),
        pytest.param("jax", "", marks=pytest.mark.slow),  # every preset: minutes
        pytest.param("torch", "", marks=pytest.mark.slow),
    ],
)
def test_backend_suite_passes(backend, selection):
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed: pip install -e '.[{backend}]'")
    env = dict(os.environ, KERAS_BACKEND=backend, CUDA_VISIBLE_DEVICES="")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider"]
    command += ["-m", selection, str(FOLDER)]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    assert run.returncode == 0, f"{backend}:\n{run.stdout[-10000:]}\n{run.stderr[-3000:]}"
