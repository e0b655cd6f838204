"""`write_json`: the package's JSON writer (it imports nothing from `zoo`).

A file written with it is complete or absent: the text goes to `<path>.tmp` first and
replaces `path` in one step, so a crash or Ctrl-C mid-write never leaves half a file. It
writes a run's `metrics.json`, `run.json`, data counts and time plan, the tokenizer's,
translator's and SavedModel's settings, and `python -m zoo evaluate --output`.
(Checkpoints write their own `state.json`, synced to disk with the weights.)
"""

import json
import math
import os

import numpy as np


def write_json(path, data, indent=2):
    """Writes `data` to `path` as indented JSON, atomically, making its folder if needed.

    NumPy scalars and arrays become numbers and lists; NaN and infinities become null
    (JSON has no NaN); any other object is written as its `str`."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(_clean(data), f, indent=indent, ensure_ascii=False, default=_json_default)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:  # Ctrl-C included: leave no half-written file behind
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _clean(data):
    if isinstance(data, dict):
        return {str(k): _clean(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_clean(v) for v in data]
    if isinstance(data, float | np.floating):
        value = float(data)
        return value if math.isfinite(value) else None
    return data


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)
