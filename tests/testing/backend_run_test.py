import numpy as np
import pytest

from zoo.testing.backend_run import backend_installed, run_in_backend


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_runs_in_the_named_backend_and_returns_the_arrays(backend):
    if not backend_installed(backend):
        pytest.skip(f"{backend} is not installed")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    out = run_in_backend(backend, "zoo.testing.backend_run:backend_name", {"x": x})
    assert str(out["backend"]) == backend
    np.testing.assert_array_equal(out["x"], x)


def test_a_failing_child_raises_with_its_traceback():
    with pytest.raises(RuntimeError, match="ModuleNotFoundError"):
        run_in_backend("tensorflow", "zoo.no_such_module:f")


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="backend must be one of"):
        run_in_backend("mxnet", "zoo.testing.backend_run:backend_name")
    with pytest.raises(ValueError, match="module:function"):
        run_in_backend("jax", "zoo.testing.backend_run.backend_name")
