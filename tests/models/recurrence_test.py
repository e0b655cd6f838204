import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.models.recurrence import (
    gru_params,
    gru_update,
    lstm_params,
    lstm_update,
    matmul_pretransposed,
    project,
    run_rnn,
    scan_steps,
)

# The Keras layers run_rnn stands in for: both GRU variants and the LSTM.
EVERY_KERAS_RNN = pytest.mark.parametrize(
    "make_layer",
    [
        lambda: keras.layers.GRU(6, reset_after=True, return_sequences=True, return_state=True),
        lambda: keras.layers.GRU(6, reset_after=False, return_sequences=True, return_state=True),
        lambda: keras.layers.LSTM(6, return_sequences=True, return_state=True),
    ],
    ids=["gru_reset_after", "gru_paper", "lstm"],
)


def _running_sum(xs, reverse=False):
    def step(state, x):
        (total,) = state
        return (total + x,), {"before": total, "double": 2.0 * x}

    return scan_steps(step, (tf.zeros_like(xs[0]),), xs, reverse=reverse)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_scan_steps_carries_state_and_stacks_outputs(jit_compile):
    xs = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")  # (T, B)
    (total,), outputs = tf.function(_running_sum, jit_compile=jit_compile)(xs)
    np.testing.assert_allclose(total, xs.sum(0), atol=1e-6)
    before = np.concatenate([np.zeros((1, 3), "float32"), np.cumsum(xs, 0)[:-1]])
    np.testing.assert_allclose(outputs["before"], before, atol=1e-6)
    np.testing.assert_allclose(outputs["double"], 2 * xs, atol=1e-6)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_scan_steps_reverse_runs_from_the_last_step_and_stacks_in_time_order(jit_compile):
    xs = np.random.default_rng(1).normal(size=(5, 3)).astype("float32")  # (T, B)
    run = tf.function(lambda xs: _running_sum(xs, reverse=True), jit_compile=jit_compile)
    (total,), outputs = run(xs)
    np.testing.assert_allclose(total, xs.sum(0), atol=1e-6)
    # output t is the sum of the steps after t: the state before step t, going backwards
    after = np.concatenate([np.cumsum(xs[::-1], 0)[::-1][1:], np.zeros((1, 3), "float32")])
    np.testing.assert_allclose(outputs["before"], after, atol=1e-6)
    np.testing.assert_allclose(outputs["double"], 2 * xs, atol=1e-6)


def test_scan_steps_single_step_and_eager():
    xs = np.ones((1, 2), "float32")
    (total,), outputs = _running_sum(xs)
    np.testing.assert_allclose(total, [1.0, 1.0])
    assert tuple(outputs["before"].shape) == (1, 2)


@pytest.mark.parametrize("reset_after", [False, True])
def test_gru_update_equals_keras_gru_cell(reset_after):
    rng = np.random.default_rng(1)
    cell = keras.layers.GRUCell(6, reset_after=reset_after)
    cell.build((None, 7))
    cell.set_weights([rng.normal(size=w.shape).astype("float32") for w in cell.weights])
    a, b, h = (rng.normal(size=(4, n)).astype("float32") for n in (3, 4, 6))
    expected, _ = cell(np.concatenate([a, b], -1), [h])
    params = gru_params(cell, [3, 4], "float32")
    x = project(a, params["kernels"][0], params["input_bias"]) + project(b, params["kernels"][1])
    np.testing.assert_allclose(gru_update(cell, params, x, h), expected, atol=1e-5)


def test_lstm_update_equals_keras_lstm_cell():
    rng = np.random.default_rng(2)
    cell = keras.layers.LSTMCell(5)
    cell.build((None, 7))
    cell.set_weights([rng.normal(size=w.shape).astype("float32") for w in cell.weights])
    a, b, h, c = (rng.normal(size=(3, n)).astype("float32") for n in (2, 5, 5, 5))
    expected_h, (_, expected_c) = cell(np.concatenate([a, b], -1), [h, c])
    params = lstm_params(cell, [2, 5], "float32")
    x = project(a, params["kernels"][0], params["input_bias"]) + project(b, params["kernels"][1])
    new_h, new_c = lstm_update(cell, params, x, h, c)
    np.testing.assert_allclose(new_h, expected_h, atol=1e-5)
    np.testing.assert_allclose(new_c, expected_c, atol=1e-5)


@EVERY_KERAS_RNN
@pytest.mark.parametrize(
    "with_initial_state, time_major", [(False, False), (True, False), (True, True)]
)
def test_run_rnn_equals_the_keras_layer_on_masked_batches(
    make_layer, with_initial_state, time_major
):
    """The hoisted CPU loop gives the Keras layer's outputs at real steps and its final
    states (the state after each right-padded row's last real step), also in a graph, and
    time-major ((T, B, ...) input and outputs, the mask still (B, T))."""
    rng = np.random.default_rng(3)
    layer = make_layer()
    layer.build((None, None, 5))
    layer.set_weights([rng.normal(size=w.shape).astype("float32") * 0.5 for w in layer.weights])
    x = rng.normal(size=(3, 7, 5)).astype("float32")
    mask = np.arange(7)[None, :] < np.array([[7], [4], [1]])  # right-padded rows
    n_states = 2 if isinstance(layer, keras.layers.LSTM) else 1
    initial = (
        [rng.normal(size=(3, 6)).astype("float32") for _ in range(n_states)]
        if with_initial_state
        else None
    )
    expected = layer(x, mask=mask, initial_state=initial)
    for run in (run_rnn, tf.function(run_rnn, autograph=False)):
        if time_major:
            got = run(layer, np.swapaxes(x, 0, 1), mask, initial, time_major=True)
            got = (np.swapaxes(got[0], 0, 1), *got[1:])
        else:
            got = run(layer, x, mask, initial)
        assert len(got) == len(expected) == 1 + n_states
        np.testing.assert_allclose(
            np.where(mask[:, :, None], got[0], 0),
            np.where(mask[:, :, None], expected[0], 0),
            atol=1e-5,
        )
        for got_state, expected_state in zip(got[1:], expected[1:], strict=True):
            np.testing.assert_allclose(got_state, expected_state, atol=1e-5)


def test_matmul_pretransposed_has_the_gradients_of_matmul():
    rng = np.random.default_rng(4)
    x = tf.constant(rng.normal(size=(3, 5)).astype("float32"))
    kernel = tf.constant(rng.normal(size=(5, 4)).astype("float32"))
    upstream = tf.constant(rng.normal(size=(3, 4)).astype("float32"))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, kernel])
        kernel_t = tf.transpose(kernel)  # as the loops make it: from the kernel itself
        fast = tf.reduce_sum(matmul_pretransposed(x, kernel, kernel_t) * upstream)
        plain = tf.reduce_sum(tf.matmul(x, kernel) * upstream)
    np.testing.assert_allclose(fast, plain, rtol=1e-6)
    for got, expected in zip(
        tape.gradient(fast, [x, kernel]), tape.gradient(plain, [x, kernel]), strict=True
    ):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # by hand: d/dx = upstream @ kernel^T, d/dkernel = x^T @ upstream
    np.testing.assert_allclose(tape.gradient(fast, x), upstream @ tf.transpose(kernel), rtol=1e-5)


@EVERY_KERAS_RNN
@pytest.mark.parametrize("time_major", [False, True])
def test_run_rnn_gradients_equal_the_keras_layer(make_layer, time_major):
    """The loops' backward (with `matmul_pretransposed`) gives the Keras layer's gradients
    with respect to its weights and its input, on a masked batch, in a graph, batch- or
    time-major."""
    rng = np.random.default_rng(5)
    layer = make_layer()
    layer.build((None, None, 5))
    layer.set_weights([rng.normal(size=w.shape).astype("float32") * 0.5 for w in layer.weights])
    x = tf.constant(rng.normal(size=(3, 7, 5)).astype("float32"))
    mask = tf.constant(np.arange(7)[None, :] < np.array([[7], [4], [2]]))
    weights = rng.normal(size=(3, 7, 6)).astype("float32")

    @tf.function(autograph=False)
    def gradients(use_keras):
        with tf.GradientTape() as tape:
            tape.watch(x)
            if use_keras:
                outputs = layer(x, mask=mask)
            elif time_major:
                outputs = run_rnn(layer, tf.transpose(x, [1, 0, 2]), mask, time_major=True)
                outputs = (tf.transpose(outputs[0], [1, 0, 2]), *outputs[1:])
            else:
                outputs = run_rnn(layer, x, mask)
            real = tf.where(mask[:, :, None], outputs[0], 0.0)
            loss = tf.reduce_sum(real * weights) + tf.reduce_sum(outputs[1] ** 2)
        return tape.gradient(loss, [x, *layer.trainable_weights])

    for got, expected in zip(gradients(False), gradients(True), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_run_rnn_refuses_what_it_would_ignore():
    x = np.zeros((1, 2, 3), "float32")
    for layer in (keras.layers.GRU(4, dropout=0.5), keras.layers.LSTM(4, go_backwards=True)):
        layer.build((None, None, 3))
        with pytest.raises(ValueError, match="run_rnn"):
            run_rnn(layer, x)
