"""Checkpoint averaging: a model whose weights are the mean of a run's last checkpoints.

Averaging the parameters of the last few checkpoints of a run (Junczys-Dowmunt et al.
2016; Vaswani et al. 2017 average the last 5 or 20) gives a smoother model than the last
one alone, at no training cost. `average_checkpoints(model, directory, last=N)` reads the
newest N intact checkpoints that `zoo.training.train` wrote (`<out>/checkpoints`), sets
every float variable of `model` to their mean and every other one (the dropout layers'
seed-generator states) to the newest checkpoint's value.

    python -m zoo average saved_models/luong_local_general --last 3
    python -m zoo evaluate saved_models/luong_local_general --model-file model.averaged.keras

The recipes keep `--keep-checkpoints` (3) checkpoints: every `--checkpoint-every` steps and
at each epoch's end.
"""

import logging

import numpy as np

from zoo.checks import check_int
from zoo.training.checkpoint_manager import (
    CheckpointManager,
    DamagedCheckpointError,
    model_arrays,
)

logger = logging.getLogger("zoo.training")


def average_checkpoints(model, directory, last=3):
    """Sets `model`'s weights to the mean of the newest `last` intact checkpoints in
    `directory`; returns their paths, oldest first.

    Raises ValueError when `directory` holds no intact checkpoint.
    """
    last = check_int("average_checkpoints", "last", last)
    manager = CheckpointManager(directory, model, None)
    paths, arrays = [], []
    for path in reversed(manager.checkpoints()):
        if len(paths) == last:
            break
        try:
            arrays.append(model_arrays(path, model))
        except DamagedCheckpointError as error:
            logger.warning("Skipping a damaged checkpoint: %s", error)
            continue
        paths.append(path)
    if not paths:
        raise ValueError(f"No intact checkpoint in {directory} to average.")
    if len(paths) < last:
        logger.warning("Averaging %d checkpoints: %s holds no more.", len(paths), directory)
    for i, variable in enumerate(model.variables):
        values = [a[i] for a in arrays]  # newest first
        if np.issubdtype(values[0].dtype, np.floating):
            mean = np.mean(np.stack(values).astype(np.float64), axis=0)
            variable.assign(mean.astype(values[0].dtype))
        else:
            variable.assign(values[0])
    return paths[::-1]
