"""Gradient accumulation (zoo/training/train_step.py): one update from a group of N batches
equals the update of the one batch they make together, and N = 1 is the plain step."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from training_toy import toy_arrays, toy_model

from zoo import training
from zoo.training.losses import loss_denominator, masked_smoothed_loss_sum
from zoo.training.train_step import (
    compile_step,
    group_batches,
    make_train_step,
    prepare_optimizer,
    updates_per_epoch,
)

LEARNING_RATE, CLIPNORM, EPS = 0.5, 0.05, 0.1


@pytest.fixture
def float64():
    previous = keras.config.floatx(), keras.config.dtype_policy()
    keras.config.set_floatx("float64")
    keras.config.set_dtype_policy("float64")
    try:
        yield
    finally:
        keras.config.set_floatx(previous[0])
        keras.config.set_dtype_policy(previous[1])


def _batches():
    """Three batches of different sizes and lengths, as the pipelines make them."""
    batches = []
    for n, max_len, seed in ((5, 4, 1), (8, 6, 2), (3, 2, 3)):
        src, tin, tout = toy_arrays(n=n, max_len=max_len, seed=seed)
        batches.append(({"source_ids": src, "target_ids": tin}, tout))
    return batches


def _concatenated(batches):
    """The one batch the three make together, right-padded to its longest row."""

    def pad(arrays):
        width = max(a.shape[1] for a in arrays)
        return np.concatenate([np.pad(a, ((0, 0), (0, width - a.shape[1]))) for a in arrays])

    inputs = {k: pad([b[0][k] for b in batches]) for k in ("source_ids", "target_ids")}
    return inputs, pad([b[1] for b in batches])


def _dataset(batches):
    datasets = [tf.data.Dataset.from_tensors(b) for b in batches]
    dataset = datasets[0]
    for other in datasets[1:]:
        dataset = dataset.concatenate(other)
    return dataset


def _model_and_optimizer(weights=None, clipnorm=CLIPNORM):
    model = toy_model(dropout=0.0)
    if weights is not None:
        model.set_weights(weights)
    optimizer = keras.optimizers.SGD(LEARNING_RATE, global_clipnorm=clipnorm)
    return model, prepare_optimizer(optimizer, model)


def _reference_update(model, batch, normalization):
    """SGD's update written out: the smoothed cross-entropy summed over the batch, divided
    by its tokens or sentences, its gradient clipped to CLIPNORM."""
    inputs, targets = batch
    with tf.GradientTape() as tape:
        logits = model(inputs, training=True)
        loss = masked_smoothed_loss_sum(targets, logits, EPS) / loss_denominator(
            targets, normalization
        )
    grads = tape.gradient(loss, model.trainable_variables)
    norm = float(tf.linalg.global_norm([tf.convert_to_tensor(g) for g in grads]))
    assert norm > 2 * CLIPNORM  # the clipping acts
    grads, _ = tf.clip_by_global_norm([tf.convert_to_tensor(g) for g in grads], CLIPNORM)
    variables = model.trainable_variables
    return [v.numpy() - LEARNING_RATE * g.numpy() for v, g in zip(variables, grads, strict=True)]


def _run(model, optimizer, data, accumulate_steps, normalization):
    step = make_train_step(
        model, optimizer, label_smoothing=EPS, loss_normalization=normalization,
        accumulate_steps=accumulate_steps,
    )  # fmt: skip
    compiled = compile_step(step, data)
    return [[float(x) for x in compiled(batch)] for batch in data]


@pytest.mark.parametrize("normalization", ["tokens", "sentences"])
def test_a_group_of_batches_makes_the_update_of_the_batch_they_make_together(
    float64, normalization
):
    keras.utils.set_random_seed(3)
    batches = _batches()
    model, optimizer = _model_and_optimizer()
    assert model.trainable_variables[0].dtype == "float64"
    initial = model.get_weights()
    expected = _reference_update(model, _concatenated(batches), normalization)

    plain_model, plain_optimizer = _model_and_optimizer(initial)
    whole = tf.data.Dataset.from_tensors(_concatenated(batches))
    plain_stats = _run(plain_model, plain_optimizer, whole, 1, normalization)
    plain = [v.numpy() for v in plain_model.trainable_variables]

    grouped_model, grouped_optimizer = _model_and_optimizer(initial)
    grouped = group_batches(_dataset(batches), 3)
    grouped_stats = _run(grouped_model, grouped_optimizer, grouped, 3, normalization)
    accumulated = [v.numpy() for v in grouped_model.trainable_variables]

    assert len(grouped_stats) == 1 and int(grouped_optimizer.iterations.numpy()) == 1
    np.testing.assert_allclose(grouped_stats[0], plain_stats[0], rtol=1e-6)
    for want, one_batch, group in zip(expected, plain, accumulated, strict=True):
        np.testing.assert_allclose(one_batch, want, atol=1e-6)  # N = 1: the plain step
        np.testing.assert_allclose(group, want, atol=1e-6)
    moved = max(np.max(np.abs(a - b)) for a, b in zip(accumulated, initial, strict=True))
    assert moved > 1e-3


def test_the_last_group_of_an_epoch_takes_the_batches_left_over(float64):
    keras.utils.set_random_seed(4)
    batches = _batches()
    dataset = group_batches(_dataset(batches), 2)
    assert int(dataset.cardinality()) == updates_per_epoch(3, 2) == 2
    initial = _model_and_optimizer()[0].get_weights()
    model, optimizer = _model_and_optimizer(initial)
    stats = _run(model, optimizer, dataset, 2, "tokens")
    assert int(optimizer.iterations.numpy()) == 2
    tokens = sum(float(np.count_nonzero(b[1])) for b in batches)
    assert sum(s[2] for s in stats) == tokens
    # The second update is the plain step on the third batch alone.
    first_model, first_optimizer = _model_and_optimizer(initial)
    _run(first_model, first_optimizer, dataset.take(1), 2, "tokens")
    expected = _reference_update(first_model, batches[2], "tokens")
    for want, got in zip(expected, model.trainable_variables, strict=True):
        np.testing.assert_allclose(got.numpy(), want, atol=1e-6)


def test_accumulate_steps_is_checked():
    model, optimizer = _model_and_optimizer()
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="accumulate_steps must be an int >= 1"):
            make_train_step(model, optimizer, accumulate_steps=bad)
    assert updates_per_epoch(None, 4) is None and updates_per_epoch(8, 1) == 8
    assert group_batches(_dataset(_batches()), 1).element_spec[1].shape.rank == 2


def test_under_loss_scaling_the_group_makes_the_larger_batch_update():
    """mixed_float16: each batch's loss is scaled, the sum unscaled once by the optimizer
    (without clipping, which would hide a wrong scale)."""
    keras.utils.set_random_seed(5)
    batches = _batches()
    previous = training.set_precision("mixed_float16")
    try:
        model, optimizer = _model_and_optimizer(clipnorm=None)
        assert isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
        initial = model.get_weights()
        whole = tf.data.Dataset.from_tensors(_concatenated(batches))
        _run(model, optimizer, whole, 1, "tokens")
        plain = model.get_weights()
        model, optimizer = _model_and_optimizer(initial, clipnorm=None)
        _run(model, optimizer, group_batches(_dataset(batches), 3), 3, "tokens")
        accumulated = model.get_weights()
    finally:
        training.set_precision(previous)
    moved = max(np.max(np.abs(a - b)) for a, b in zip(plain, initial, strict=True))
    assert moved > 1e-3 and int(optimizer.iterations.numpy()) == 1
    for want, got in zip(plain, accumulated, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-4)
