"""The one training step that `zoo.training.train`, the tuner and `bench/train_speed.py` run.

    optimizer = prepare_optimizer("adam", model, steps_per_epoch=n)  # or a Keras optimizer
    step = make_train_step(model, optimizer, label_smoothing=0.1)
    step = compile_step(step, dataset)           # a tf.function traced once for its batches
    loss_sum, correct, tokens = step(batch)      # sums over the global batch

On JAX the step is a `jax_step.JaxTrainStep` (the same computation, jitted and stateless;
one device), on PyTorch there is none (`check_training_backend`: train with `model.fit`).

What one step does, per replica and then across them:
1. logits = model(inputs, training=True); the objective is the summed (label-smoothed when
   eps > 0) cross-entropy over real target tokens (`losses.masked_smoothed_loss_sum`);
2. divided by the global batch's tokens or sentences (`losses.loss_denominator`,
   all-reduced), and scaled by the loss-scale optimizer under mixed_float16;
3. gradients, an embedding's made dense (`_dense`); with several replicas they are
   all-reduced and clipped to the optimizer's `global_clipnorm` after the sum (the papers'
   rule; Keras alone would clip each replica's partial gradient before the all-reduce),
   then applied.
It returns the plain (unsmoothed) loss sum, correct tokens and tokens, summed over replicas.

Gradient accumulation (`accumulate_steps=N > 1`, one replica): the step takes a group of N
batches (`group_batches`: the last group of an epoch may hold fewer) and makes one update
from them, the update of the one batch they would make together: each batch's objective
is divided by the tokens (or sentences) of the whole group, their gradients summed, clipped
once to the global norm and applied once. The optimizer counts one iteration per group, so
a learning-rate schedule, `max_steps` and checkpoints count updates, and an epoch of M
batches has `updates_per_epoch(M, N)` steps. With N = 1 the step is the plain one above.
"""

import math

import keras
import tensorflow as tf

from zoo.backend import backend_name, on_tensorflow
from zoo.checks import check_int
from zoo.errors import UsageError
from zoo.models import model_dropout
from zoo.training.losses import check_loss_normalization, loss_denominator, training_objective
from zoo.training.optimizers import LuongSchedule, make_optimizer
from zoo.training.strategy import needs_loss_scaling

_SUM = tf.distribute.ReduceOp.SUM


def prepare_optimizer(optimizer, model, *, strategy=None, steps_per_epoch=None):
    """A built optimizer for `model`: `optimizer` itself, or `make_optimizer(name)` when it
    is a name (with the model's dropout, for Luong's halving rule), wrapped in a
    `LossScaleOptimizer` when the model computes in float16. Created inside `strategy`'s
    scope."""
    strategy = strategy or tf.distribute.get_strategy()
    with strategy.scope():
        if isinstance(optimizer, str):
            optimizer = make_optimizer(
                optimizer, steps_per_epoch=steps_per_epoch, dropout=model_dropout(model)
            )
        if needs_loss_scaling(model) and not isinstance(
            optimizer, keras.optimizers.LossScaleOptimizer
        ):
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
        if not optimizer.built:
            optimizer.build(model.trainable_variables)
    return optimizer


def inner_optimizer(optimizer):
    """The optimizer a `LossScaleOptimizer` wraps (its learning rate and clipping), or
    `optimizer` itself when it is not loss-scaled."""
    if isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        return optimizer.inner_optimizer
    return optimizer


def halving_schedule(optimizer):
    """The `LuongSchedule` that sets `optimizer`'s learning rate (a `LossScaleOptimizer`'s
    inner one's), or None when its rate is not halved per epoch."""
    # Keras 3 (3.15: keras/src/optimizers/base_optimizer.py) has no public accessor for the
    # schedule: the `learning_rate` property returns its value at the current iteration, and
    # `get_config()["learning_rate"]` a serialised copy whose variable the optimizer never
    # reads (moving its halving would change nothing). The schedule object itself is kept in
    # `_learning_rate`; tests/training/luong_schedule_test.py fails if that changes.
    schedule = getattr(inner_optimizer(optimizer), "_learning_rate", None)
    return schedule if isinstance(schedule, LuongSchedule) else None


def _dense(gradient):
    """An embedding's `IndexedSlices` gradient as one dense tensor (rows of repeated tokens
    summed), else `gradient`. Keras's Adadelta squares each slice of an `IndexedSlices` on its
    own, so a token repeated in the batch would add the sum of its squared slices to the
    accumulator instead of the square of its gradient (Zeiler 2012; Theano's dense gradient
    in Bahdanau et al.). SGD and Keras's Adam give the same update either way."""
    if isinstance(gradient, tf.IndexedSlices):
        return tf.convert_to_tensor(gradient)
    return gradient


def _clip_after_all_reduce(grads, trainable, optimizer, context, replicas):
    """The summed gradient clipped to the optimizer's global norm, 1/n of it per replica
    (below the threshold, so Keras' own per-replica clipping leaves it unchanged)."""
    loss_scaled = optimizer is not inner_optimizer(optimizer)
    grads = [  # already dense (`_dense`); a variable without a gradient gets zeros
        g if g is not None else tf.zeros_like(v) for g, v in zip(grads, trainable, strict=True)
    ]
    grads = context.all_reduce(_SUM, grads)
    threshold = inner_optimizer(optimizer).global_clipnorm
    threshold *= optimizer.dynamic_scale if loss_scaled else 1.0
    grads, _ = tf.clip_by_global_norm(grads, threshold)
    return [g / replicas for g in grads]


def make_train_step(
    model,
    optimizer,
    *,
    strategy=None,
    label_smoothing=0.0,
    loss_normalization="tokens",
    jit_compile=False,
    accumulate_steps=1,
):
    """The training step `batch -> [loss_sum, correct, tokens]` (see the module docstring).

    Args:
        model: a built translation model (created inside `strategy.scope()`).
        optimizer: a built Keras optimizer (`prepare_optimizer`).
        strategy: the distribution strategy (default: the current one).
        label_smoothing: eps in [0, 1) for the objective; the returned loss is plain.
        loss_normalization: "tokens" or "sentences" (`losses.loss_denominator`).
        jit_compile: compile the per-replica step with XLA (with accumulation: the gradient
            of each batch).
        accumulate_steps: N >= 1; above 1 the step takes a group of N batches
            (`group_batches`) and makes one update of their summed gradients. One replica
            only.

    Returns:
        a Python function of one (distributed) batch `(inputs, target_out_ids)`, or of one
        group of batches; wrap it with `compile_step` (or `tf.function`) before the loop.
    """
    check_loss_normalization(loss_normalization)
    accumulate_steps = check_accumulate_steps(accumulate_steps)
    if not on_tensorflow():
        check_training_backend(strategy)
        from zoo.training.jax_step import JaxTrainStep  # noqa: PLC0415 (imports jax)

        return JaxTrainStep(
            model, optimizer, label_smoothing=label_smoothing,
            loss_normalization=loss_normalization, accumulate_steps=accumulate_steps,
            schedule=halving_schedule(optimizer),
        )  # fmt: skip
    strategy = strategy or tf.distribute.get_strategy()
    replicas = strategy.num_replicas_in_sync
    if accumulate_steps > 1:
        if replicas > 1:
            raise ValueError(
                f"accumulate_steps={accumulate_steps} needs one replica; the strategy has "
                f"{replicas} (their global batch is already {replicas} batches)."
            )
        return _accumulating_step(
            model, optimizer, strategy, label_smoothing, loss_normalization, jit_compile
        )
    clipnorm = inner_optimizer(optimizer).global_clipnorm
    trainable = model.trainable_variables

    def replica_step(inputs, targets):
        context = tf.distribute.get_replica_context()
        with tf.GradientTape() as tape:
            logits = model(inputs, training=True)
            objective, loss_sum, correct, tokens = training_objective(
                targets, logits, label_smoothing
            )
            denominator = context.all_reduce(_SUM, loss_denominator(targets, loss_normalization))
            loss = objective / tf.maximum(denominator, 1.0)
            scaled_loss = optimizer.scale_loss(loss)
        grads = [_dense(g) for g in tape.gradient(scaled_loss, trainable)]
        if replicas > 1 and clipnorm:
            grads = _clip_after_all_reduce(grads, trainable, optimizer, context, replicas)
        optimizer.apply(grads, trainable)
        return loss_sum, correct, tokens

    replica_fn = tf.function(replica_step, jit_compile=True) if jit_compile else replica_step

    def train_batch(batch):
        per_replica = strategy.run(replica_fn, args=tuple(batch))
        return [strategy.reduce(_SUM, x, axis=None) for x in per_replica]

    return train_batch


TRAINING_BACKENDS = ("tensorflow", "jax")  # the Keras backends `make_train_step` runs on


def check_training_backend(strategy=None):
    """A `UsageError` unless this program's Keras backend runs `make_train_step` (and so
    `train` and the recipes) with `strategy`: TensorFlow with any strategy, JAX with the
    default one (one device). PyTorch trains with `model.fit`."""
    backend = backend_name()
    if backend not in TRAINING_BACKENDS:
        raise UsageError(
            f"zoo.training.train (the recipes' training loop) runs on TensorFlow and JAX; "
            f"Keras runs on {backend!r} here. On PyTorch train with model.fit: "
            "model.compile(optimizer=..., loss=zoo.training.keras_loss()), then "
            'model.fit(...) (docs/training.md, "On JAX and PyTorch"); or set '
            "KERAS_BACKEND=jax or tensorflow."
        )
    if backend != "tensorflow" and strategy is not None and not _is_default(strategy):
        raise UsageError(
            f"Distributed training (strategy {type(strategy).__name__}) runs on TensorFlow "
            f"only; Keras runs on {backend!r} here. Use KERAS_BACKEND=tensorflow, or the "
            "default strategy (one device)."
        )


def _is_default(strategy):
    """True for TensorFlow's default strategy (one device, no distribution)."""
    return strategy is tf.distribute.get_strategy() and not tf.distribute.has_strategy()


MAX_ACCUMULATE_STEPS = 1024
"""The most batches one update accumulates: a group of them is held in memory at once
(`group_batches`), and an update of more batches than a corpus' epoch has is rarely meant."""


def check_accumulate_steps(value):
    """`value` as an int in [1, `MAX_ACCUMULATE_STEPS`]; else a ValueError naming it."""
    value = check_int(None, "accumulate_steps", value)
    if value > MAX_ACCUMULATE_STEPS:
        raise ValueError(
            f"accumulate_steps must be in [1, {MAX_ACCUMULATE_STEPS}] (a group of that many "
            f"batches is held in memory at once); received {value}."
        )
    return value


def updates_per_epoch(batches, accumulate_steps):
    """The optimizer steps of an epoch of `batches` batches (None: unknown) when each step
    accumulates `accumulate_steps` of them: the last step takes the batches left over."""
    accumulate_steps = check_accumulate_steps(accumulate_steps)
    return None if batches is None else math.ceil(batches / accumulate_steps)


def group_batches(dataset, accumulate_steps):
    """`dataset`'s batches in groups of `accumulate_steps`, the input of a step made with
    the same `accumulate_steps` (`dataset` itself when it is 1).

    A group stacks its batches as `tf.RaggedTensor`s, each batch keeping its own shape (no
    padding is added); the last group of the dataset holds the batches left over."""
    if check_accumulate_steps(accumulate_steps) == 1:
        return dataset
    return dataset.ragged_batch(accumulate_steps)


def _batch_of(group, index):
    """The batch `index` of a group (`group_batches`) with its own dense shape."""

    def row(x):
        x = x[index]
        return x.to_tensor() if isinstance(x, tf.RaggedTensor) else x

    return tf.nest.map_structure(row, group)


def _accumulating_step(model, optimizer, strategy, label_smoothing, loss_normalization, jit):
    """`make_train_step` for groups of batches: one update of their summed gradients."""
    trainable = model.trainable_variables

    def batch_gradients(inputs, targets, denominator):
        with tf.GradientTape() as tape:
            logits = model(inputs, training=True)
            objective, loss_sum, correct, tokens = training_objective(
                targets, logits, label_smoothing
            )
            scaled_loss = optimizer.scale_loss(objective / denominator)
        grads = [_dense(g) for g in tape.gradient(scaled_loss, trainable)]
        grads = [
            tf.zeros_like(v) if g is None else g for g, v in zip(grads, trainable, strict=True)
        ]
        return grads, [loss_sum, correct, tokens]

    gradients_fn = tf.function(batch_gradients, jit_compile=True) if jit else batch_gradients

    def replica_step(inputs, targets):
        context = tf.distribute.get_replica_context()
        # The group's tokens or sentences: padding the batches to one shape adds neither.
        denominator = loss_denominator(targets.to_tensor(), loss_normalization)
        denominator = tf.maximum(context.all_reduce(_SUM, denominator), 1.0)

        def body(index, sums, total):
            group = (inputs, targets)
            grads, stats = gradients_fn(*_batch_of(group, index), denominator)
            sums = [a + b for a, b in zip(sums, stats, strict=True)]
            total = [a + b for a, b in zip(total, grads, strict=True)]
            return index + 1, sums, total

        zeros = [tf.zeros_like(v) for v in trainable]
        start = (tf.constant(0, targets.row_splits.dtype), [tf.constant(0.0)] * 3, zeros)
        _, sums, grads = tf.while_loop(lambda i, *_: i < targets.nrows(), body, start)
        optimizer.apply(grads, trainable)
        return sums

    def train_group(group):
        per_replica = strategy.run(replica_step, args=tuple(group))
        return [strategy.reduce(_SUM, x, axis=None) for x in per_replica]

    return train_group


def _relaxed(spec):
    """`spec` with every dimension unknown (a ragged spec keeps its ragged rank)."""
    shape = [None] * spec.shape.rank
    if isinstance(spec, tf.RaggedTensorSpec):
        return tf.RaggedTensorSpec(
            shape, spec.dtype, ragged_rank=spec.ragged_rank, row_splits_dtype=spec.row_splits_dtype
        )
    return tf.TensorSpec(shape, spec.dtype, name=spec.name)


def compile_step(fn, dataset, strategy=None):
    """`fn(batch)` as a `tf.function` for the batches of `dataset` (a `tf.data.Dataset`, or
    the element spec of its batches).

    Under the default strategy the batches are plain tensors, so the function is traced
    once, with every dimension unknown, instead of again for new batch shapes (tracing a
    decoder loop and its gradient takes seconds). Distributed batches keep
    `reduce_retracing`."""
    if not on_tensorflow():
        return fn  # `make_train_step`'s and `make_eval_step`'s own compilation (jax.jit)
    strategy = strategy or tf.distribute.get_strategy()
    spec = dataset.element_spec if isinstance(dataset, tf.data.Dataset) else dataset
    ranks = [s.shape.rank for s in tf.nest.flatten(spec)]
    default = strategy is tf.distribute.get_strategy() and not tf.distribute.has_strategy()
    if default and None not in ranks:
        relaxed = tf.nest.map_structure(_relaxed, spec)
        return tf.function(fn, input_signature=[relaxed])
    return tf.function(fn, reduce_retracing=True)
