"""Kill a search in the middle of a trial, start it again: finished trials are not repeated."""

import subprocess
import sys
import time
from pathlib import Path

import fake_hyper_model

SCRIPT = Path(__file__).with_name("fake_hyper_model.py")


def _lines(path):
    return path.read_text().splitlines() if path.exists() else []


def test_killed_search_resumes_without_repeating_finished_trials(tmp_path):
    directory, log = tmp_path / "search", tmp_path / "fits.log"
    log.write_text("")
    # The third fit (trial 2) hangs; the process is killed there.
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(directory), str(log), "4", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_lines(log)) < 3:
            assert process.poll() is None, "the search process ended before its third trial"
            assert time.monotonic() < deadline, "the search process did not reach trial 2"
            time.sleep(0.2)
    finally:
        process.kill()
        process.wait()
    first_run = _lines(log)

    tuner = fake_hyper_model.search(directory, log, max_trials=4)
    resumed = _lines(log)[len(first_run) :]
    # Only the interrupted trial (run again with its hyperparameters) and one new trial ran.
    assert len(resumed) == 2
    assert resumed[0] == first_run[2]
    assert resumed[1] not in first_run
    completed = [t for t in tuner.oracle.trials.values() if t.status == "COMPLETED"]
    assert len(completed) == 4
    assert len({t.trial_id for t in completed}) == 4
    trial_dirs = [p for p in (directory / "search").iterdir() if p.name.startswith("trial_")]
    assert len(trial_dirs) == 4
