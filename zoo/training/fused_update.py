"""Adam and Adadelta updates as one kernel per variable on the TensorFlow backend.

`FusedAdam` (`fused_adam.py`) and `FusedAdadelta` (`fused_adadelta.py`) use it.

Keras's `Adam.update_step` writes the update as a dozen element-wise ops per variable
(`m += (g - m)(1 - beta_1)`, `v += (g^2 - v)(1 - beta_2)`, `var -= alpha m / (sqrt(v) + eps)`),
and each op is a separate pass over the variable's memory. For a translation model (17M
parameters) those passes are memory-bound and took about a tenth of a CPU training step
(bench/RESULTS.md). TensorFlow's own training kernels (`ResourceApplyAdam`,
`ResourceApplyAdadelta`; XLA implements them too) read the gradient and the slots once and
write the variable and the slots once.

`FusedAdam` and `FusedAdadelta` are the Keras optimizers with only `update_step` replaced:
the same equations, the same slot variables (so checkpoints of the plain optimizers restore
into them and back), and everything else (learning-rate schedules, clipping, weight decay,
loss scaling, distribution) from Keras. They fall back to the Keras update wherever the
kernel does not apply: another backend, `amsgrad=True`, or a variable that is not a
TensorFlow resource variable.

Sparse gradients (`tf.IndexedSlices`, an embedding's) are summed into a dense gradient
first, so a token that occurs twice in a batch contributes the square of its summed
gradient to the second-moment accumulators. Keras's Adam does the same; Keras's Adadelta
squares each slice of the sparse gradient separately (sum of squares, not square of the
sum), so its embedding updates differ from the dense equations below whenever a batch
repeats a token. `FusedAdadelta` follows the equations.

The equations (Kingma and Ba 2015, algorithm 1 with the "epsilon hat" of section 2; Zeiler
2012, algorithm 1), with g the gradient and lr the learning rate at step t = iterations + 1:

    Adam:      m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
               var -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)
    Adadelta:  a = rho a + (1 - rho) g^2;  u = sqrt(d + eps) / sqrt(a + eps) * g
               d = rho d + (1 - rho) u^2;  var -= lr u

This module holds what both share: the variables' resource handles, or None where the
kernel does not apply, and the dense gradient.

Example:
    optimizer = FusedAdam(learning_rate=1e-3, global_clipnorm=1.0)   # as keras.optimizers.Adam
"""

import keras
from keras import ops


def resource_handles(variable, *slots):
    """The resource handles of a TensorFlow variable and its slot variables, or None where
    the fused kernel cannot be used (another backend, a variable without a handle)."""
    if keras.backend.backend() != "tensorflow":
        return None
    handles = []
    for v in (variable, *slots):
        v = v.value if isinstance(v, keras.Variable) else v
        handle = getattr(v, "handle", None)
        if handle is None:
            return None
        handles.append(handle)
    return handles


def dense_gradient(gradient, dtype):
    """The gradient as a dense tensor of the variable's dtype: an embedding's
    `tf.IndexedSlices` summed per row (see the module docstring)."""
    import tensorflow as tf

    return ops.cast(tf.convert_to_tensor(gradient), dtype)
