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


def test_score_refuses_an_output_that_is_one_of_its_inputs(model_folder, tmp_path):
    directory, _ = model_folder
    source, target = tmp_path / "s.de", tmp_path / "t.en"
    source.write_text("Ein Hund.\n", encoding="utf-8")
    target.write_text("A dog.\n", encoding="utf-8")
    argv = ["score", directory, "--source", source, "--target", target, "--output", source]
    status, out, err = zoo(*argv)
    assert status == 2 and out == "", err
    assert f"--output {source} is the file of --source too" in err and "Traceback" not in err
    assert source.read_text(encoding="utf-8") == "Ein Hund.\n"  # untouched


def test_every_command_that_writes_refuses_its_inputs_before_any_work(
    model_folder, tmp_path, capsys
):
    from zoo import cli

    directory, _ = model_folder
    source, gold = tmp_path / "s.de", tmp_path / "gold.txt"
    source.write_text("Ein Hund.\n", encoding="utf-8")
    gold.write_text("0-0\n", encoding="utf-8")
    link = tmp_path / "link.de"
    link.symlink_to(source)
    config = directory / "translator.json"
    before = config.read_bytes()
    cases = [
        (["score", directory, "--source", source, "--target", link, "--output", link],
         f"--output {link} is the file of --source too"),
        (["aer", directory, "--source", source, "--target", source, "--gold", gold,
          "--output", gold], f"--output {gold} is the file of --gold too"),
        (["evaluate", directory, "--output", config],
         f"--output {config} would replace a file of the model folder"),
        (["evaluate", directory, "--output", source, "--hypotheses", source],
         f"--output {source} is the file of --hypotheses too"),
        (["export", directory, "--format", "tflite", "--out", directory / "translator.tflite"],
         "would replace a file of the model folder"),
    ]  # fmt: skip
    for argv, message in cases:
        with pytest.raises(SystemExit) as stopped:
            cli.main([str(arg) for arg in argv])
        err = capsys.readouterr().err
        assert stopped.value.code == 2 and message in err, (argv, err)
    assert config.read_bytes() == before and source.read_text(encoding="utf-8") == "Ein Hund.\n"


def test_a_mistyped_key_in_translator_json_is_named_with_the_known_keys(
    model_folder, tmp_path, capsys
):
    import json
    import shutil

    from zoo import cli

    directory, translator = model_folder
    folder = shutil.copytree(directory, tmp_path / "run")
    config = json.loads((folder / "translator.json").read_text(encoding="utf-8"))
    (folder / "translator.json").write_text(json.dumps({**config, "beam_sizee": 1}))
    with pytest.raises(SystemExit) as stopped:
        cli.main(["translate", str(folder), "Hallo."])
    err = capsys.readouterr().err
    assert stopped.value.code == 1, err
    assert "unknown key 'beam_sizee' (did you mean 'beam_size'?)" in err
    assert "'length_penalty'" in err and "'model_file'" in err
    # A key of the caller's own metadata, like no known one, is kept as written.
    (folder / "translator.json").write_text(json.dumps({**config, "notes": "first run"}))
    assert cli.main(["translate", str(folder), "Hallo."]) == 0
    assert capsys.readouterr().out == translator.translate(["Hallo."])[0] + "\n"


def test_a_model_file_outside_the_folder_is_refused(model_folder, tmp_path, capsys):
    import shutil

    from zoo import cli

    directory, _ = model_folder
    folder = shutil.copytree(directory, tmp_path / "run")
    shutil.copytree(directory, tmp_path / "other")  # a loadable model elsewhere
    with pytest.raises(SystemExit) as stopped:
        cli.main(["translate", str(folder), "Hallo.", "--model-file", "../other/model.keras"])
    captured = capsys.readouterr()
    assert stopped.value.code == 1 and captured.out == "", captured.err
    assert (
        "model_file must be a file name inside the folder, such as 'model.keras'; got "
        "'../other/model.keras'" in captured.err
    )
