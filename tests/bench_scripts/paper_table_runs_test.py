"""bench/paper_table.py's rows: a recorded row is reused unless retrained, a retrain never
re-evaluates a finished run folder, and an interrupted recipe is reported as resumable. A
tiny script stands in for the recipe."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import paper_table  # noqa: E402

LABEL = "luong_global_dot"

# The recipe's stand-in: exits with argv[2] after writing argv[1]/metrics.json (exit 0) or a
# checkpoint (any other exit).
FAKE_RECIPE = """
import json, pathlib, sys
folder, code = pathlib.Path(sys.argv[1]), int(sys.argv[2])
print("resuming" if folder.exists() else "starting", flush=True)
folder.mkdir(exist_ok=True)
if code == 0:
    (folder / "metrics.json").write_text(json.dumps({"args": {"epochs": 3}, "bleu": 12.5}))
else:
    (folder / "checkpoint").write_text("step 7")
sys.exit(code)
"""


@pytest.fixture
def rows(tmp_path, monkeypatch):
    """(run folders, the recorded row's path, set_exit(code)): rows recorded under tmp_path,
    and the recipe replaced by FAKE_RECIPE exiting with `code`."""
    monkeypatch.setattr(paper_table, "RECORDED_DIR", tmp_path / "recorded")
    out = tmp_path / "out"
    out.mkdir()
    exit_code = {"code": 0}

    def command(label, epochs, out):
        return [sys.executable, "-c", FAKE_RECIPE, str(out / label), str(exit_code["code"])]

    monkeypatch.setattr(paper_table, "command", command)
    return out, paper_table.recorded_path(LABEL, 3), lambda code: exit_code.update(code=code)


def _record(path, bleu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"args": {"epochs": 3}, "bleu": bleu}))


def test_a_recorded_row_is_reused_unless_retrained(rows):
    out, recorded, set_exit = rows
    _record(recorded, 30.0)
    set_exit(1)  # a run would fail: reuse runs nothing
    assert paper_table.run_row(LABEL, 3, out)["bleu"] == 30.0
    assert not (out / LABEL).exists()

    set_exit(0)
    metrics = paper_table.run_row(LABEL, 3, out, note="alone", retrain=True)
    assert metrics == {"args": {"epochs": 3}, "bleu": 12.5, "run_note": "alone"}
    assert json.loads(recorded.read_text()) == metrics


def test_a_retrain_refuses_a_finished_run_folder(rows):
    out, recorded, _ = rows
    _record(recorded, 30.0)
    (out / LABEL).mkdir()
    (out / LABEL / "metrics.json").write_text("{}")
    with pytest.raises(SystemExit, match=rf"{LABEL}: .*{LABEL} holds a finished run"):
        paper_table.run_row(LABEL, 3, out, retrain=True)
    assert json.loads(recorded.read_text())["bleu"] == 30.0


@pytest.mark.parametrize("code", [130, 143])
def test_an_interrupted_recipe_is_reported_as_resumable(rows, capsys, code):
    out, recorded, set_exit = rows
    set_exit(code)
    with pytest.raises(SystemExit) as stopped:
        paper_table.run_row(LABEL, 3, out)
    assert stopped.value.code == code
    assert "interrupted; its checkpoints are in" in capsys.readouterr().out
    assert (out / LABEL / "checkpoint").exists() and not recorded.exists()


def test_a_resumed_run_keeps_the_log_of_its_first_part(rows):
    out, _, set_exit = rows
    set_exit(130)
    with pytest.raises(SystemExit):
        paper_table.run_row(LABEL, 3, out)
    set_exit(0)
    paper_table.run_row(LABEL, 3, out, retrain=True)
    assert (out / f"{LABEL}.log").read_text().split() == ["starting", "resuming"]


def test_a_failed_recipe_names_its_log(rows):
    out, recorded, set_exit = rows
    set_exit(1)
    with pytest.raises(SystemExit, match=r"the recipe failed \(exit 1\); see .*\.log"):
        paper_table.run_row(LABEL, 3, out)
    assert not recorded.exists()


def test_retrain_with_table_only_is_refused(capsys):
    with pytest.raises(SystemExit) as refused:
        paper_table.main(["--retrain", "--table-only", "--out", "unused"])
    assert refused.value.code == 2
    assert "--retrain trains rows and --table-only trains none" in capsys.readouterr().err


# A recipe that takes a second to save its checkpoint after Ctrl-C, as a real one can.
SLOW_TO_STOP = """
import pathlib, signal, sys, time
folder = pathlib.Path(sys.argv[1])
folder.mkdir()
stop = []
signal.signal(signal.SIGINT, lambda *_: stop.append(1))
(folder / "ready").write_text("")
while not stop:
    time.sleep(0.05)
time.sleep(1.0)
(folder / "checkpoint").write_text("step 7")
sys.exit(130)
"""

RUN_ONE_ROW = """
import pathlib, sys
sys.path.insert(0, {bench!r})
import paper_table
out = pathlib.Path({out!r})
paper_table.RECORDED_DIR = out / "recorded"
paper_table.command = lambda label, epochs, out: [sys.executable, "-c", {recipe!r}, str(out / label)]
paper_table.run_row({label!r}, 3, out)
"""


def test_ctrl_c_waits_for_the_recipe_to_save_its_checkpoint(tmp_path):
    """Ctrl-C reaches the whole process group; the table's process waits for the recipe's
    checkpoint rather than killing it (as subprocess.call would after 0.25 s)."""
    import os
    import signal
    import subprocess
    import time

    script = RUN_ONE_ROW.format(
        bench=str(Path(paper_table.__file__).parent), out=str(tmp_path),
        recipe=SLOW_TO_STOP, label=LABEL,
    )  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-c", script], start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / LABEL / "ready").exists():
        assert process.poll() is None and time.monotonic() < deadline, "the recipe never started"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 130
    assert (tmp_path / LABEL / "checkpoint").read_text() == "step 7"
    assert "the same command resumes it" in output
