"""Checkpoints: the manager that writes, keeps and restores them, and their average.

Training checkpoints: every model variable, every optimizer variable and a state dict.

Checkpoint averaging: a model whose weights are the mean of a run's last checkpoints.

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

import hashlib
import json
import logging
import os
import shutil
import zipfile

import numpy as np

from zoo.checks import check_int

logger = logging.getLogger("zoo.training")
KEEP = 3  # the newest checkpoints kept, by default


class DamagedCheckpointError(ValueError):
    """A checkpoint's files are truncated or altered (their size or SHA-256 differs)."""


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync(path):
    """Flushes a file (or a folder's entries) to disk, where the platform allows it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class CheckpointManager:
    """Writes and restores complete training checkpoints in `directory`.

    A checkpoint is a folder `ckpt-<step>` holding `variables.npz` (every variable of the
    model, including the dropout layers' seed-generator states, and every variable of the
    optimizer: iteration counter, slots, loss scale) and `state.json` (whatever the trainer
    passes: epoch, batch in epoch, global step, best validation loss, timings). It is
    written under a temporary name, flushed to disk and renamed, so a kill never leaves a
    half-written checkpoint behind. `state.json` also records the size and SHA-256 of
    `variables.npz`: a checkpoint damaged later (a crash of the machine before the disk
    wrote it, a full disk, a copy cut short) is detected, and `restore()` falls back to the
    newest intact one with a warning naming the damaged one. The newest `keep` checkpoints
    are kept.

    Variables are matched by position and checked by path and shape: restoring into a
    model of another architecture raises ValueError.

    Example:
        manager = CheckpointManager("out/checkpoints", model, optimizer, keep=3)
        manager.save(step=100, state={"epoch": 0, "batch": 100})
        state = manager.restore()   # None when there is no checkpoint
    """

    def __init__(self, directory, model, optimizer, keep=KEEP):
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
        npz = os.path.join(tmp, "variables.npz")
        np.savez(npz, **arrays)
        _fsync(npz)
        meta = {
            "state": state,
            "paths": [v.path for v in variables],
            "shapes": [list(v.shape) for v in variables],
            "files": {"variables.npz": {"bytes": os.path.getsize(npz), "sha256": _sha256(npz)}},
        }
        with open(os.path.join(tmp, "state.json"), "w") as f:
            json.dump(meta, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        _fsync(self.directory)
        for old in self.checkpoints()[: -self.keep]:
            shutil.rmtree(old, ignore_errors=True)
        return final

    def verify(self, path):
        """Reads checkpoint `path`'s metadata and checks its files; returns the metadata.

        Raises DamagedCheckpointError when `state.json` is unreadable or `variables.npz` is
        missing, of another size or SHA-256 than recorded, or (for checkpoints written
        before sizes were recorded) not a readable archive.
        """
        try:
            with open(os.path.join(path, "state.json")) as f:
                meta = json.load(f)
        except (OSError, ValueError) as error:
            raise DamagedCheckpointError(f"{path}/state.json is unreadable ({error}).") from None
        npz = os.path.join(path, "variables.npz")
        if not os.path.isfile(npz):
            raise DamagedCheckpointError(f"{npz} is missing.")
        recorded = meta.get("files", {}).get("variables.npz")
        if recorded is not None:
            size = os.path.getsize(npz)
            if size != recorded["bytes"]:
                raise DamagedCheckpointError(
                    f"{npz} has {size} bytes, {recorded['bytes']} were written (truncated?)."
                )
            if _sha256(npz) != recorded["sha256"]:
                raise DamagedCheckpointError(f"{npz} differs from what was written (SHA-256).")
        else:
            try:
                with np.load(npz) as data:
                    for name in data.files:
                        data[name]
            except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
                raise DamagedCheckpointError(f"{npz} is unreadable ({error}).") from None
        return meta

    def restore(self, path=None):
        """Loads checkpoint `path` (default: the newest intact one) into model and optimizer.

        The optimizer must be built (`optimizer.build(model.trainable_variables)`) first.
        Without `path`, damaged checkpoints (see `verify`) are skipped with a warning, newest
        first. Returns the saved state dict, or None when there is no checkpoint.
        Raises DamagedCheckpointError when `path` is damaged, or when every checkpoint is.
        """
        if path is not None:
            return self._load(path, self.verify(path))
        found = self.checkpoints()
        damaged = []
        for candidate in reversed(found):
            try:
                meta = self.verify(candidate)
            except DamagedCheckpointError as error:
                damaged.append(candidate)
                logger.warning("Skipping a damaged checkpoint: %s", error)
                continue
            if damaged:
                logger.warning("Resuming from %s, the newest intact checkpoint.", candidate)
            return self._load(candidate, meta)
        if damaged:
            raise DamagedCheckpointError(
                f"Every checkpoint in {self.directory} is damaged ({', '.join(damaged)}); "
                "delete them (or start over with --no-resume) to train from the start."
            )
        return None

    def _load(self, path, meta):
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


def model_arrays(path, model):
    """The values checkpoint `path` holds for `model.variables`, in their order (the
    checkpoint verified first; its variables' shapes must match the model's)."""
    meta = CheckpointManager(os.path.dirname(os.fspath(path)), model, None).verify(path)
    shapes = [list(v.shape) for v in model.variables]
    # By position and shape (a reloaded model may name its variables differently).
    if meta["shapes"][: len(shapes)] != shapes:
        raise ValueError(
            f"Checkpoint {path} was written for another model: the shapes of its first "
            f"{len(shapes)} variables differ from the model's."
        )
    with np.load(os.path.join(path, "variables.npz")) as data:
        return [data[f"v{i:05d}"] for i in range(len(shapes))]


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
