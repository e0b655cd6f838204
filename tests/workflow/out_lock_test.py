"""One run at a time in an output folder: a second run refuses at once, naming the first's
process; the lock goes when its run ends (normally, by an exception, by Ctrl-C); a lock whose
process is dead is taken over with a warning."""

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest
from recipe_runs import run_recipe

from zoo.workflow.run_folder import LOCK_FILE, OutFolderInUse, OutLock

HOLDER = textwrap.dedent(
    """
    import signal, sys, time
    # Ctrl-C raises KeyboardInterrupt, as in a terminal, whatever SIGINT disposition the
    # test's process passes on (an ignored signal stays ignored across exec).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from zoo.workflow.run_folder import OutLock
    with OutLock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(60)
    """
)


def _holder(out):
    """A live process holding the lock of `out` (started, and holding it, on return)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_second_run_into_a_locked_folder_refuses_naming_the_first(tmp_path, capsys):
    out = tmp_path / "run"
    holder = _holder(out)
    try:
        record = json.loads((out / LOCK_FILE).read_text())
        assert (record["pid"], record["host"]) == (holder.pid, socket.gethostname())
        with pytest.raises(SystemExit) as stopped:
            run_recipe(out, "--data", str(tmp_path / "nothing" / "{split}"))
        assert stopped.value.code == 2
        error = capsys.readouterr().err
        assert f"in use by another run (process {holder.pid} on {record['host']}" in error
        assert "Traceback" not in error and not (out / "run.json").exists()
    finally:
        holder.send_signal(signal.SIGINT)  # Ctrl-C: the holder's lock goes with it
        holder.wait(timeout=90)  # its exit unloads TensorFlow, slow on a busy machine
    assert not (out / LOCK_FILE).exists()


def test_the_lock_goes_when_a_run_fails_and_on_an_exception(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as stopped:  # a missing corpus: exit 1, lock released
        run_recipe(out, "--data", str(tmp_path / "nothing" / "{split}"))
    assert stopped.value.code == 1 and not (out / LOCK_FILE).exists()
    with pytest.raises(KeyboardInterrupt), OutLock(out):
        assert (out / LOCK_FILE).exists()
        with pytest.raises(OutFolderInUse, match=f"process {os.getpid()}"):
            OutLock(out).acquire()  # held even by this very process: one run at a time
        raise KeyboardInterrupt
    assert not (out / LOCK_FILE).exists()


def test_a_stale_lock_is_taken_over_with_a_warning(tmp_path, caplog):
    out = tmp_path / "run"
    out.mkdir()
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    dead = int(finished.stdout)
    stale = {"pid": dead, "host": socket.gethostname(), "started": "2026-01-01T00:00:00+00:00"}
    (out / LOCK_FILE).write_text(json.dumps(stale))
    with caplog.at_level(logging.WARNING, logger="zoo.workflow"), OutLock(out):
        assert json.loads((out / LOCK_FILE).read_text())["pid"] == os.getpid()
    assert f"taking over the lock of process {dead}, which no longer runs" in caplog.text
    # Another host's lock is never taken over: its process cannot be checked from here.
    (out / LOCK_FILE).write_text(json.dumps({**stale, "host": "elsewhere.example"}))
    with pytest.raises(OutFolderInUse, match=f"process {dead} on elsewhere.example"):
        OutLock(out).acquire()


@pytest.mark.slow
def test_a_recipe_interrupted_while_training_leaves_no_lock(tiny_corpus, tmp_path):
    from recipe_runs import RECIPES, TINY

    out = tmp_path / "run"
    argv = [sys.executable, str(RECIPES / "luong_base.py"), *TINY, "--data", tiny_corpus,
            "--out", str(out), "--max-steps", "100000", "--checkpoint-every", "100000"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(RECIPES.parent)}
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env)  # fmt: skip
    try:
        for line in process.stdout:
            if line.startswith("Epoch 2/"):  # training: the lock is held
                assert (out / LOCK_FILE).exists()
                process.send_signal(signal.SIGINT)
                break
        process.stdout.read()
        assert process.wait(timeout=120) == 128 + signal.SIGINT
    finally:
        process.kill()
    assert not (out / LOCK_FILE).exists()
