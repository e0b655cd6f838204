"""`FusedAdam`: the Keras optimizer with its update as one TensorFlow kernel per variable
(Kingma and Ba 2015, algorithm 1; see `zoo.training.fused_update`)."""

import keras
from keras import ops

from zoo.training.fused_update import dense_gradient, resource_handles


@keras.saving.register_keras_serializable(package="zoo")
class FusedAdam(keras.optimizers.Adam):
    """`keras.optimizers.Adam` with `ResourceApplyAdam`, one kernel per variable, on the
    TensorFlow backend (see `zoo.training.fused_update`); same arguments, slots and results."""

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        handles = None if self.amsgrad else resource_handles(variable, m, v)
        if handles is None:
            return super().update_step(gradient, variable, learning_rate)
        import tensorflow as tf

        dtype = variable.dtype
        step = ops.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = ops.cast(self.beta_1, dtype), ops.cast(self.beta_2, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=handles[0],
            m=handles[1],
            v=handles[2],
            beta1_power=ops.power(beta_1, step),
            beta2_power=ops.power(beta_2, step),
            lr=ops.cast(learning_rate, dtype),
            beta1=beta_1,
            beta2=beta_2,
            epsilon=ops.cast(self.epsilon, dtype),
            grad=dense_gradient(gradient, dtype),
        )
