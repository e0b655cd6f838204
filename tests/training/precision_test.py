"""Tests for zoo/training/precision.py and zoo/training/strategy.py."""

import keras
import pytest
import tensorflow as tf

from zoo import training


@pytest.mark.parametrize("name", ["float32", "mixed_float16", "mixed_bfloat16"])
def test_set_precision_sets_and_returns_previous(name):
    previous = training.set_precision(name)
    try:
        assert previous == "float32"
        assert keras.config.dtype_policy().name == name
        layer = keras.layers.Dense(2)
        assert layer.variable_dtype == "float32"
    finally:
        assert training.set_precision(previous) == name
    assert keras.config.dtype_policy().name == "float32"


def test_unknown_names_raise(monkeypatch):
    with pytest.raises(ValueError, match="Unknown precision"):
        training.set_precision("float16")
    with pytest.raises(ValueError, match="Unknown strategy"):
        training.make_strategy("tpu")
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match="TF_CONFIG"):
        training.make_strategy("multiworker")


def test_default_and_mirrored_strategies():
    assert training.make_strategy("default") is tf.distribute.get_strategy()
    mirrored = training.make_strategy("mirrored")
    assert isinstance(mirrored, tf.distribute.MirroredStrategy)
    assert mirrored.num_replicas_in_sync >= 1
    assert training.is_chief(mirrored) and training.is_chief()
