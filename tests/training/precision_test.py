"""Tests for zoo/training/strategy.py and zoo/training/strategy.py."""

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


AMX = "flags\t\t: fpu sse2 avx2 fma avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8"
AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\nbugs\t\t: spectre_v1"


def test_cpu_flags_reads_the_flags_line_of_cpuinfo():
    assert training.cpu_flags(AVX2) == {"fpu", "sse2", "avx2", "fma"}
    assert "amx_bf16" in training.cpu_flags(AMX)
    assert training.cpu_flags("processor\t: 0\n") == frozenset()  # no flags line (ARM)
    assert isinstance(training.cpu_flags(), frozenset)  # this machine's


@pytest.mark.parametrize(
    "cpuinfo, gpus, expected, shown",
    [
        (AMX, 0, "mixed_bfloat16", "has AMX bfloat16 units (flags: avx2 fma avx512f avx512_vnni"),
        (AVX2, 0, "float32", "has no AMX bfloat16 units (flags: avx2 fma)"),
        ("flags : avx512_bf16 avx512f", 0, "float32", "no AMX"),  # dot products only
        (AMX, 1, "float32", "1 GPU(s) train"),
        ("", 0, "float32", "flags: none of avx2"),
    ],
)
def test_auto_precision_chooses_bfloat16_only_with_amx_units(cpuinfo, gpus, expected, shown):
    precision, reason = training.auto_precision(training.cpu_flags(cpuinfo), gpus)
    assert precision == expected and shown in reason, reason
    assert precision in training.PRECISIONS
