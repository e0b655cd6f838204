"""bench/serve_load.py runs end to end on a tiny folder: loads, abuse, mixed options, and
its table."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_serve_load(tmp_path, beam_size, *flags):
    """bench/serve_load.py on a toy folder of `beam_size` and three sentences: its stdout."""
    from translator_toy import toy_translator

    folder = tmp_path / "model"
    toy_translator("bahdanau_rnnsearch", beam_size=beam_size).save(folder, serving=False)
    sentences = tmp_path / "sentences.de"
    sentences.write_text("Ein Hund rennt.\nZwei Männer lachen.\nEine Frau.\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "serve_load.py"), str(folder),
         "--sentences", str(sentences), *flags],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def table_rows(stdout, server):
    """The cells of the table's rows of `server` (its column's text)."""
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in stdout.splitlines()
        if line.startswith(f"| {server} |")
    ]


@pytest.mark.slow
def test_serve_load_runs_and_finds_every_answer_right(data_dir, tmp_path):
    stdout = run_serve_load(
        tmp_path, 1, "--clients", "1,4", "--requests", "3", "--abuse",
        "--server-args", "--read-timeout 1",
    )  # fmt: skip
    rows = table_rows(stdout, "--read-timeout 1")
    assert len(rows) == 2
    for cells in rows:
        assert cells[7:9] == ["0", "0"]  # errors, wrong answers
        refused, sent = cells[10].split("/")
        assert refused == sent and int(sent) > 0


@pytest.mark.slow
def test_a_mixed_load_compares_its_answers_with_the_requests_alone(data_dir, tmp_path):
    stdout = run_serve_load(
        tmp_path, 2, "--mixed", "--clients", "4", "--requests", "4", "--check", "8"
    )
    assert "distinct answers compared with the request alone" in stdout
    (cells,) = table_rows(stdout, "defaults")
    assert cells[2] == "16" and cells[7:9] == ["0", "0"]  # requests; errors, wrong answers
