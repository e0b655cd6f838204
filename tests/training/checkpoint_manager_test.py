"""CheckpointManager: damaged checkpoints are detected and skipped, never loaded."""

import logging

import keras
import numpy as np
import pytest

from zoo.training.checkpoints import CheckpointManager, DamagedCheckpointError


def _manager(directory):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    return CheckpointManager(directory, model, optimizer, keep=3), model


def _save_three(manager, model):
    for step in (1, 2, 3):
        model.layers[0].kernel.assign(np.full((3, 2), float(step), "float32"))
        manager.save(step, {"step": step})


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(p.read_bytes()[:-7]),  # truncated
        lambda p: p.write_bytes(p.read_bytes()[:-7] + b"\0" * 7),  # same size, altered
        lambda p: p.unlink(),
    ],
    ids=["truncated", "altered", "missing"],
)
def test_restore_skips_a_damaged_newest_checkpoint(tmp_path, caplog, damage):
    manager, model = _manager(tmp_path)
    _save_three(manager, model)
    newest = manager.latest()
    damage(tmp_path / newest.rsplit("/", 1)[1] / "variables.npz")
    with pytest.raises(DamagedCheckpointError, match="variables.npz"):
        manager.verify(newest)
    model.layers[0].kernel.assign(np.zeros((3, 2), "float32"))
    with caplog.at_level(logging.WARNING, logger="zoo.training"):
        state = manager.restore()
    assert state == {"step": 2}
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), np.full((3, 2), 2.0))
    assert newest in caplog.text and "newest intact" in caplog.text
    with pytest.raises(DamagedCheckpointError):
        manager.restore(newest)  # an explicit path is never silently replaced


def test_every_checkpoint_damaged_raises_with_the_way_out(tmp_path):
    manager, model = _manager(tmp_path)
    _save_three(manager, model)
    for path in manager.checkpoints():
        (tmp_path / path.rsplit("/", 1)[1] / "state.json").write_text("{")
    with pytest.raises(DamagedCheckpointError, match="--no-resume"):
        manager.restore()


def test_intact_checkpoint_restores_exactly(tmp_path):
    manager, model = _manager(tmp_path)
    _save_three(manager, model)
    model.layers[0].kernel.assign(np.zeros((3, 2), "float32"))
    assert manager.restore() == {"step": 3}
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), np.full((3, 2), 3.0))


def test_average_checkpoints_is_the_mean_of_the_newest_ones(tmp_path, caplog):
    from zoo.training import average_checkpoints

    manager, model = _manager(tmp_path)
    _save_three(manager, model)  # kernels 1, 2, 3
    kernel = model.layers[0].kernel
    assert len(average_checkpoints(model, tmp_path, last=2)) == 2
    np.testing.assert_allclose(kernel.numpy(), np.full((3, 2), 2.5))
    used = average_checkpoints(model, tmp_path, last=3)
    assert used == manager.checkpoints()  # oldest first
    np.testing.assert_allclose(kernel.numpy(), np.full((3, 2), 2.0))
    # N equal checkpoints average to that checkpoint.
    for step in (4, 5, 6):
        kernel.assign(np.full((3, 2), 7.0, "float32"))
        manager.save(step, {"step": step})
    kernel.assign(np.zeros((3, 2), "float32"))
    average_checkpoints(model, tmp_path, last=3)
    np.testing.assert_array_equal(kernel.numpy(), np.full((3, 2), 7.0))
    # A damaged one is skipped with a warning; fewer than asked is said too.
    (tmp_path / manager.latest().rsplit("/", 1)[1] / "variables.npz").unlink()
    with caplog.at_level(logging.WARNING, logger="zoo.training"):
        assert len(average_checkpoints(model, tmp_path, last=5)) == 2
    assert "damaged" in caplog.text and "Averaging 2 checkpoints" in caplog.text
    with pytest.raises(ValueError, match="No intact checkpoint"):
        average_checkpoints(model, tmp_path / "empty")
