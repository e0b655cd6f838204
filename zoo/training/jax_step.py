"""The training and evaluation steps on the JAX backend: `make_train_step`'s semantics as
jitted stateless functions (`jax.value_and_grad` of `model.stateless_call`, the Keras
optimizer's `stateless_apply`; no optax).

    step = JaxTrainStep(model, optimizer, label_smoothing=0.1, loss_normalization="tokens")
    loss_sum, correct, tokens = step(batch)   # a batch of tf.data tensors or NumPy arrays

What a step computes is the TensorFlow step's (`zoo.training.train_step`, one replica): the
summed (label-smoothed) cross-entropy over real target tokens divided by the batch's tokens
or sentences, scaled by a `LossScaleOptimizer` under float16, its gradients clipped to the
optimizer's global norm (by the optimizer, as on TensorFlow with one replica) and applied;
with `accumulate_steps=N > 1` the N batches of a group (`group_batches`) are each divided by
the tokens (or sentences) of the whole group, their gradients summed and applied once.

The model's and the optimizer's `keras.Variable`s hold the state between steps: each step
reads their values and assigns the new ones (on JAX an assignment swaps an array, it copies
nothing), so checkpoints, validation and `model.save` see the weights of the last step.

`jax.jit` compiles a function per input shape. Batches of varying lengths are therefore
padded (with `PAD_ID`, which the source mask and the loss ignore) to a few bucket lengths
(`bucket_length`), so that an epoch compiles the step a few times rather than once per
length.
"""

import jax
import keras
import numpy as np
import tensorflow as tf
from keras import ops, tree

from zoo.constants import PAD_ID
from zoo.training.losses import loss_denominator, masked_token_stats, training_objective


def bucket_length(length, smallest=8):
    """The padded length of a batch axis of `length`: the smallest of 8, 12, 16, 24, 32,
    48, 64, 96, ... (2^k and 1.5 * 2^k) that holds it."""
    bucket = smallest
    while bucket < length:
        half = bucket // 2
        bucket = bucket + half if (bucket & (bucket - 1)) == 0 else bucket + bucket // 3
    return bucket


def padded_batch(batch):
    """`(inputs, targets)` as NumPy arrays, each id matrix's length axis padded with PAD_ID
    to its `bucket_length` (the targets and the decoder inputs to the same length)."""
    inputs, targets = tree.map_structure(np.asarray, tuple(batch))
    target_len = bucket_length(targets.shape[1])

    def pad(x, length):
        return np.pad(x, ((0, 0), (0, length - x.shape[1])), constant_values=PAD_ID)

    inputs = dict(inputs)
    inputs["source_ids"] = pad(inputs["source_ids"], bucket_length(inputs["source_ids"].shape[1]))
    inputs["target_ids"] = pad(inputs["target_ids"], target_len)
    return inputs, pad(targets, target_len)


def _batch_of(group, index):
    """The batch `index` of a group (`group_batches`: ragged tensors) with its own shape."""

    def row(x):
        x = x[index]
        return x.to_tensor() if isinstance(x, tf.RaggedTensor) else x

    return tf.nest.map_structure(row, group)  # (keras.tree would split a RaggedTensor)


def _values(variables):
    return [v.value for v in variables]


def _assign(variables, values):
    for variable, value in zip(variables, values, strict=True):
        variable.assign(value)


class JaxTrainStep:
    """`make_train_step` on the JAX backend (see the module docstring); called with one
    batch `(inputs, target_out_ids)`, or with one group of batches when
    `accumulate_steps > 1`, it returns [loss_sum, correct, tokens] (the plain loss)."""

    def __init__(
        self, model, optimizer, *, label_smoothing=0.0, loss_normalization="tokens",
        accumulate_steps=1, schedule=None,
    ):  # fmt: skip
        self.model, self.optimizer = model, optimizer
        self.label_smoothing = float(label_smoothing)
        self.loss_normalization = loss_normalization
        self.accumulate_steps = int(accumulate_steps)
        self.loss_scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
        self._value_and_grad = jax.value_and_grad(self._scaled_loss, has_aux=True)
        # A `LuongSchedule`'s halving epoch is a variable outside the optimizer's, read as
        # a constant when the step is traced: a new value (`TimeLimit`) traces it again.
        self.schedule, self._halving = schedule, None
        self._compile()

    def _compile(self):
        if self.schedule is not None:
            self._halving = self.schedule.decay_after_epochs
        self._gradients = jax.jit(self._value_and_grad)
        self._apply = jax.jit(self.optimizer.stateless_apply)
        self._step = jax.jit(self._plain_step)

    def _scaled_loss(self, trainable, non_trainable, optimizer_values, inputs, targets, denom):
        """(the scaled objective / denom, (new non-trainable values, [loss_sum, correct,
        tokens])): the function `jax.value_and_grad` differentiates."""
        logits, non_trainable = self.model.stateless_call(
            trainable, non_trainable, inputs, training=True
        )
        objective, loss_sum, correct, tokens = training_objective(
            targets, logits, self.label_smoothing
        )
        loss = objective / denom
        if self.loss_scaled:  # the loss scale is an optimizer variable: read its value
            mapping = list(zip(self.optimizer.variables, optimizer_values, strict=True))
            with keras.StatelessScope(state_mapping=mapping):
                loss = self.optimizer.scale_loss(loss)
        return loss, (non_trainable, [loss_sum, correct, tokens])

    def _denominator(self, targets):
        return ops.maximum(loss_denominator(targets, self.loss_normalization), 1.0)

    def _plain_step(self, state, inputs, targets):
        trainable, non_trainable, optimizer_values = state
        denominator = self._denominator(targets)
        (_, (non_trainable, stats)), grads = self._value_and_grad(
            trainable, non_trainable, optimizer_values, inputs, targets, denominator
        )
        trainable, optimizer_values = self.optimizer.stateless_apply(
            optimizer_values, grads, trainable
        )
        return (trainable, non_trainable, optimizer_values), stats

    def _variables(self):
        model = self.model
        return model.trainable_variables, model.non_trainable_variables, self.optimizer.variables

    def __call__(self, batch):
        if self.schedule is not None and self.schedule.decay_after_epochs != self._halving:
            self._compile()
        variables = self._variables()
        state = tuple(_values(group) for group in variables)
        if self.accumulate_steps == 1:
            state, stats = self._step(state, *padded_batch(batch))
        else:
            state, stats = self._accumulate(state, batch)
        for group, values in zip(variables, state, strict=True):
            _assign(group, values)
        return stats

    def _accumulate(self, state, group):
        """One update from a group of batches (`group_batches`: ragged tensors)."""
        batches = [padded_batch(_batch_of(group, i)) for i in range(int(group[1].nrows()))]
        # The group's tokens or sentences: the padding added to each batch adds neither.
        denominator = sum(float(self._denominator(t)) for _, t in batches)
        denominator = np.float32(max(denominator, 1.0))
        trainable, non_trainable, optimizer_values = state
        total, sums = None, [0.0, 0.0, 0.0]
        for batch_inputs, batch_targets in batches:
            (_, (non_trainable, stats)), grads = self._gradients(
                trainable, non_trainable, optimizer_values, batch_inputs, batch_targets,
                denominator,
            )  # fmt: skip
            total = grads if total is None else [a + b for a, b in zip(total, grads, strict=True)]
            sums = [a + b for a, b in zip(sums, stats, strict=True)]
        trainable, optimizer_values = self._apply(optimizer_values, total, trainable)
        return (trainable, non_trainable, optimizer_values), sums


class JaxEvalStep:
    """`evaluation.make_eval_step` on the JAX backend: batch -> [loss_sum, correct, tokens]
    of the model without dropout, jitted (batches padded as for training)."""

    def __init__(self, model):
        self.model = model

        def stats(trainable, non_trainable, inputs, targets):
            logits, _ = model.stateless_call(trainable, non_trainable, inputs, training=False)
            return masked_token_stats(targets, logits)

        self._stats = jax.jit(stats)

    def __call__(self, batch):
        model = self.model
        return self._stats(
            _values(model.trainable_variables),
            _values(model.non_trainable_variables),
            *padded_batch(batch),
        )
