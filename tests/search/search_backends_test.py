"""Greedy and beam search give the same ids and scores on JAX and PyTorch as on TensorFlow for
the same weights (float32): each backend runs every comparison in one child process
(`zoo.testing.backend_run`, `zoo.testing.search_probe.search_outputs`), compared here with
TensorFlow's results computed in this process.

The weights are random at a scale that makes the output distributions peaked, so that no two
competing hypotheses tie within float32 rounding and the ids must agree exactly."""

import keras
import numpy as np
import pytest

from zoo.testing.backend_run import backend_installed, run_in_backend
from zoo.testing.search_probe import build_probe, random_weights, search_outputs

# A Luong model with input feeding, one with local-p attention, and Bahdanau's RNNsearch.
PRESETS = ["luong_global_general", "luong_local_p_general", "bahdanau_rnnsearch"]
RUNS = [
    {"beam_size": 1},
    {"beam_size": 3},
    {"beam_size": 4, "n_best": 3, "length_penalty": 0.6, "coverage_penalty": 0.4},
    {"beam_size": 3, "min_length": 3, "ban_unknown": True, "prefix": [[4], [], [5, 4]]},
]

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="compares other backends with TensorFlow"
)


@pytest.fixture(scope="module")
def tensorflow_outputs():
    inputs = {}
    for seed, name in enumerate(PRESETS):
        weights = random_weights(build_probe(name), seed=seed + 1)
        inputs.update({f"{name}/{i}": w for i, w in enumerate(weights)})
    return inputs, search_outputs(inputs, PRESETS, RUNS)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_search_agrees_with_tensorflow(backend, tensorflow_outputs):
    if not backend_installed(backend):
        pytest.skip(f"{backend} is not installed: pip install -e '.[{backend}]'")
    inputs, expected = tensorflow_outputs
    target = "zoo.testing.search_probe:search_outputs"
    got = run_in_backend(backend, target, inputs, presets=PRESETS, runs=RUNS)
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        if value.dtype.kind == "f":
            np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-5, err_msg=key)
        else:
            np.testing.assert_array_equal(got[key], value, err_msg=key)
