"""Training checkpoints: every model variable, every optimizer variable and a state dict."""

import json
import os
import shutil

import numpy as np


class CheckpointManager:
    """Writes and restores complete training checkpoints in `directory`.

    A checkpoint is a folder `ckpt-<step>` holding `variables.npz` (every variable of the
    model, including the dropout layers' seed-generator states, and every variable of the
    optimizer: iteration counter, slots, loss scale) and `state.json` (whatever the trainer
    passes: epoch, batch in epoch, global step, best validation loss, timings). It is
    written under a temporary name and renamed, so a kill never leaves a half-written
    checkpoint behind. The newest `keep` checkpoints are kept.

    Variables are matched by position and checked by path and shape: restoring into a
    model of another architecture raises ValueError.

    Example:
        manager = CheckpointManager("out/checkpoints", model, optimizer, keep=3)
        manager.save(step=100, state={"epoch": 0, "batch": 100})
        state = manager.restore()   # None when there is no checkpoint
    """

    def __init__(self, directory, model, optimizer, keep=3):
        if int(keep) < 1:
            raise ValueError(f"keep must be >= 1; received {keep!r}.")
        self.directory = str(directory)
        self.model = model
        self.optimizer = optimizer
        self.keep = int(keep)

    def _variables(self):
        return list(self.model.variables) + list(self.optimizer.variables)

    def checkpoints(self):
        """Paths of the complete checkpoints, oldest first."""
        if not os.path.isdir(self.directory):
            return []
        steps = []
        for name in os.listdir(self.directory):
            path = os.path.join(self.directory, name)
            if (
                name.startswith("ckpt-")
                and name[5:].isdigit()
                and os.path.exists(os.path.join(path, "state.json"))
            ):
                steps.append((int(name[5:]), path))
        return [path for _, path in sorted(steps)]

    def latest(self):
        """Path of the newest checkpoint, or None."""
        found = self.checkpoints()
        return found[-1] if found else None

    def save(self, step, state):
        """Writes checkpoint `ckpt-<step>` with `state` (a JSON-serialisable dict)."""
        os.makedirs(self.directory, exist_ok=True)
        final = os.path.join(self.directory, f"ckpt-{int(step):010d}")
        tmp = final + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        variables = self._variables()
        arrays = {f"v{i:05d}": np.asarray(v.numpy()) for i, v in enumerate(variables)}
        np.savez(os.path.join(tmp, "variables.npz"), **arrays)
        meta = {
            "state": state,
            "paths": [v.path for v in variables],
            "shapes": [list(v.shape) for v in variables],
        }
        with open(os.path.join(tmp, "state.json"), "w") as f:
            json.dump(meta, f, indent=1)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        for old in self.checkpoints()[: -self.keep]:
            shutil.rmtree(old, ignore_errors=True)
        return final

    def restore(self, path=None):
        """Loads checkpoint `path` (default: the newest) into model and optimizer.

        The optimizer must be built (`optimizer.build(model.trainable_variables)`) first.
        Returns the saved state dict, or None when there is no checkpoint.
        """
        path = path or self.latest()
        if path is None:
            return None
        with open(os.path.join(path, "state.json")) as f:
            meta = json.load(f)
        variables = self._variables()
        if len(variables) != len(meta["paths"]):
            raise ValueError(
                f"Checkpoint {path} holds {len(meta['paths'])} variables but the model and "
                f"optimizer have {len(variables)}; was it written by another architecture?"
            )
        with np.load(os.path.join(path, "variables.npz")) as data:
            for i, v in enumerate(variables):
                value = data[f"v{i:05d}"]
                if tuple(value.shape) != tuple(v.shape):
                    raise ValueError(
                        f"Checkpoint {path}: variable {i} ({meta['paths'][i]}) has shape "
                        f"{value.shape}, but {v.path} expects {tuple(v.shape)}."
                    )
                v.assign(value)
        return meta["state"]
