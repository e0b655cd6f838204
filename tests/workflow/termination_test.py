"""SIGTERM ends a run at any stage and releases run.lock, even when the main thread is held
in an operation that does not return; and --accumulate-steps is bounded before any work."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from zoo.training.train_step import MAX_ACCUMULATE_STEPS
from zoo.workflow.run_folder import LOCK_FILE

# A run holding its lock inside `ending_on_sigterm`, then blocked: in Python ("python"), or
# in a TensorFlow operation that never returns ("stuck", a dequeue from an empty queue).
HOLDER = textwrap.dedent(
    """
    import sys, time
    from zoo.workflow.run_folder import OutLock
    from zoo.workflow.run_folder import Terminated, ending_on_sigterm

    out, mode = sys.argv[1], sys.argv[2]
    if mode == "stuck":
        import tensorflow as tf
        queue = tf.queue.FIFOQueue(1, tf.int32)
    try:
        with ending_on_sigterm(grace=1.0), OutLock(out):
            print("locked", flush=True)
            if mode == "stuck":
                queue.dequeue()
            while True:
                time.sleep(0.1)
    except Terminated as stopped:
        sys.exit(stopped.exit_code)
    """
)


def _hold_and_terminate(out, mode):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out), mode], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout.readline() == "locked\n"
        assert (out / LOCK_FILE).exists()
        time.sleep(0.5)  # in the loop or the operation
        process.send_signal(signal.SIGTERM)
        return process.wait(timeout=60)
    finally:
        process.kill()
        process.wait()


def test_sigterm_releases_the_lock_whether_python_runs_or_not(tmp_path):
    for mode in ("python", "stuck"):
        out = tmp_path / mode
        assert _hold_and_terminate(out, mode) == 128 + signal.SIGTERM, mode
        assert not (out / LOCK_FILE).exists(), mode


def _recipe(out, *extra):
    from recipe_runs import RECIPES, TINY

    argv = [sys.executable, str(RECIPES / "luong_base.py"), *TINY, "--out", str(out), *extra]
    env = {**os.environ, "PYTHONPATH": str(RECIPES.parent), "TF_CPP_MIN_LOG_LEVEL": "2"}
    return argv, env


@pytest.mark.slow
def test_a_recipe_terminated_before_training_exits_143_and_leaves_no_lock(tiny_corpus, tmp_path):
    out = tmp_path / "run"
    argv, env = _recipe(out, "--data", tiny_corpus)
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        for _ in range(1200):  # the lock comes before the data is read
            if (out / LOCK_FILE).exists() or process.poll() is not None:
                break
            time.sleep(0.05)
        assert (out / LOCK_FILE).exists()
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=60)
        err = process.stderr.read().decode()
    finally:
        process.kill()
        process.wait()
    assert status == 128 + signal.SIGTERM, err[-2000:]
    assert "SIGTERM" in err and "Traceback" not in err, err[-2000:]
    assert not (out / LOCK_FILE).exists()


def test_accumulate_steps_beyond_the_limit_is_refused_with_the_range(tmp_path):
    out = tmp_path / "run"
    argv, env = _recipe(out, "--data", "multi30k", "--accumulate-steps", "1000000000")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2, done.stderr[-2000:]
    expected = f"expected an integer from 1 to {MAX_ACCUMULATE_STEPS}, got 1000000000"
    assert expected in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
