"""Checks every `zoo` layer and model must pass (in the spirit of keras-hub's `run_layer_test`).

Tests call these functions; each raises `AssertionError` naming what went wrong.

    from zoo.testing import run_layer_test

    run_layer_test(
        LuongAttention,
        init_kwargs={"score": "general"},
        input_data={"query": q, "memory": m, "mask": mask},   # the call's arguments, by name
        expected_output_shape=((2, 4), (2, 5)),
    )

`input_data` is a dict of the layer's call arguments. Array entries (NumPy arrays or tensors,
batch axis first) become `keras.Input`s in the symbolic and training checks; other entries
(None, Python values) are passed through unchanged, like `call_kwargs`.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import tempfile

import keras
import numpy as np
from keras import ops

PRECISION_POLICIES = ("mixed_float16", "mixed_bfloat16")
# Loose agreement expected between a mixed-precision output and the float32 output of the
# same weights on the same inputs: float16 keeps ~3 decimal digits, bfloat16 ~2.
PRECISION_ATOL = {"mixed_float16": 2e-2, "mixed_bfloat16": 1e-1}


@contextlib.contextmanager
def dtype_policy(name):
    """Set the global Keras dtype policy inside the block; always restore the previous one."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def to_numpy(x):
    """A tensor, variable or array-like as a NumPy array (None stays None)."""
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return x
    return keras.ops.convert_to_numpy(x)


def _flatten(outputs):
    if isinstance(outputs, (tuple, list)):
        return list(outputs)
    if isinstance(outputs, dict):
        return [outputs[k] for k in sorted(outputs)]
    return [outputs]


def _is_array(x):
    return isinstance(x, np.ndarray) or keras.ops.is_tensor(x)


def _split_inputs(input_data, call_kwargs):
    if not isinstance(input_data, dict):
        raise TypeError(
            f"input_data must be a dict of call arguments by name, received {type(input_data)}."
        )
    arrays = {k: v for k, v in input_data.items() if _is_array(v)}
    others = {k: v for k, v in input_data.items() if not _is_array(v)}
    others.update(call_kwargs or {})
    return arrays, others


def _shape_matches(expected, actual):
    actual = tuple(actual)
    if len(expected) != len(actual):
        return False
    return all(e is None or a is None or e == a for e, a in zip(expected, actual, strict=True))


def _assert_shapes(expected_shapes, outputs, what):
    outputs = _flatten(outputs)
    actual = [tuple(o.shape) for o in outputs]
    expected = (
        _flatten(expected_shapes)
        if isinstance(expected_shapes[0], (tuple, list))
        else [expected_shapes]
    )
    assert len(expected) == len(actual), (
        f"{what}: expected {len(expected)} outputs with shapes {expected}, received {actual}"
    )
    for e, a in zip(expected, actual, strict=True):
        assert _shape_matches(tuple(e), a), f"{what}: expected shapes {expected}, received {actual}"


def _symbolic_inputs(arrays):
    return {
        k: keras.Input(
            shape=tuple(v.shape[1:]), dtype=keras.backend.standardize_dtype(v.dtype), name=k
        )
        for k, v in arrays.items()
    }


def _compute_output_shape(layer, arrays):
    """Call `compute_output_shape` as Keras does: `<arg>_shape` names, the mask left out."""
    fn = layer.compute_output_shape
    shapes = {f"{k}_shape": tuple(v.shape) for k, v in arrays.items() if k != "mask"}
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY, p.KEYWORD_ONLY)
    ]
    if len(params) == 1:
        return fn(next(iter(shapes.values())))
    return fn(**{p.name: shapes[p.name] for p in params if p.name in shapes})


def _normalise_config_value(x):
    return json.loads(json.dumps(x, default=str))


def check_config(layer_cls, init_kwargs, custom_objects=None):
    """Config contract: every `__init__` argument in `get_config` and stored as an attribute.

    Also `from_config(get_config())` and `serialize_keras_object`/`deserialize_keras_object`
    (through JSON) give back the same config. Returns the revived layer.
    """
    layer = layer_cls(**init_kwargs)
    config = layer.get_config()
    signature = inspect.signature(layer_cls.__init__)
    for name, param in signature.parameters.items():
        if name == "self" or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        assert name in config, (
            f"{layer_cls.__name__}.get_config() lacks __init__ argument {name!r}; "
            f"config keys: {sorted(config)}"
        )
        assert hasattr(layer, name), (
            f"{layer_cls.__name__} does not store __init__ argument {name!r} as an attribute"
        )
        value = getattr(layer, name)
        if not isinstance(value, keras.layers.Layer | keras.initializers.Initializer):
            assert _normalise_config_value(value) == _normalise_config_value(config[name]), (
                f"{layer_cls.__name__}.{name} = {value!r} but get_config()[{name!r}] = "
                f"{config[name]!r}"
            )
        if name in init_kwargs and not isinstance(init_kwargs[name], keras.layers.Layer):
            given = init_kwargs[name]
            if isinstance(given, str | int | float | bool | type(None) | tuple | list):
                assert _normalise_config_value(given) == _normalise_config_value(config[name]), (
                    f"{layer_cls.__name__}({name}={given!r}) but get_config()[{name!r}] = "
                    f"{config[name]!r}"
                )
    config_json = json.dumps(config, sort_keys=True, default=str)

    with keras.saving.custom_object_scope(custom_objects or {}):
        revived = layer_cls.from_config(json.loads(json.dumps(config, default=str)))
    revived_json = json.dumps(revived.get_config(), sort_keys=True, default=str)
    assert revived_json == config_json, (
        f"from_config(get_config()) changed the config:\n{config_json}\n!=\n{revived_json}"
    )

    serialized = json.dumps(keras.saving.serialize_keras_object(layer), default=str)
    with keras.saving.custom_object_scope(custom_objects or {}):
        revived = keras.saving.deserialize_keras_object(json.loads(serialized))
    assert type(revived) is layer_cls, (
        f"deserialize_keras_object gave {type(revived)}, expected {layer_cls} "
        "(is the class registered with keras.saving.register_keras_serializable?)"
    )
    revived_json = json.dumps(revived.get_config(), sort_keys=True, default=str)
    assert revived_json == config_json, (
        f"serialize/deserialize_keras_object changed the config:\n{config_json}\n!=\n{revived_json}"
    )
    return revived


def _functional_model(layer, arrays, others):
    inputs = _symbolic_inputs(arrays)
    outputs = layer(**inputs, **others)
    return keras.Model(inputs, list(_flatten(outputs))), outputs


def check_gradients(layer, arrays, others, seed=0):
    """Every trainable weight gets a gradient that is neither None nor all zero (TF backend)."""
    import tensorflow as tf  # the harness needs a tape; model code never imports tf

    rng = np.random.default_rng(seed)
    tensors = {k: ops.convert_to_tensor(v) for k, v in arrays.items()}
    with tf.GradientTape() as tape:
        outputs = _flatten(layer(**tensors, **others))
        loss = 0.0
        for o in outputs:
            if keras.backend.is_float_dtype(o.dtype):
                r = rng.standard_normal(tuple(o.shape)).astype("float32")
                loss = loss + ops.sum(ops.cast(o, "float32") * r)
    variables = layer.trainable_variables
    grads = tape.gradient(loss, variables)
    for v, g in zip(variables, grads, strict=True):
        assert g is not None, f"{layer.name}: no gradient reaches weight {v.path}"
        g = to_numpy(ops.convert_to_tensor(g))
        assert np.all(np.isfinite(g)), f"{layer.name}: non-finite gradient for {v.path}"
        assert np.any(g != 0), f"{layer.name}: gradient for {v.path} is all zero"


def check_training_step(layer_cls, init_kwargs, arrays, others, seed=0, jit_compile=False):
    """One `fit` step of a functional model around the layer changes every trainable weight."""
    layer = layer_cls(**init_kwargs)
    model, _ = _functional_model(layer, arrays, others)
    rng = np.random.default_rng(seed)
    batch = next(iter(arrays.values())).shape[0]
    preds = _flatten(model({k: ops.convert_to_tensor(v) for k, v in arrays.items()}))
    targets = [rng.standard_normal(tuple(p.shape)).astype("float32") for p in preds]
    before = {v.path: to_numpy(v).copy() for v in layer.trainable_variables}
    assert before, f"{layer_cls.__name__} has no trainable weights"
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.1),
        loss=["mse"] * len(preds),
        jit_compile=jit_compile,
    )
    x = {k: to_numpy(v) for k, v in arrays.items()}
    history = model.fit(x, targets, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    assert np.isfinite(history.history["loss"][-1]), "training loss is not finite"
    for v in layer.trainable_variables:
        assert not np.array_equal(before[v.path], to_numpy(v)), (
            f"{layer_cls.__name__}: weight {v.path} did not change after one fit step"
        )


def check_precision(layer_cls, init_kwargs, arrays, others, policy, reference_layer=None):
    """Run the layer under global policy `policy` (restored afterwards).

    Variables stay float32, float outputs have the policy's compute dtype (eager and symbolic),
    all outputs are finite, and, given a built float32 `reference_layer`, the outputs agree with
    it on the same weights within `PRECISION_ATOL[policy]`.
    """
    tensors = {k: ops.convert_to_tensor(v) for k, v in arrays.items()}
    with dtype_policy(policy):
        layer = layer_cls(**init_kwargs)
        compute_dtype = keras.config.dtype_policy().compute_dtype
        assert layer.compute_dtype == compute_dtype, (
            f"{layer_cls.__name__} under {policy} has compute dtype {layer.compute_dtype}"
        )
        outputs = _flatten(layer(**tensors, **others))
        symbolic = _flatten(layer(**_symbolic_inputs(arrays), **others))
    for w in layer.weights:
        if keras.backend.is_float_dtype(w.dtype):
            assert keras.backend.standardize_dtype(w.dtype) == "float32", (
                f"{policy}: weight {w.path} is {w.dtype}, expected float32"
            )
    for i, (o, s) in enumerate(zip(outputs, symbolic, strict=True)):
        dtype = keras.backend.standardize_dtype(o.dtype)
        if keras.backend.is_float_dtype(dtype):
            assert dtype == compute_dtype, (
                f"{policy}: output {i} is {dtype}, expected the compute dtype {compute_dtype}"
            )
        sdtype = keras.backend.standardize_dtype(s.dtype)
        assert sdtype == dtype, f"{policy}: symbolic output {i} is {sdtype}, eager is {dtype}"
        value = to_numpy(ops.cast(o, "float32")) if keras.backend.is_float_dtype(dtype) else None
        if value is not None:
            assert np.all(np.isfinite(value)), f"{policy}: output {i} has non-finite values"
    if reference_layer is not None:
        layer.set_weights(reference_layer.get_weights())
        with dtype_policy(policy):
            outputs = _flatten(layer(**tensors, **others))
        expected = _flatten(reference_layer(**tensors, **others))
        for i, (o, e) in enumerate(zip(outputs, expected, strict=True)):
            if keras.backend.is_float_dtype(o.dtype):
                np.testing.assert_allclose(
                    to_numpy(ops.cast(o, "float32")),
                    to_numpy(e),
                    atol=PRECISION_ATOL[policy],
                    rtol=PRECISION_ATOL[policy],
                    err_msg=f"{policy}: output {i} strays from the float32 output",
                )
    return layer


def run_layer_test(
    layer_cls,
    init_kwargs,
    input_data,
    *,
    call_kwargs=None,
    expected_output_shape=None,
    expected_num_trainable_weights=None,
    expected_output=None,
    atol=1e-5,
    custom_objects=None,
    run_training_check=True,
    run_gradient_check=True,
    run_saving_check=True,
    run_precision_checks=True,
    precision_policies=PRECISION_POLICIES,
    compare_precision_to_float32=True,
):
    """Run the contract checks on one layer configuration.

    Args:
        layer_cls: the layer class.
        init_kwargs: dict of constructor arguments.
        input_data: dict of call arguments by name (arrays with the batch axis first, or None /
            Python values passed through).
        call_kwargs: further non-tensor call arguments (e.g. `{"training": False}`).
        expected_output_shape: a shape tuple, or a tuple of shape tuples for tuple outputs;
            None entries match any size.
        expected_num_trainable_weights: optional count.
        expected_output: optional outputs to match (same structure), `atol`.
        run_training_check: one `fit` step changes every trainable weight.
        run_gradient_check: every trainable weight gets a non-None, non-zero gradient.
        run_saving_check: a functional model around the layer survives `.keras` save/load
            with `safe_mode=True`.
        run_precision_checks: run `check_precision` under every policy in `precision_policies`.
        compare_precision_to_float32: also compare those outputs with the float32 layer's
            (turn off where a discrete choice, e.g. a window edge, may flip under rounding).

    Returns:
        The float32 layer built by the eager call.
    """
    init_kwargs = dict(init_kwargs or {})
    arrays, others = _split_inputs(input_data, call_kwargs)
    assert arrays, "input_data holds no arrays"

    check_config(layer_cls, init_kwargs, custom_objects)

    # Eager call.
    layer = layer_cls(**init_kwargs)
    tensors = {k: ops.convert_to_tensor(v) for k, v in arrays.items()}
    outputs = layer(**tensors, **others)
    assert layer.built, f"{layer_cls.__name__} is not built after its first call"
    eager_shapes = [tuple(o.shape) for o in _flatten(outputs)]
    if expected_output_shape is not None:
        _assert_shapes(expected_output_shape, outputs, "eager call")
    for i, o in enumerate(_flatten(outputs)):
        if keras.backend.is_float_dtype(o.dtype):
            assert np.all(np.isfinite(to_numpy(o))), f"eager output {i} has non-finite values"
    if expected_num_trainable_weights is not None:
        n = len(layer.trainable_weights)
        assert n == expected_num_trainable_weights, (
            f"expected {expected_num_trainable_weights} trainable weights, found {n}: "
            f"{[w.path for w in layer.trainable_weights]}"
        )
    if expected_output is not None:
        for i, (o, e) in enumerate(zip(_flatten(outputs), _flatten(expected_output), strict=True)):
            np.testing.assert_allclose(to_numpy(o), to_numpy(e), atol=atol, err_msg=f"output {i}")

    # compute_output_shape agrees with the eager call.
    computed = _compute_output_shape(layer, arrays)
    computed = _flatten(computed) if isinstance(computed[0], (tuple, list)) else [computed]
    assert [tuple(c) for c in computed] == eager_shapes, (
        f"compute_output_shape gave {computed}, the eager call {eager_shapes}"
    )

    # Symbolic call (batch axis unknown) agrees with the eager shapes.
    symbolic_layer = layer_cls(**init_kwargs)
    symbolic = _flatten(symbolic_layer(**_symbolic_inputs(arrays), **others))
    assert len(symbolic) == len(eager_shapes), "symbolic and eager calls differ in output count"
    for s, e in zip(symbolic, eager_shapes, strict=True):
        assert _shape_matches(tuple(s.shape), e) and s.shape[0] is None, (
            f"symbolic output shape {s.shape} does not fit the eager shape {e}"
        )
    for s, o in zip(symbolic, _flatten(outputs), strict=True):
        assert keras.backend.standardize_dtype(s.dtype) == keras.backend.standardize_dtype(
            o.dtype
        ), f"symbolic dtype {s.dtype} != eager dtype {o.dtype}"
    assert [w.path.split("/")[-1] for w in symbolic_layer.weights] == [
        w.path.split("/")[-1] for w in layer.weights
    ], "symbolic and eager builds made different weights"

    if run_gradient_check:
        check_gradients(layer, arrays, others)
    if run_training_check:
        check_training_step(layer_cls, init_kwargs, arrays, others)
    if run_saving_check:
        model, _ = _functional_model(layer_cls(**init_kwargs), arrays, others)
        run_model_saving_test(model, {k: to_numpy(v) for k, v in arrays.items()}, atol=atol)
    if run_precision_checks:
        for policy in precision_policies:
            reference = layer if compare_precision_to_float32 else None
            check_precision(layer_cls, init_kwargs, arrays, others, policy, reference)
    return layer


def run_model_saving_test(model, inputs, atol=1e-6, custom_objects=None):
    """Save `model` to `.keras`, load it with `safe_mode=True`, and compare outputs on `inputs`.

    Returns the loaded model.
    """
    expected = _flatten(model(inputs, training=False))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.keras")
        model.save(path)
        loaded = keras.saving.load_model(path, custom_objects=custom_objects, safe_mode=True)
    actual = _flatten(loaded(inputs, training=False))
    assert len(actual) == len(expected), "loaded model returns a different number of outputs"
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_allclose(
            to_numpy(a), to_numpy(e), atol=atol, err_msg=f"output {i} differs after save/load"
        )
    return loaded
