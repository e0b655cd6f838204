"""`python -m zoo ...` in a subprocess with values that would make a command run unbounded:
each is answered at once, or refused with a message naming the limit, before any work."""

import os
import subprocess
import sys

import pytest


def zoo(*argv, timeout=120, stdin=None):
    """(exit status, stdout, stderr) of `python -m zoo ARGV`."""
    done = subprocess.run(
        [sys.executable, "-m", "zoo", *map(str, argv)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    return done.returncode, done.stdout, done.stderr


def test_an_ngram_size_longer_than_any_output_is_answered_at_once(model_folder):
    directory, translator = model_folder
    status, out, err = zoo(
        "translate", directory, "Hallo.", "--beam-size", "1", "--no-repeat-ngram-size", 2**31 - 1
    )
    assert status == 0, err
    assert out == translator.translate(["Hallo."], beam_size=1)[0] + "\n"


def test_export_refuses_a_batch_size_above_its_limit_at_once(model_folder, tmp_path):
    from zoo.export.litert import MAX_BATCH_SIZE

    directory, _ = model_folder
    out = tmp_path / "m.tflite"
    argv = ["export", directory, "--format", "tflite", "--out", out, "--batch-size"]
    status, _, err = zoo(*argv, 10**9)
    assert status == 2, err
    assert f"expected an integer from 1 to {MAX_BATCH_SIZE}, got 1000000000" in err
    assert "Traceback" not in err and not out.exists()


def test_the_library_names_the_largest_batch_size(model_folder, tmp_path):
    from zoo.export.litert import MAX_BATCH_SIZE, export_litert

    with pytest.raises(
        ValueError, match=f"at most {MAX_BATCH_SIZE} .*received {MAX_BATCH_SIZE + 1}"
    ):
        export_litert(model_folder[1], tmp_path / "m.tflite", batch_size=MAX_BATCH_SIZE + 1)
    assert not list(tmp_path.iterdir())
