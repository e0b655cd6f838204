import time

import keras
import pytest

from zoo.training import TimeLimit


class _Model:
    stop_training = False


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
