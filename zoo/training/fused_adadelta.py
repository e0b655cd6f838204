"""`FusedAdadelta`: the Keras optimizer with its update as one TensorFlow kernel per variable
(Zeiler 2012, algorithm 1; see `zoo.training.fused_update`)."""

import keras
from keras import ops

from zoo.training.fused_update import dense_gradient, resource_handles


@keras.saving.register_keras_serializable(package="zoo")
class FusedAdadelta(keras.optimizers.Adadelta):
    """`keras.optimizers.Adadelta` with `ResourceApplyAdadelta`, one kernel per variable,
    on the TensorFlow backend (see `zoo.training.fused_update`); same arguments, slots and
    results."""

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        accumulated_grad = self._accumulated_grads[index]
        accumulated_delta = self._accumulated_delta_vars[index]
        handles = resource_handles(variable, accumulated_grad, accumulated_delta)
        if handles is None:
            return super().update_step(gradient, variable, learning_rate)
        import tensorflow as tf

        dtype = variable.dtype
        tf.raw_ops.ResourceApplyAdadelta(
            var=handles[0],
            accum=handles[1],
            accum_update=handles[2],
            lr=ops.cast(learning_rate, dtype),
            rho=ops.cast(self.rho, dtype),
            epsilon=ops.cast(self.epsilon, dtype),
            grad=dense_gradient(gradient, dtype),
        )
