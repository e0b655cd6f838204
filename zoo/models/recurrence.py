"""Recurrence kernels shared by the decoders: a scan over time steps and the GRU/LSTM updates.

These are documented, backend-specific kernels in the spirit of Keras's own backend RNN
implementations (`keras/src/backend/tensorflow/rnn.py`): the model code stays in
`keras.ops`, and only the loop construct is chosen per backend.

- `scan_steps(step_fn, state, inputs)` runs `step_fn` over the leading (time) axis. On the
  TensorFlow backend it is a `tf.while_loop` with `maximum_iterations` set, the state carried
  as plain loop variables and TensorArrays only for the per-step outputs, so it compiles with
  XLA (`jit_compile=True`) and does not copy the state into TensorArrays at every step, as
  `keras.ops.scan` does on that backend (its outputs must mirror the carry). Other backends
  use `keras.ops.scan`.
- `gru_update` and `lstm_update` are the Keras `GRUCell`/`LSTMCell` equations (their default
  `implementation=2`, no cell dropout) written on a precomputed input projection
  `x @ kernel + bias`, so that a decoder can project every step's teacher-forced input in
  one matmul before the loop and keep only the recurrent matmuls inside it. They read the
  cell's own weights, so saved models are unchanged.
"""

import keras
from keras import ops, tree


def scan_steps(step_fn, state, inputs):
    """Runs `step_fn` over the time axis of `inputs`; returns (final state, stacked outputs).

    Args:
        step_fn: `(state, inputs_t) -> (new_state, outputs_t)`; `state` and `new_state` have
            the same structure, shapes and dtypes; `outputs_t` is any nest of tensors.
        state: the initial state, a nest of tensors.
        inputs: a nest of time-major tensors `(T, ...)` with T >= 1 (the same T for all).

    Returns:
        (state after the last step, outputs stacked on a new leading time axis `(T, ...)`).

    Example:
        state, outputs = scan_steps(lambda s, x: (s + x, 2 * s), zeros((B,)), xs)  # xs (T, B)
    """
    if keras.backend.backend() != "tensorflow":
        return ops.scan(step_fn, state, inputs)
    import tensorflow as tf  # the TensorFlow backend's loop (see the module docstring)

    flat_inputs = [tf.convert_to_tensor(x) for x in tree.flatten(inputs)]
    length = flat_inputs[0].shape[0]
    if length is None:
        length = tf.shape(flat_inputs[0])[0]
    input_arrays = [
        tf.TensorArray(x.dtype, size=length, element_shape=x.shape[1:]).unstack(x)
        for x in flat_inputs
    ]

    def inputs_at(t):
        return tree.pack_sequence_as(inputs, [array.read(t) for array in input_arrays])

    # The first step runs before the loop: its outputs give the output arrays' dtypes and
    # shapes, and the loop variables then have fixed shapes.
    state, outputs = step_fn(state, inputs_at(0))
    flat_outputs = tree.flatten(outputs)
    output_arrays = [
        tf.TensorArray(y.dtype, size=length, element_shape=y.shape).write(0, y)
        for y in flat_outputs
    ]
    flat_state = tree.flatten(state)

    def body(t, flat_state, output_arrays):
        new_state, outputs = step_fn(tree.pack_sequence_as(state, flat_state), inputs_at(t))
        new_flat = tree.flatten(new_state)
        written = [a.write(t, y) for a, y in zip(output_arrays, tree.flatten(outputs), strict=True)]
        return t + 1, new_flat, written

    _, flat_state, output_arrays = tf.while_loop(
        lambda t, *_: t < length,
        body,
        (tf.constant(1, "int32"), flat_state, output_arrays),
        maximum_iterations=length - 1,
    )
    stacked = [array.stack() for array in output_arrays]
    return tree.pack_sequence_as(state, flat_state), tree.pack_sequence_as(outputs, stacked)


def gru_update(cell, x_projection, h):
    """One `keras.layers.GRUCell` step given `x_projection = x @ cell.kernel + input bias`.

    Args:
        cell: a built GRUCell (no dropout); its recurrent weights are used here.
        x_projection: (B, 3 units), the input projection including the input bias
            (`cell.bias` with reset_after=False, `cell.bias[0]` with reset_after=True).
        h: (B, units) previous state.
    Returns:
        the new state (B, units): z * h + (1 - z) * activation(x_h + recurrent_h).
    """
    units = cell.units
    x_z, x_r, x_h = ops.split(x_projection, 3, axis=-1)
    kernel = ops.cast(cell.recurrent_kernel, h.dtype)
    if cell.reset_after:
        inner = ops.matmul(h, kernel)
        if cell.use_bias:
            inner = inner + ops.cast(cell.bias[1], h.dtype)
        recurrent_z, recurrent_r, recurrent_h = ops.split(inner, 3, axis=-1)
        z = cell.recurrent_activation(x_z + recurrent_z)
        r = cell.recurrent_activation(x_r + recurrent_r)
        recurrent_h = r * recurrent_h
    else:
        inner = ops.matmul(h, kernel[:, : 2 * units])
        z = cell.recurrent_activation(x_z + inner[:, :units])
        r = cell.recurrent_activation(x_r + inner[:, units:])
        recurrent_h = ops.matmul(r * h, kernel[:, 2 * units :])
    candidate = cell.activation(x_h + recurrent_h)
    return z * h + (1 - z) * candidate


def gru_input_bias(cell):
    """The bias added to the GRU input projection (None without bias)."""
    if not cell.use_bias:
        return None
    return cell.bias[0] if cell.reset_after else cell.bias


def lstm_update(cell, x_projection, h, c):
    """One `keras.layers.LSTMCell` step given `x_projection = x @ cell.kernel + cell.bias`.

    Args:
        cell: a built LSTMCell (no dropout); its recurrent kernel is used here.
        x_projection: (B, 4 units), input projection including the bias.
        h, c: (B, units) previous output and carry.
    Returns:
        (h, c) new output and carry: i, f, g, o gates as in Keras's fused implementation.
    """
    z = x_projection + ops.matmul(h, ops.cast(cell.recurrent_kernel, h.dtype))
    z_i, z_f, z_g, z_o = ops.split(z, 4, axis=-1)
    i = cell.recurrent_activation(z_i)
    f = cell.recurrent_activation(z_f)
    c = f * c + i * cell.activation(z_g)
    o = cell.recurrent_activation(z_o)
    return o * cell.activation(c), c


def project(x, kernel, bias=None):
    """x @ kernel (+ bias) in x's dtype, for (B, D) or (B, T, D) inputs."""
    y = ops.matmul(x, ops.cast(kernel, x.dtype))
    return y if bias is None else y + ops.cast(bias, x.dtype)
