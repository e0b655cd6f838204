"""The benchmarks' `--backend`: the list checked, KERAS_BACKEND set for the processes
started and restored, and bench/train_speed.py's measurement on each backend's train step
(synthetic batches, a tiny model)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import common  # noqa: E402
import train_speed  # noqa: E402

from zoo.testing.backend_run import backend_installed  # noqa: E402


def test_backends_are_checked_and_kept_in_order_once():
    assert common.parse_backends("tensorflow") == ["tensorflow"]
    assert common.parse_backends(" tensorflow,tensorflow ,") == ["tensorflow"]
    with pytest.raises(ValueError, match=r"'mxnet'.*tensorflow, jax, torch"):
        common.parse_backends("tensorflow,mxnet")
    with pytest.raises(ValueError, match="names no backend"):
        common.parse_backends(" , ")


def test_the_backend_is_set_for_the_block_and_restored(monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    with common.keras_backend("jax"):
        assert os.environ["KERAS_BACKEND"] == "jax"
        assert common.default_backend() == "jax"
    assert os.environ["KERAS_BACKEND"] == "tensorflow"
    monkeypatch.delenv("KERAS_BACKEND")
    with common.keras_backend("torch"):
        assert os.environ["KERAS_BACKEND"] == "torch"
    assert "KERAS_BACKEND" not in os.environ
    assert common.default_backend() == "tensorflow"


def synthetic_batches(count=3, batch=4, vocab=30, seed=0):
    """`count` (inputs, targets) NumPy batches of varying lengths, padded with 0."""
    rng = np.random.default_rng(seed)
    batches = []
    for n in range(count):
        source = rng.integers(4, vocab, size=(batch, 5 + n)).astype("int32")
        target = rng.integers(4, vocab, size=(batch, 4 + 2 * n)).astype("int32")
        target[0, -2:] = 0  # one shorter target: padding the token count must leave out
        target_in = np.concatenate([np.full((batch, 1), 1, "int32"), target[:, :-1]], axis=1)
        batches.append(({"source_ids": source, "target_ids": target_in}, target))
    return batches


MEASURE = """
import json, sys
sys.path.insert(0, {bench!r})
import numpy as np
import train_speed
sys.path.insert(0, {tests!r})
from bench_backends_test import OPTS, synthetic_batches
row = train_speed.measure("bahdanau_rnnsearch", OPTS, synthetic_batches())
print("ROW " + json.dumps({{k: v for k, v in row.items() if isinstance(v, (int, float, str))}}))
"""

OPTS = {
    "size": "tiny",
    "precision": "float32",
    "jit": False,
    "vocab_sizes": (30, 30),
    "warmup": 1,
    "max_seconds": 60.0,
    "matmul_size": 64,
    "breakdown": False,
}


def check_row(row, backend):
    assert "error" not in row, row
    assert row["backend"] == backend
    assert row["steps"] == 2  # the batches after the one warm-up batch
    assert np.isfinite(row["loss"]) and row["loss"] > 0
    # real target tokens of the two timed batches: 4*6 - 2 and 4*8 - 2
    assert row["tokens_per_s"] * row["seconds"] == pytest.approx(22 + 30)


def test_train_speed_measures_the_tensorflow_train_step_here():
    check_row(train_speed.measure("bahdanau_rnnsearch", OPTS, synthetic_batches()), "tensorflow")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_train_speed_measures_the_train_step_of_each_backend(backend):
    if not backend_installed(backend):
        pytest.skip(f"{backend} is not installed")
    script = MEASURE.format(bench=str(BENCH), tests=str(Path(__file__).parent))
    env = dict(os.environ, KERAS_BACKEND=backend, CUDA_VISIBLE_DEVICES="")
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("ROW "))
    check_row(json.loads(line[4:]), backend)
