"""Running a function on another Keras backend, in a subprocess, for cross-backend tests.

Keras reads `KERAS_BACKEND` once, at import, so a test on TensorFlow compares with JAX or
PyTorch by running the same computation in a child process:

    outputs = run_in_backend("jax", "zoo.testing.some_module:forward", {"weights": w}, size=3)

calls `forward(inputs, size=3)` in `python -m zoo.testing.backend_run` under
`KERAS_BACKEND=jax`, where `inputs` is the dict of NumPy arrays given (saved to and read
from an .npz file), and returns the dict of NumPy arrays it returned. Keyword arguments
travel as JSON. The child's output and traceback are in the error when it fails.
"""

import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from zoo.backend import BACKENDS, backend_installed  # noqa: F401 (the tests' names)
from zoo.backend import backend_name as current_backend  # this module's backend_name: a target


def run_in_backend(backend, target, inputs=None, timeout=600, **kwargs):
    """Runs `target` ("package.module:function") on Keras backend `backend` in a subprocess.

    Args:
        backend: one of BACKENDS.
        target: "module:function"; the function takes (inputs, **kwargs) and returns a dict
            of arrays (anything `np.asarray` takes).
        inputs: a dict of NumPy arrays (or None: an empty dict).
        timeout: seconds before the child is stopped.
        **kwargs: JSON-serialisable keyword arguments for the function.
    Returns:
        The function's dict, as NumPy arrays.
    Raises:
        ValueError: an unknown backend or a target without ":".
        RuntimeError: the child failed (its output attached).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}.")
    if ":" not in target:
        raise ValueError(f"target must be 'module:function', got {target!r}.")
    with tempfile.TemporaryDirectory(prefix="zoo-backend-run-") as folder:
        given, returned = Path(folder) / "inputs.npz", Path(folder) / "outputs.npz"
        np.savez(given, **(inputs or {}))
        env = dict(os.environ, KERAS_BACKEND=backend, CUDA_VISIBLE_DEVICES="")
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        command = [sys.executable, "-m", "zoo.testing.backend_run", target, str(given)]
        command += [str(returned), json.dumps(kwargs)]
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        if run.returncode != 0:
            raise RuntimeError(
                f"{target} on {backend} failed (exit status {run.returncode}):\n"
                f"{run.stdout[-4000:]}\n{run.stderr[-6000:]}"
            )
        with np.load(returned, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}


def backend_name(inputs):
    """A target for checking the mechanism itself: the child's backend and its inputs back."""
    return {"backend": np.array(current_backend()), **inputs}


def _main(target, given, returned, kwargs_json):
    module_name, function_name = target.split(":", 1)
    function = getattr(importlib.import_module(module_name), function_name)
    with np.load(given, allow_pickle=False) as data:
        inputs = {name: data[name] for name in data.files}
    outputs = function(inputs, **json.loads(kwargs_json))
    np.savez(returned, **{name: np.asarray(value) for name, value in outputs.items()})


if __name__ == "__main__":
    _main(*sys.argv[1:5])
