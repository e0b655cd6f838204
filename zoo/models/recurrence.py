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
- `lstm_sequence` / `gru_sequence` run those updates over a whole (masked) sequence from
  its hoisted input projection, and `run_rnn(layer, x, mask)` uses them for the encoders'
  Keras GRU/LSTM layers wherever no fused (cuDNN) kernel exists. With `time_major=True`
  they take and give (T, B, ...) sequences, so a stack of layers needs no transposes
  between its layers.
- Inside a loop, a kernel is multiplied by `matmul_pretransposed(x, kernel, kernel_t)`: the
  same product, whose backward takes `dy @ kernel^T` from the kernel's transpose, made once
  per loop (`gru_params` / `lstm_params`), instead of a product with a transposed operand at
  every step (slower with oneDNN on a CPU at these sizes: bench/RESULTS.md, "Training speed").

Reverse right-padded sequences within their lengths (used by encoders).

`reverse_padded(x, lengths)` maps position `t < length` to `length - 1 - t` and leaves the
padding where it is, so that a reversed right-padded batch is still right-padded (which keeps
the cuDNN kernels usable) and reversing twice gives back the input.
"""

import keras
from keras import ops, tree

from zoo.backend import on_tensorflow


def scan_steps(step_fn, state, inputs, reverse=False):
    """Runs `step_fn` over the time axis of `inputs`; returns (final state, stacked outputs).

    Args:
        step_fn: `(state, inputs_t) -> (new_state, outputs_t)`; `state` and `new_state` have
            the same structure, shapes and dtypes; `outputs_t` is any nest of tensors.
        state: the initial state, a nest of tensors.
        inputs: a nest of time-major tensors `(T, ...)` with T >= 1 (the same T for all).
        reverse: run from the last step to the first (a backward pass through time); the
            outputs are still stacked in time order (output t comes from inputs t).
    Returns:
        (state after the last step, outputs stacked on a new leading time axis `(T, ...)`).

    Example:
        state, outputs = scan_steps(lambda s, x: (s + x, 2 * s), zeros((B,)), xs)  # xs (T, B)
    """
    if not on_tensorflow():
        return ops.scan(step_fn, state, inputs, reverse=reverse)
    import tensorflow as tf  # the TensorFlow backend's loop (see the module docstring)

    flat_inputs = [tf.convert_to_tensor(x) for x in tree.flatten(inputs)]
    length = flat_inputs[0].shape[0]
    if length is None:
        length = tf.shape(flat_inputs[0])[0]
    sources = [
        tf.TensorArray(x.dtype, size=length, element_shape=x.shape[1:]).unstack(x)
        for x in flat_inputs
    ]

    def index(t):  # the time step of loop iteration t
        return length - 1 - t if reverse else t

    def inputs_at(t):
        flat = [array.read(index(t)) for array in sources]
        return tree.pack_sequence_as(inputs, flat)

    # The first step runs before the loop: its outputs give the output arrays' dtypes and
    # shapes, and the loop variables then have fixed shapes.
    state, outputs = step_fn(state, inputs_at(0))
    flat_outputs = tree.flatten(outputs)
    output_arrays = [
        tf.TensorArray(y.dtype, size=length, element_shape=y.shape).write(index(0), y)
        for y in flat_outputs
    ]
    flat_state = tree.flatten(state)

    def body(t, flat_state, output_arrays):
        new_state, outputs = step_fn(tree.pack_sequence_as(state, flat_state), inputs_at(t))
        new_flat = tree.flatten(new_state)
        written = [
            a.write(index(t), y) for a, y in zip(output_arrays, tree.flatten(outputs), strict=True)
        ]
        return t + 1, new_flat, written

    _, flat_state, output_arrays = tf.while_loop(
        lambda t, *_: t < length,
        body,
        (tf.constant(1, "int32"), flat_state, output_arrays),
        maximum_iterations=length - 1,
    )
    stacked = [array.stack() for array in output_arrays]
    return tree.pack_sequence_as(state, flat_state), tree.pack_sequence_as(outputs, stacked)


def fused_rnn_available():
    """True where Keras's whole-sequence RNN layers run a fused kernel (cuDNN: the
    TensorFlow backend with a visible GPU); there a decoder's whole-sequence path calls the
    Keras layer instead of `scan_steps` over `lstm_update`. On a CPU the Keras layer loops
    over `cell.call`, which projects each step's input separately, so the hoisted loop here
    is faster."""
    if not on_tensorflow():
        return False
    import tensorflow as tf

    return bool(tf.config.list_logical_devices("GPU"))


def matmul_pretransposed(x, kernel, kernel_t):
    """`x @ kernel` for x (B, D), kernel (D, N), with `kernel_t = transpose(kernel)` given.

    The value and the gradients are those of `ops.matmul(x, kernel)`; only the backward's
    `dx = dy @ kernel^T` is computed as a plain product with `kernel_t`. A loop computes
    `kernel_t` once, outside it, and its backward then runs no transposed product per step.
    `kernel_t` itself gets no gradient (the kernel's comes through `kernel`).

    With `kernel_t=None` (loop parameters made with `pretransposed=False`, where no
    gradient is asked for) it is `ops.matmul(x, kernel)`.

    Example:
        y = matmul_pretransposed(h, params["recurrent"], params["recurrent_t"])  # (B, N)
    """
    if kernel_t is None:
        return ops.matmul(x, kernel)
    return _matmul_with_transpose(x, kernel, kernel_t)


@ops.custom_gradient
def _matmul_with_transpose(x, kernel, kernel_t):
    y = ops.matmul(x, kernel)

    def grad(*args, upstream=None):
        if upstream is None:
            (upstream,) = args
        return ops.matmul(upstream, kernel_t), ops.matmul(ops.transpose(x), upstream), None

    return y, grad


def _with_transpose(kernel, pretransposed=True):
    return kernel, ops.transpose(kernel) if pretransposed else None


def _row_blocks(kernel, input_sizes):
    """The row blocks of a (sum(input_sizes), N) kernel, one per input part."""
    if len(input_sizes) == 1:
        return [kernel]
    cuts, total = [], 0
    for size in input_sizes[:-1]:
        total += size
        cuts.append(total)
    return ops.split(kernel, cuts, axis=0)


def gru_params(cell, input_sizes, dtype, pretransposed=True):
    """A GRUCell's weights sliced and cast once per loop for `gru_update`.

    Args:
        cell: a built `keras.layers.GRUCell` without dropout.
        input_sizes: the sizes of the parts of the cell's input, e.g. [m, Dm] for [E y; c]:
            `kernels[k]` multiplies part k, so x @ K = sum_k x_k @ kernels[k].
        dtype: the compute dtype.
        pretransposed: make the kernels' transposes for `matmul_pretransposed` (training);
            False leaves them None and the loops multiply plainly. In TensorFlow's graphs
            each `matmul_pretransposed` registers a gradient function that lives as long as
            the process, holding its graph: a search, which takes no gradient, passes False.
    Returns:
        dict: kernels (list) and their transposes kernels_t (for `project(..., kernel_t=)`
        inside a loop), input_bias (or None), and the recurrent kernel split as gru_update
        needs it, each with its transpose (`<name>_t`; the transposes None without
        `pretransposed`).
    """
    kernel = ops.cast(cell.kernel, dtype)
    recurrent = ops.cast(cell.recurrent_kernel, dtype)
    kernels = _row_blocks(kernel, input_sizes)
    params = {
        "kernels": kernels,
        "kernels_t": [ops.transpose(k) if pretransposed else None for k in kernels],
        "input_bias": None,
    }
    if cell.use_bias:
        bias = ops.cast(cell.bias, dtype)
        params["input_bias"] = bias[0] if cell.reset_after else bias
        if cell.reset_after:
            params["recurrent_bias"] = bias[1]
    if cell.reset_after:
        params["recurrent"], params["recurrent_t"] = _with_transpose(recurrent, pretransposed)
    else:
        units = cell.units
        params["recurrent_zr"], params["recurrent_zr_t"] = _with_transpose(
            recurrent[:, : 2 * units], pretransposed
        )
        params["recurrent_h"], params["recurrent_h_t"] = _with_transpose(
            recurrent[:, 2 * units :], pretransposed
        )
    return params


def gru_update(cell, params, x_projection, h):
    """One `keras.layers.GRUCell` step given `x_projection = x @ cell.kernel + input bias`.

    Args:
        cell: the GRUCell (its activations and variant).
        params: `gru_params(cell, ...)`.
        x_projection: (B, 3 units), the input projection including the input bias.
        h: (B, units) previous state.
    Returns:
        the new state (B, units): z * h + (1 - z) * activation(x_h + recurrent_h).
    """
    x_z, x_r, x_h = ops.split(x_projection, 3, axis=-1)
    if cell.reset_after:
        inner = matmul_pretransposed(h, params["recurrent"], params["recurrent_t"])
        if "recurrent_bias" in params:
            inner = inner + params["recurrent_bias"]
        recurrent_z, recurrent_r, recurrent_h = ops.split(inner, 3, axis=-1)
        z = cell.recurrent_activation(x_z + recurrent_z)
        r = cell.recurrent_activation(x_r + recurrent_r)
        recurrent_h = r * recurrent_h
    else:
        zr = matmul_pretransposed(h, params["recurrent_zr"], params["recurrent_zr_t"])
        recurrent_z, recurrent_r = ops.split(zr, 2, axis=-1)
        z = cell.recurrent_activation(x_z + recurrent_z)
        r = cell.recurrent_activation(x_r + recurrent_r)
        recurrent_h = matmul_pretransposed(r * h, params["recurrent_h"], params["recurrent_h_t"])
    candidate = cell.activation(x_h + recurrent_h)
    return z * h + (1 - z) * candidate


def lstm_params(cell, input_sizes, dtype, pretransposed=True):
    """A LSTMCell's weights sliced and cast once per loop for `lstm_update` (see
    `gru_params`, and its `pretransposed`): kernels (one row block per input part) and
    kernels_t, input_bias (or None), recurrent and recurrent_t."""
    kernels = _row_blocks(ops.cast(cell.kernel, dtype), input_sizes)
    recurrent, recurrent_t = _with_transpose(ops.cast(cell.recurrent_kernel, dtype), pretransposed)
    return {
        "kernels": kernels,
        "kernels_t": [ops.transpose(k) if pretransposed else None for k in kernels],
        "input_bias": ops.cast(cell.bias, dtype) if cell.use_bias else None,
        "recurrent": recurrent,
        "recurrent_t": recurrent_t,
    }


def lstm_update(cell, params, x_projection, h, c):
    """One `keras.layers.LSTMCell` step given `x_projection = x @ cell.kernel + cell.bias`.

    Args:
        cell: the LSTMCell (its activations).
        params: `lstm_params(cell, ...)`.
        x_projection: (B, 4 units), input projection including the bias.
        h, c: (B, units) previous output and carry.
    Returns:
        (h, c) new output and carry: i, f, g, o gates as in Keras's fused implementation.
    """
    z = x_projection + matmul_pretransposed(h, params["recurrent"], params["recurrent_t"])
    z_i, z_f, z_g, z_o = ops.split(z, 4, axis=-1)
    act, gate = cell.activation, cell.recurrent_activation
    i, f, g, o = gate(z_i), gate(z_f), act(z_g), gate(z_o)
    c = f * c + i * g
    return o * act(c), c


def _time_major(x, time_major):
    """x with its first two axes swapped, unless `time_major` says it is laid out as the
    loops want it already: (B, T, ...) into (T, B, ...), and the loops' (T, B, ...) results
    back into the caller's layout."""
    return x if time_major else ops.swapaxes(x, 0, 1)


def _keep_steps(mask):
    """A (B, T) mask as the time-major (T, B, 1) bool that a step's `where` broadcasts."""
    return None if mask is None else ops.swapaxes(ops.cast(mask, "bool"), 0, 1)[:, :, None]


def _sequence(update, state, projection, mask, time_major=False):
    """`update(projection_t, *state) -> new state` over the time axis of a projection
    (B, T, ...), or (T, B, ...) with `time_major`: returns the outputs (the first state entry
    of each step) in the projection's layout and the final state. Where `mask[:, t]` (always
    (B, T)) is False the state is carried unchanged (as Keras's RNN layers do with a mask), so
    the final state is the one after each row's last real step, for right-padded rows."""
    inputs = _time_major(projection, time_major)  # (T, B, ...)
    if mask is not None:
        inputs = (inputs, _keep_steps(mask))

    def body(state, inputs_t):
        if mask is None:
            new = update(inputs_t, *state)
        else:
            projection_t, keep = inputs_t
            new = tuple(
                ops.where(keep, a, b)
                for a, b in zip(update(projection_t, *state), state, strict=True)
            )
        return new, new[0]

    state, outputs = scan_steps(body, tuple(state), inputs)
    return _time_major(outputs, time_major), state


def lstm_sequence(cell, params, projection, h, c, mask=None, time_major=False):
    """A `keras.layers.LSTM` over a whole sequence from its hoisted input projection.

    Its gradient is autodiff's through `lstm_update` (a backward pass through time written
    by hand gains too little of a training step to be worth its code).

    Args:
        cell, params: as for `lstm_update`.
        projection: (B, T, 4 units), `x @ kernel + bias` for every step (one matmul);
            (T, B, 4 units) with `time_major`.
        h, c: (B, units) initial output and carry.
        mask: optional (B, T) bool (batch-major either way), True = real step; masked steps
            carry the state.
        time_major: projection and outputs are (T, B, ...): a stack of layers then runs
            without transposing each layer's input and output (and their gradients).
    Returns:
        outputs (B, T, units) ((T, B, units) with `time_major`), final h (B, units), final
        c (B, units).
    """
    outputs, (h, c) = _sequence(
        lambda x, h, c: lstm_update(cell, params, x, h, c), (h, c), projection, mask, time_major
    )
    return outputs, h, c


def gru_sequence(cell, params, projection, h, mask=None, time_major=False):
    """A `keras.layers.GRU` over a whole sequence from its hoisted input projection
    (B, T, 3 units) ((T, B, 3 units) with `time_major`; see `lstm_sequence`): returns
    outputs (B, T, units) (or (T, B, units)), final h."""
    outputs, (h,) = _sequence(
        lambda x, h: (gru_update(cell, params, x, h),), (h,), projection, mask, time_major
    )
    return outputs, h


def run_rnn(layer, x, mask=None, initial_state=None, training=None, time_major=False):
    """A `keras.layers.GRU` or `LSTM` (built, return_sequences and return_state on, no
    dropout) over `x` (B, T, D): the layer itself where a fused kernel exists (cuDNN),
    elsewhere `gru_sequence` / `lstm_sequence` on the layer's own weights, with the input
    projection of all steps in one matmul outside the loop (Keras's CPU loop projects each
    step's input separately).

    With `time_major`, `x` and the outputs are (T, B, ...) (the mask stays (B, T)): a stack
    of layers passes its activations on without transposing them at every layer.

    Returns what the layer returns: (outputs, h) for a GRU, (outputs, h, c) for an LSTM;
    masked steps carry the state (right-padded rows end with their last real step's state).
    """
    if fused_rnn_available():  # the Keras layers are batch-major
        if not time_major:
            return layer(x, mask=mask, initial_state=initial_state, training=training)
        x = ops.swapaxes(x, 0, 1)
        outputs, *states = layer(x, mask=mask, initial_state=initial_state, training=training)
        return (ops.swapaxes(outputs, 0, 1), *states)
    cell = layer.cell
    if cell.dropout or cell.recurrent_dropout or layer.go_backwards:
        raise ValueError(
            f"run_rnn runs {layer.name} without its cell dropout and forwards only; received "
            f"dropout={cell.dropout}, recurrent_dropout={cell.recurrent_dropout}, "
            f"go_backwards={layer.go_backwards}. Apply dropout outside the layer."
        )
    dtype = x.dtype
    batch = ops.shape(x)[1 if time_major else 0]
    if initial_state is None:
        initial_state = [ops.zeros((batch, cell.units), dtype=dtype)]
        if isinstance(cell, keras.layers.LSTMCell):
            initial_state = initial_state * 2
    initial_state = [ops.cast(state, dtype) for state in initial_state]
    pretransposed = bool(training)  # gradients are taken in training only
    if isinstance(cell, keras.layers.LSTMCell):
        params = lstm_params(cell, [x.shape[-1]], dtype, pretransposed)
        projection = project(x, params["kernels"][0], params["input_bias"])
        return lstm_sequence(
            cell, params, projection, *initial_state, mask=mask, time_major=time_major
        )
    params = gru_params(cell, [x.shape[-1]], dtype, pretransposed)
    projection = project(x, params["kernels"][0], params["input_bias"])
    return gru_sequence(
        cell, params, projection, initial_state[0], mask=mask, time_major=time_major
    )


def project(x, kernel, bias=None, kernel_t=None):
    """x @ kernel (+ bias), for (B, D) or (B, T, D) inputs. Inside a loop, pass the kernel's
    transpose `kernel_t` (from `gru_params` / `lstm_params`) for x (B, D): the product is then
    `matmul_pretransposed`, whose backward runs no transposed product per step."""
    y = ops.matmul(x, kernel) if kernel_t is None else matmul_pretransposed(x, kernel, kernel_t)
    return y if bias is None else y + bias


def reversal_indices(lengths, max_length):
    """Gather indices (B, T) int32 that reverse each row within its length.

    Args:
        lengths: (B,) int tensor, the number of real positions of each row.
        max_length: T, a Python int or scalar tensor.
    """
    t = ops.arange(max_length, dtype="int32")[None, :]  # (1, T)
    lengths = ops.cast(lengths, "int32")[:, None]  # (B, 1)
    return ops.where(t < lengths, lengths - 1 - t, t)  # (B, T)


def reverse_padded(x, lengths):
    """Reverses x (B, T, ...) along axis 1 within each row's length; padding stays at the end.

    Example: rows [a b c 0 0] with length 3 become [c b a 0 0].
    """
    shape = ops.shape(x)
    indices = reversal_indices(lengths, shape[1])  # (B, T)
    rank = len(x.shape)
    if rank == 2:
        return ops.take_along_axis(x, indices, axis=1)
    if rank != 3:
        raise ValueError(f"reverse_padded expects a (B, T) or (B, T, D) tensor, got rank {rank}.")
    indices = ops.broadcast_to(indices[:, :, None], shape)  # (B, T, D)
    return ops.take_along_axis(x, indices, axis=1)


def lengths_from_mask(mask):
    """(B, T) bool mask (True = real, right-padded) -> (B,) int32 lengths."""
    return ops.sum(ops.cast(mask, "int32"), axis=1)
