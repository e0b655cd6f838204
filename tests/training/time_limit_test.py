import json
import time

import keras
import numpy as np
import pytest

from zoo.training import LuongSchedule, TimeLimit, plan_halving, restore_time_plan


def test_stops_only_after_the_budget(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    callback = TimeLimit(minutes=2)
    callback.set_model(keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)]))
    callback.model.stop_training = False
    callback.on_train_begin()
    clock[0] += 119.0
    callback.on_train_batch_end(0)
    assert callback.model.stop_training is False
    clock[0] += 1.0
    callback.on_train_batch_end(1)
    assert callback.model.stop_training is True


@pytest.mark.parametrize("minutes", [0, -1, "5", True])
def test_rejects_bad_budget(minutes):
    with pytest.raises(ValueError, match="minutes"):
        TimeLimit(minutes)


def test_a_schedule_needs_the_epochs():
    with pytest.raises(ValueError, match="epochs must be an int >= 1; received None"):
        TimeLimit(60, schedule=LuongSchedule(steps_per_epoch=10))


@pytest.mark.parametrize(
    "fit, epochs, decay_after, done, expected",
    [
        (13.0, 12, 9, 1, 9),  # 12 epochs fit: the schedule's own halving after 9
        (12.0, 12, 9, 1, 9),
        (11.5, 12, 9, 1, 9),  # 9 * 11.5 / 12 = 8.6: still 9
        (11.0, 12, 9, 1, 8),  # 8.25
        (6.8, 12, 9, 1, 5),  # a slow machine: 5.1, epochs 6 and most of 7 halved
        (4.5, 10, 5, 1, 2),  # Bahdanau's 10 epochs halving after 5, in 4.5: 2.25
        (0.5, 12, 9, 1, 1),  # never before the epochs already done (0.4 rounds to 0)
    ],
)
def test_plan_shrinks_the_schedule_to_the_time(fit, epochs, decay_after, done, expected):
    plan = plan_halving(fit, epochs=epochs, decay_after_epochs=decay_after, epochs_done=done)
    assert plan["decay_after_epochs"] == expected
    assert plan["configured_decay_after_epochs"] == decay_after and plan["epochs"] == epochs


def test_plan_without_halved_epochs_changes_nothing():
    assert (
        plan_halving(3.0, epochs=10, decay_after_epochs=10, epochs_done=1)["decay_after_epochs"]
        == 10
    )


def _epoch(callback, clock, first_step, steps, seconds_per_step):
    for step in range(first_step + 1, first_step + steps + 1):
        clock[0] += seconds_per_step
        callback.on_train_batch_end(step, {"step": step})


def _limit(schedule, path, minutes=10, plan=None):
    callback = TimeLimit(
        minutes, schedule=schedule, epochs=12, plan_path=str(path), plan=plan, verbose=0
    )
    callback.set_model(keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)]))
    callback.set_params({"epochs": 12, "steps": 100})
    callback.on_train_begin()
    return callback


def test_plans_the_halving_after_the_second_epoch_and_keeps_it(monkeypatch, tmp_path):
    clock = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    schedule = LuongSchedule(steps_per_epoch=100, decay_after_epochs=9)
    path = tmp_path / "checkpoints" / "time_plan.json"
    callback = _limit(schedule, path)
    _epoch(callback, clock, 0, 100, 1.5)  # the first epoch, tracing included: no plan
    callback.on_epoch_end(0)
    assert callback.plan is None and not path.exists()
    _epoch(callback, clock, 100, 100, 0.6)  # 60 s: the 390 s left fit 650 steps
    callback.on_epoch_end(1)
    assert schedule.decay_after_epochs == 6  # 8.5 epochs: 9 * 8.5 / 12 = 6.4
    assert float(schedule(599)) == 1.0 and float(schedule(600)) == 0.5
    plan = json.loads(path.read_text())
    assert plan["decay_after_epochs"] == 6 and plan["configured_decay_after_epochs"] == 9
    assert plan["epochs_fit"] == pytest.approx(8.5) and plan == callback.plan
    # A slower later epoch (a replan would halve after epoch 3) does not plan again.
    _epoch(callback, clock, 200, 100, 3.0)
    callback.on_epoch_end(2)
    assert schedule.decay_after_epochs == 6 and json.loads(path.read_text()) == plan
    # A resumed run applies the recorded plan to a fresh schedule and does not replan.
    fresh = LuongSchedule(steps_per_epoch=100, decay_after_epochs=9)
    restored = restore_time_plan(str(path), fresh)
    assert restored == plan and fresh.decay_after_epochs == 6
    path.unlink()  # the callback keeps the plan it is given: it neither reads nor writes one
    again = _limit(fresh, path, plan=restored)
    for epoch in (3, 4):  # a replan would halve after epoch 5
        _epoch(again, clock, 100 * epoch, 100, 3.0)
        again.on_epoch_end(epoch)
    assert fresh.decay_after_epochs == 6 and again.plan == plan and not path.exists()


def test_a_resumed_run_times_its_first_whole_epoch(monkeypatch, tmp_path):
    # Resumed at batch 95 of 100: five steps, tracing and a validation are no measure.
    clock = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    schedule = LuongSchedule(steps_per_epoch=100, decay_after_epochs=9)
    callback = _limit(schedule, tmp_path / "time_plan.json")
    clock[0] += 30.0  # tracing
    _epoch(callback, clock, 95, 5, 0.85)
    clock[0] += 20.0  # validation
    callback.on_epoch_end(0)
    assert callback.plan is None and schedule.decay_after_epochs == 9
    _epoch(callback, clock, 100, 100, 0.85)
    clock[0] += 20.0
    callback.on_epoch_end(1)
    # 105 s for the epoch's 100 steps and validation: the 440.75 s left fit 419.8 steps.
    assert callback.plan["epochs_fit"] == pytest.approx(6.2)  # 6.198, to 2 digits
    assert schedule.decay_after_epochs == 5  # 9 * 6.198 / 12 = 4.6


def test_plans_under_model_fit_from_the_optimizer_counter(monkeypatch):
    # model.fit's logs carry no step: the callback counts the optimizer's iterations.
    clock = [0.0]

    def tick():
        clock[0] += 10.0
        return clock[0]

    schedule = LuongSchedule(steps_per_epoch=4, decay_after_epochs=9)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(schedule), loss="mse")
    limit = TimeLimit(5, schedule=schedule, epochs=12, verbose=0)
    monkeypatch.setattr(time, "monotonic", tick)
    x = np.ones((16, 1), "float32")
    model.fit(x, x, batch_size=4, epochs=2, callbacks=[limit], verbose=0, shuffle=False)
    # Begin at 10 s; the epochs end at 60 s and 110 s (50 s for 4 steps); the 200 s left
    # after the last step (100 s) fit 16 steps: 24 steps, 6 epochs in all.
    assert limit.plan["epochs_fit"] == pytest.approx(6.0)
    assert schedule.decay_after_epochs == 5  # 9 * 6 / 12 = 4.5, rounded up


def test_refuses_what_it_cannot_plan_with():
    with pytest.raises(ValueError, match="schedule must be a LuongSchedule.*received 0.1"):
        TimeLimit(60, schedule=0.1, epochs=12)
    with pytest.raises(ValueError, match="plan_path needs a schedule"):
        TimeLimit(60, plan_path="plan.json")
    with pytest.raises(ValueError, match="plan must be a dict.*received 'plan.json'"):
        TimeLimit(60, plan="plan.json")


def test_a_budget_that_fits_leaves_the_schedule(monkeypatch, tmp_path):
    clock = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    schedule = LuongSchedule(steps_per_epoch=100, decay_after_epochs=9)
    callback = TimeLimit(60, schedule=schedule, epochs=12, verbose=0)
    callback.set_params({"epochs": 12, "steps": 100})
    callback.on_train_begin()
    for epoch in (0, 1):  # 100 s an epoch: 36 epochs fit
        _epoch(callback, clock, 100 * epoch, 100, 1.0)
        callback.on_epoch_end(epoch)
    assert schedule.decay_after_epochs == 9 and callback.plan["epochs_fit"] == 36.0


def test_a_damaged_plan_is_named(tmp_path):
    path = tmp_path / "time_plan.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="time_plan.json is not a time plan"):
        restore_time_plan(str(path), LuongSchedule(steps_per_epoch=3))
    assert restore_time_plan(str(tmp_path / "none.json"), LuongSchedule(steps_per_epoch=3)) is None
