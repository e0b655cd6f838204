"""Tests for zoo/training/fused_update.py and the two optimizers built on it
(fused_adam.py, fused_adadelta.py): NumPy versions of the Adam and Adadelta equations,
Keras's own optimizers, and the fused kernel actually being used."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.training import FusedAdadelta, FusedAdam, make_optimizer

STEPS = 4


def numpy_adam(w, grads, lr=0.01, b1=0.9, b2=0.999, eps=1e-7):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr * np.sqrt(1 - b2**t) / (1 - b1**t) * m / (np.sqrt(v) + eps)
    return w, [m, v]


def numpy_adadelta(w, grads, lr=1.0, rho=0.95, eps=1e-6):
    a, d = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        a = rho * a + (1 - rho) * g * g
        u = np.sqrt(d + eps) / np.sqrt(a + eps) * g
        d = rho * d + (1 - rho) * u * u
        w = w - lr * u
    return w, [a, d]


CASES = {
    "adam": (FusedAdam, keras.optimizers.Adam, {"learning_rate": 0.01}, numpy_adam),
    "adadelta": (
        FusedAdadelta,
        keras.optimizers.Adadelta,
        {"learning_rate": 1.0, "rho": 0.95, "epsilon": 1e-6},
        numpy_adadelta,
    ),
}
KERNEL = {"adam": "ResourceApplyAdam", "adadelta": "ResourceApplyAdadelta"}


def _grads(shape, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype("float32") for _ in range(STEPS)]


def _train(make, w0, grads, *, jit_compile=False, strategy=None):
    """Applies `grads` in turn, with the optimizer `make()`, to a variable starting at w0;
    returns (w, slot values, the op types of the traced update)."""
    strategy = strategy or tf.distribute.get_strategy()
    with strategy.scope():
        w = keras.Variable(w0, name="w")
        optimizer = make()
        optimizer.build([w])

    def update(g):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w.value * g)  # its gradient is g
        optimizer.apply_gradients(zip(tape.gradient(loss, [w.value]), [w], strict=True))

    replica_update = tf.function(update, jit_compile=True) if jit_compile else update

    @tf.function
    def apply(g):
        strategy.run(replica_update, args=(g,))

    for g in grads:
        apply(tf.constant(g))
    graph = apply.get_concrete_function(tf.TensorSpec(w0.shape, "float32")).graph
    slots = [np.array(v) for v in optimizer.variables if v.name != "iteration"]
    slots = [s for s in slots if s.shape == w0.shape]
    return np.array(w), slots, {op.type for op in graph.get_operations()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_update_matches_numpy_equations_and_keras(name):
    fused, plain, kwargs, reference = CASES[name]
    w0 = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(3, 4)
    grads = _grads(w0.shape)
    w, slots, op_types = _train(lambda: fused(**kwargs), w0, grads)
    expected_w, expected_slots = reference(w0.astype("float64"), grads, **_numpy_kwargs(kwargs))
    np.testing.assert_allclose(w, expected_w, rtol=1e-5, atol=1e-6)
    for slot, expected in zip(slots, expected_slots, strict=True):
        np.testing.assert_allclose(slot, expected, rtol=1e-5, atol=1e-7)
    keras_w, keras_slots, _ = _train(lambda: plain(**kwargs), w0, grads)
    np.testing.assert_allclose(w, keras_w, rtol=1e-6, atol=1e-6)
    for slot, keras_slot in zip(slots, keras_slots, strict=True):
        np.testing.assert_allclose(slot, keras_slot, rtol=1e-6, atol=1e-7)
    assert KERNEL[name] in op_types  # the update is the one fused kernel, not Keras's ops


def _numpy_kwargs(kwargs):
    names = {"learning_rate": "lr", "rho": "rho", "epsilon": "eps"}
    return {names[k]: v for k, v in kwargs.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_update_under_xla_and_a_distribution_strategy(name):
    fused, _, kwargs, _ = CASES[name]
    w0 = np.linspace(-1.0, 1.0, 6, dtype="float32").reshape(2, 3)
    grads = _grads(w0.shape, seed=1)
    expected, _, _ = _train(lambda: fused(**kwargs), w0, grads)
    compiled, _, _ = _train(lambda: fused(**kwargs), w0, grads, jit_compile=True)
    np.testing.assert_allclose(compiled, expected, rtol=1e-6, atol=1e-6)
    mirrored, _, op_types = _train(
        lambda: fused(**kwargs), w0, grads, strategy=tf.distribute.MirroredStrategy()
    )
    np.testing.assert_allclose(mirrored, expected, rtol=1e-6, atol=1e-6)
    assert KERNEL[name] in op_types


@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse_gradient_with_repeated_rows_is_summed_first(name):
    # An embedding looked up at rows [1, 1, 2]: the gradient is IndexedSlices with row 1
    # twice; the equations take the summed gradient of each row.
    fused, _, kwargs, reference = CASES[name]
    table0 = np.linspace(-1.0, 1.0, 8, dtype="float32").reshape(4, 2)
    table = keras.Variable(table0)
    optimizer = fused(**kwargs)
    optimizer.build([table])
    ids = tf.constant([1, 1, 2])

    @tf.function
    def apply():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(table, ids) ** 2)
        (gradient,) = tape.gradient(loss, [table])
        optimizer.apply_gradients([(gradient, table)])
        return gradient

    dense_grads = []
    for _ in range(STEPS):
        before = np.array(table)
        gradient = apply()
        assert isinstance(gradient, tf.IndexedSlices)
        dense = np.zeros_like(before)
        np.add.at(dense, [1, 1, 2], 2 * before[[1, 1, 2]])
        dense_grads.append(dense)
    expected, _ = reference(table0.astype("float64"), dense_grads, **_numpy_kwargs(kwargs))
    np.testing.assert_allclose(np.array(table), expected, rtol=1e-5, atol=1e-6)


def test_amsgrad_falls_back_to_the_keras_update():
    w0 = np.linspace(-1.0, 1.0, 6, dtype="float32").reshape(2, 3)
    grads = _grads(w0.shape, seed=2)
    w, _, op_types = _train(lambda: FusedAdam(learning_rate=0.01, amsgrad=True), w0, grads)
    expected, _, _ = _train(
        lambda: keras.optimizers.Adam(learning_rate=0.01, amsgrad=True), w0, grads
    )
    np.testing.assert_allclose(w, expected, rtol=1e-6, atol=1e-6)
    assert "ResourceApplyAdam" not in op_types


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_slots_and_config_as_the_keras_optimizer(name):
    fused, plain, kwargs, _ = CASES[name]
    w = keras.Variable(np.zeros((2, 3), "float32"), name="w")
    a, b = fused(global_clipnorm=2.0, **kwargs), plain(global_clipnorm=2.0, **kwargs)
    a.build([w])
    b.build([w])

    # The same variables in the same order (paths below the optimizer's own name):
    # checkpoints (`CheckpointManager` matches by position and shape) move between the two.
    def variables(optimizer):
        return [(v.path.split("/", 1)[1], tuple(v.shape)) for v in optimizer.variables]

    assert variables(a) == variables(b)
    restored = keras.optimizers.deserialize(keras.optimizers.serialize(a))
    assert type(restored) is fused
    assert restored.get_config() == a.get_config()


def test_make_optimizer_returns_the_fused_optimizers():
    assert type(make_optimizer("adam")) is FusedAdam
    adadelta = make_optimizer("bahdanau")
    assert type(adadelta) is FusedAdadelta
    assert (adadelta.rho, adadelta.epsilon, adadelta.global_clipnorm) == (0.95, 1e-6, 1.0)
