"""zoo.testing: checks shared by the tests (never imported by the package itself)."""

from zoo.testing.harness import (
    PRECISION_POLICIES,
    check_config,
    check_gradients,
    check_precision,
    check_training_step,
    dtype_policy,
    run_layer_test,
    run_model_saving_test,
    to_numpy,
)

__all__ = [
    "PRECISION_POLICIES",
    "check_config",
    "check_gradients",
    "check_precision",
    "check_training_step",
    "dtype_policy",
    "run_layer_test",
    "run_model_saving_test",
    "to_numpy",
]
