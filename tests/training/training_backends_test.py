"""Training on JAX and PyTorch against TensorFlow: for the same weights and batch, every
tiny preset's loss and the gradient of each of its variables (each backend's own autodiff)
agree within 1e-4 relative, and on JAX one update of the recipes' train step (label
smoothing, global-norm clipping, accumulation) gives TensorFlow's weights.

TensorFlow runs here (`tf.GradientTape`); each other backend runs once, for all presets,
in a child process (`zoo.testing.backend_run`)."""

import keras
import numpy as np
import pytest

from zoo.models import presets
from zoo.testing.backend_run import backend_installed, run_in_backend
from zoo.testing.training_probe import probe, probe_batch, probe_model, weight_arrays

PRESETS = presets()
UPDATED = "luong_global_general"  # input feeding: the decoder's step loop
RELATIVE = 1e-4


@pytest.fixture(scope="module")
def inputs():
    """The batch and each preset's weights, drawn here (TensorFlow)."""
    arrays = dict(probe_batch())
    for preset in PRESETS:
        arrays.update(weight_arrays(probe_model(preset), preset))
    return arrays


@pytest.fixture(scope="module")
def reference(inputs):
    """TensorFlow's losses, gradients and updates."""
    assert keras.backend.backend() == "tensorflow"
    return probe(inputs, PRESETS, update=UPDATED)


def relative_error(value, expected, floor=1e-12):
    """||value - expected|| / ||expected||, the norm of `expected` taken as at least `floor`."""
    return np.linalg.norm(value - expected) / max(np.linalg.norm(expected), floor)


def check_agreement(outputs, reference, backend, prefixes, floor=1e-12):
    checked = 0
    for key, expected in reference.items():
        if not key.startswith(prefixes):
            continue
        assert key in outputs, f"{backend} returned no {key}"
        assert outputs[key].shape == expected.shape, (backend, key)
        error = relative_error(outputs[key], expected, floor)
        assert error <= RELATIVE, f"{backend} {key}: relative error {error:.2e}"
        checked += 1
    return checked


def gradient_norm(reference, preset):
    """The norm of all the preset's gradients together."""
    squares = [np.sum(g**2) for k, g in reference.items() if k.startswith(f"{preset}:grad/")]
    return float(np.sqrt(sum(squares)))


@pytest.mark.slow  # every preset's gradients compiled on JAX: minutes
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_losses_and_gradients_of_every_preset_agree_with_tensorflow(backend, inputs, reference):
    if not backend_installed(backend):
        pytest.skip(f"{backend} is not installed: pip install -e '.[{backend}]'")
    update = UPDATED if backend == "jax" else None  # PyTorch trains with model.fit
    outputs = run_in_backend(
        backend, "zoo.testing.training_probe:probe", inputs, 1800, presets=PRESETS, update=update
    )
    for preset in PRESETS:
        model_variables = sum(key.startswith(f"{preset}/") for key in inputs)
        # A variable whose gradient is negligible at these weights (Bahdanau's W_a: a
        # billionth of the whole) is compared on the scale of the model's gradient.
        floor = 1e-3 * gradient_norm(reference, preset)
        gradients = check_agreement(outputs, reference, backend, (f"{preset}:grad/",), floor)
        assert gradients == model_variables, preset  # every variable has its gradient
        check_agreement(outputs, reference, backend, (f"{preset}:loss",))
        nonzero = [np.abs(outputs[f"{preset}:grad/{i:03d}"]).max() > 0 for i in range(gradients)]
        assert sum(nonzero) > gradients // 2, preset  # the comparison is not of zeros
    if update is not None:
        prefixes = tuple(f"{UPDATED}:update{n}" for n in (1, 2))
        assert check_agreement(outputs, reference, backend, prefixes) > 0


def test_the_update_moves_the_weights(inputs, reference):
    """The reference update is one: the weights moved, and two accumulated halves of the
    batch made (nearly) the update of the whole batch."""
    moved = [
        relative_error(reference[f"{UPDATED}:update1/{i:03d}"], inputs[f"{UPDATED}/{i:03d}"])
        for i in range(sum(key.startswith(f"{UPDATED}/") for key in inputs))
    ]
    assert max(moved) > 1e-4
    for i in range(len(moved)):
        np.testing.assert_allclose(
            reference[f"{UPDATED}:update2/{i:03d}"],
            reference[f"{UPDATED}:update1/{i:03d}"],
            rtol=1e-4,
            atol=1e-6,
        )
    np.testing.assert_allclose(
        reference[f"{UPDATED}:update2:stats"], reference[f"{UPDATED}:update1:stats"], rtol=1e-5
    )
