"""The harness itself: it passes a correct toy layer and catches each defect it is meant to."""

import keras
import numpy as np
import pytest
from keras import ops

from zoo.testing import dtype_policy, run_layer_test, run_model_saving_test


@keras.saving.register_keras_serializable(package="zoo_harness_test")
class ToyAttention(keras.layers.Layer):
    """Dot attention with a learnt query projection: e_s = (q @ W) . m_s."""

    def __init__(self, scale=1.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def build(self, query_shape, memory_shape):
        self.W = self.add_weight(
            name="W", shape=(query_shape[-1], memory_shape[-1]), initializer="glorot_uniform"
        )

    def call(self, query, memory, mask=None):
        single = len(query.shape) == 2
        q = query[:, None, :] if single else query
        e = ops.einsum("btd,bsd->bts", ops.matmul(q, self.W), memory) * self.scale
        e = ops.cast(e, "float32")
        if mask is not None:
            m = ops.cast(mask, "bool")[:, None, :]
            e = ops.where(m, e, -1e9)
            w = ops.softmax(e, axis=-1) * ops.cast(m, "float32")
        else:
            w = ops.softmax(e, axis=-1)
        w = ops.cast(w, self.compute_dtype)
        c = ops.einsum("bts,bsd->btd", w, memory)
        if single:
            return c[:, 0], w[:, 0]
        return c, w

    def compute_output_shape(self, query_shape, memory_shape):
        if len(query_shape) == 2:
            return (query_shape[0], memory_shape[-1]), (query_shape[0], memory_shape[1])
        return (
            (query_shape[0], query_shape[1], memory_shape[-1]),
            (query_shape[0], query_shape[1], memory_shape[1]),
        )

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


def _data(tq=None):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((3, 4) if tq is None else (3, tq, 4)).astype("float32")
    m = rng.standard_normal((3, 5, 6)).astype("float32")
    mask = np.arange(5)[None, :] < np.array([[5], [2], [3]])
    return {"query": q, "memory": m, "mask": mask}


@pytest.mark.parametrize("tq", [None, 2])
def test_toy_layer_passes(tq):
    shape = ((3, 6), (3, 5)) if tq is None else ((3, tq, 6), (3, tq, 5))
    run_layer_test(
        ToyAttention,
        {"scale": 0.5},
        _data(tq),
        expected_output_shape=shape,
        expected_num_trainable_weights=1,
    )


def test_wrong_expected_shape_fails():
    with pytest.raises(AssertionError, match="expected shapes"):
        run_layer_test(
            ToyAttention,
            {},
            _data(),
            expected_output_shape=((3, 7), (3, 5)),
            run_training_check=False,
            run_precision_checks=False,
            run_saving_check=False,
        )


@keras.saving.register_keras_serializable(package="zoo_harness_test")
class ForgetsConfig(ToyAttention):
    def get_config(self):
        config = super().get_config()
        config.pop("scale")
        return config


def test_missing_config_entry_fails():
    with pytest.raises(AssertionError, match="lacks __init__ argument 'scale'"):
        run_layer_test(ForgetsConfig, {}, _data())


@keras.saving.register_keras_serializable(package="zoo_harness_test")
class RenamesAttribute(ToyAttention):
    def __init__(self, scale=1.0, **kwargs):
        super().__init__(scale=scale, **kwargs)
        del self.scale
        self._scale = scale

    def call(self, query, memory, mask=None):
        self.scale = self._scale
        return super().call(query, memory, mask)

    def get_config(self):
        return {**keras.layers.Layer.get_config(self), "scale": self._scale}


def test_attribute_not_stored_fails():
    with pytest.raises(AssertionError, match="does not store __init__ argument 'scale'"):
        run_layer_test(RenamesAttribute, {}, _data())


@keras.saving.register_keras_serializable(package="zoo_harness_test")
class Float16Weights(ToyAttention):
    def build(self, query_shape, memory_shape):
        self.W = self.add_weight(
            name="W", shape=(query_shape[-1], memory_shape[-1]), dtype=self.compute_dtype
        )


def test_weights_in_compute_dtype_fail():
    with pytest.raises(AssertionError, match="expected float32"):
        run_layer_test(Float16Weights, {}, _data(), run_training_check=False)


@keras.saving.register_keras_serializable(package="zoo_harness_test")
class Overflows(ToyAttention):
    def call(self, query, memory, mask=None):
        c, w = super().call(query, memory, mask)
        return c * ops.cast(1e5, c.dtype), w


def test_float16_overflow_fails():
    with pytest.raises(AssertionError, match="mixed_float16: output 0 has non-finite"):
        run_layer_test(
            Overflows,
            {},
            _data(),
            run_training_check=False,
            run_saving_check=False,
            precision_policies=("mixed_float16",),
            compare_precision_to_float32=False,
        )


@keras.saving.register_keras_serializable(package="zoo_harness_test")
class DeadWeight(ToyAttention):
    def build(self, query_shape, memory_shape):
        super().build(query_shape, memory_shape)
        self.unused = self.add_weight(name="unused", shape=(2,))


def test_weight_without_gradient_fails():
    with pytest.raises(AssertionError, match="no gradient reaches weight"):
        run_layer_test(DeadWeight, {}, _data(), run_precision_checks=False)


def test_dtype_policy_restored_after_failure():
    before = keras.config.dtype_policy().name
    with pytest.raises(RuntimeError):
        with dtype_policy("mixed_bfloat16"):
            assert keras.config.dtype_policy().name == "mixed_bfloat16"
            raise RuntimeError("boom")
    assert keras.config.dtype_policy().name == before


def _model(layer):
    data = _data()
    inputs = {
        k: keras.Input(shape=v.shape[1:], dtype=str(v.dtype), name=k) for k, v in data.items()
    }
    context, _ = layer(**inputs)
    return keras.Model(inputs, context), data


def test_model_saving_passes_faithful_layer():
    model, data = _model(ToyAttention(scale=0.5))
    loaded = run_model_saving_test(model, data)
    assert isinstance(loaded.layers[-1], ToyAttention)


def test_model_saving_detects_lost_config():
    model, data = _model(ForgetsConfig(scale=0.5))  # reloads with scale=1.0
    with pytest.raises(AssertionError, match="differs after save/load"):
        run_model_saving_test(model, data)
