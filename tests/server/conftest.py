"""Makes tests/translator_toy.py importable from tests/server, and `python -m zoo serve` on a
tiny model folder in a subprocess (`zoo_serve`), shared by the tests that need real
sockets and a real process."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The subprocess server's limits: small, so that the tests reach them quickly.
SERVE_FLAGS = ["--read-timeout", "1", "--keep-alive-timeout", "1", "--max-request-bytes", "65536"]


@pytest.fixture(scope="session")
def zoo_serve(data_dir, tmp_path_factory):
    """`python -m zoo serve` on a tiny folder, port 0: yields (url, port, process, log)."""
    from translator_toy import toy_translator

    folder = tmp_path_factory.mktemp("served") / "model"
    translator = toy_translator("bahdanau_rnnsearch", beam_size=1)
    translator.save(folder, serving=False)
    log = folder.parent / "server.log"
    with open(log, "wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "zoo", "serve", str(folder), "--port", "0", *SERVE_FLAGS],
            stdout=subprocess.PIPE,
            stderr=errors,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        )
    try:
        line = process.stdout.readline().decode()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, f"no 'Serving' line: {line!r}; log: {log.read_text()[-3000:]}"
        port = int(match[1])
        yield f"http://127.0.0.1:{port}", port, process, log, translator
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
