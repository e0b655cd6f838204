"""Tests for zoo/training/optimizers.py and zoo/training/optimizers.py."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.training import LuongSchedule, halving_schedule, make_optimizer


@pytest.mark.parametrize(
    "step, expected",
    [(0, 1.0), (499, 1.0), (500, 0.5), (599, 0.5), (600, 0.25), (999, 1 / 32)],
)
def test_luong_schedule_values(step, expected):
    # 100 steps per epoch: epochs 1-5 at 1.0, then halved at the start of each epoch.
    assert float(LuongSchedule(steps_per_epoch=100)(step)) == pytest.approx(expected)


def test_luong_schedule_with_dropout_starts_after_8_epochs():
    optimizer = make_optimizer("luong", steps_per_epoch=10, dropout=0.2)
    config = optimizer.get_config()["learning_rate"]
    schedule = keras.optimizers.schedules.deserialize(config)
    assert float(schedule(79)) == 1.0 and float(schedule(80)) == 0.5
    assert float(schedule(95)) == 0.25
    assert optimizer.global_clipnorm == 5.0


def test_luong_schedule_serializes():
    schedule = LuongSchedule(steps_per_epoch=7, decay_after_epochs=8, decay_factor=0.25)
    restored = keras.optimizers.schedules.deserialize(
        keras.optimizers.schedules.serialize(schedule)
    )
    assert isinstance(restored, LuongSchedule)
    assert restored.get_config() == schedule.get_config()
    steps = np.arange(0, 100, 3)
    np.testing.assert_allclose(
        [float(restored(s)) for s in steps], [float(schedule(s)) for s in steps]
    )


def test_optimizer_round_trip_keeps_schedule():
    optimizer = make_optimizer("luong", steps_per_epoch=4)
    clone = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert clone.get_config()["learning_rate"]["config"]["steps_per_epoch"] == 4


def test_paper_defaults():
    bahdanau = make_optimizer("bahdanau")
    assert isinstance(bahdanau, keras.optimizers.Adadelta)
    assert bahdanau.rho == 0.95 and bahdanau.epsilon == 1e-6
    assert float(bahdanau.learning_rate) == 1.0 and bahdanau.global_clipnorm == 1.0
    adam = make_optimizer("adam")
    assert isinstance(adam, keras.optimizers.Adam)
    assert float(adam.learning_rate) == pytest.approx(1e-3) and adam.global_clipnorm == 1.0
    sgd = make_optimizer("luong", steps_per_epoch=3)
    assert isinstance(sgd, keras.optimizers.SGD) and sgd.global_clipnorm == 5.0
    assert make_optimizer("adam", learning_rate=0.1, clipnorm=2.0).global_clipnorm == 2.0


def test_global_norm_clipping_is_applied():
    # One SGD step with lr 1 on a gradient of norm 10 moves the weights by exactly clipnorm 5.
    optimizer = make_optimizer("luong", steps_per_epoch=10)
    variable = keras.Variable(np.zeros(2, np.float32))
    optimizer.apply([keras.ops.convert_to_tensor(np.array([6.0, 8.0], np.float32))], [variable])
    np.testing.assert_allclose(np.linalg.norm(variable.numpy()), 5.0, rtol=1e-6)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="Unknown optimizer"):
        make_optimizer("rmsprop")
    with pytest.raises(ValueError, match="steps_per_epoch"):
        make_optimizer("luong")
    with pytest.raises(ValueError, match="steps_per_epoch"):
        LuongSchedule(steps_per_epoch=0)
    with pytest.raises(ValueError, match="decay_factor"):
        LuongSchedule(steps_per_epoch=3, decay_factor=2.0)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"steps_per_epoch": 2.5}, "steps_per_epoch"),
        ({"steps_per_epoch": True}, "steps_per_epoch"),
        ({"steps_per_epoch": 3, "decay_after_epochs": 1.5}, "decay_after_epochs"),
        ({"steps_per_epoch": 3, "initial_learning_rate": float("nan")}, "initial_learning_rate"),
        ({"steps_per_epoch": 3, "initial_learning_rate": 0.0}, "initial_learning_rate"),
    ],
)
def test_schedule_refuses_values_it_would_truncate_or_cannot_use(kwargs, name):
    with pytest.raises(ValueError, match=f"{name} must be .*received"):
        LuongSchedule(**kwargs)


@pytest.mark.parametrize("name, initial", [("adam", 1e-3), ("bahdanau", 1.0), ("luong", 1.0)])
def test_decay_after_epochs_halves_any_optimizer(name, initial):
    # 10 steps per epoch, 2 full-rate epochs: steps 0-19 at the initial rate, then halved
    # at the start of each epoch. For "luong" it replaces the paper's 5.
    optimizer = make_optimizer(name, steps_per_epoch=10, decay_after_epochs=2)
    schedule = keras.optimizers.schedules.deserialize(optimizer.get_config()["learning_rate"])
    rates = [float(schedule(step)) for step in (0, 19, 20, 29, 30)]
    np.testing.assert_allclose(
        rates, [initial, initial, initial / 2, initial / 2, initial / 4], rtol=1e-6
    )
    # The rate the optimizer applies follows the schedule as its iterations count up.
    optimizer.iterations.assign(25)
    assert float(optimizer.learning_rate) == pytest.approx(initial / 2)


def test_decay_after_epochs_needs_steps_per_epoch():
    with pytest.raises(ValueError, match="'adam' optimizer with decay_after_epochs=3.*None"):
        make_optimizer("adam", decay_after_epochs=3)
    # Without decay, Adam stays a constant rate.
    assert float(make_optimizer("adam", steps_per_epoch=10).learning_rate) == pytest.approx(1e-3)


def test_moving_the_halving_reaches_a_compiled_step():
    # The start of the halving is a variable: a step traced before the move follows it.
    optimizer = make_optimizer("adam", steps_per_epoch=10, decay_after_epochs=5)
    schedule = halving_schedule(optimizer)
    assert isinstance(schedule, LuongSchedule)
    rate = tf.function(lambda: schedule(optimizer.iterations))
    optimizer.iterations.assign(35)  # epoch 4 (1-based), before the halving
    assert float(rate()) == pytest.approx(1e-3)
    schedule.set_decay_after_epochs(2)
    assert float(rate()) == pytest.approx(1e-3 / 4)  # epochs 3 and 4 halved
    assert schedule.get_config()["decay_after_epochs"] == 2
    with pytest.raises(ValueError, match="decay_after_epochs must be an int >= 0"):
        schedule.set_decay_after_epochs(-1)


def test_halving_schedule_is_none_without_halving():
    assert halving_schedule(make_optimizer("adam")) is None
    wrapped = keras.optimizers.LossScaleOptimizer(make_optimizer("luong", steps_per_epoch=3))
    assert halving_schedule(wrapped).decay_after_epochs == 5
