"""bench/serve_load.py runs end to end on a tiny folder: loads, abuse, and its table."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_serve_load_runs_and_finds_every_answer_right(data_dir, tmp_path):
    from translator_toy import toy_translator

    folder = tmp_path / "model"
    toy_translator("bahdanau_rnnsearch", beam_size=1).save(folder, serving=False)
    sentences = tmp_path / "sentences.de"
    sentences.write_text("Ein Hund rennt.\nZwei Männer lachen.\nEine Frau.\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "serve_load.py"), str(folder),
         "--clients", "1,4", "--requests", "3", "--sentences", str(sentences), "--abuse",
         "--server-args", "--read-timeout 1"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| --read-timeout 1 |")]
    assert len(rows) == 2
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[7:9] == ["0", "0"]  # errors, wrong answers
        refused, sent = cells[10].split("/")
        assert refused == sent and int(sent) > 0


@pytest.mark.slow
def test_a_mixed_load_compares_its_answers_with_the_requests_alone(data_dir, tmp_path):
    from translator_toy import toy_translator

    folder = tmp_path / "model"
    toy_translator("bahdanau_rnnsearch", beam_size=2).save(folder, serving=False)
    sentences = tmp_path / "sentences.de"
    sentences.write_text("Ein Hund rennt.\nZwei Männer lachen.\nEine Frau.\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "serve_load.py"), str(folder), "--mixed",
         "--clients", "4", "--requests", "4", "--sentences", str(sentences), "--check", "8"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "distinct answers compared with the request alone" in done.stdout
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("| defaults |")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2] == "16" and cells[7:9] == ["0", "0"]  # requests; errors, wrong answers
