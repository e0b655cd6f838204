"""A model folder with a missing or damaged file: `python -m zoo translate|evaluate|aer` and
`Translator.from_directory` refuse it with a message naming the file (exit status 1), never
translating with another model file or other search settings without a word."""

import json
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from zoo import cli
from zoo.search.defaults import SEARCH_DEFAULTS
from zoo.search.settings import MAX_LENGTH_OFFSET_LIMIT, MAX_LENGTH_RATIO_LIMIT
from zoo.translator import CONFIG_FILE, MODEL_FILE, Translator


@pytest.fixture
def folder(model_folder, tmp_path):
    """A copy of the output folder that a test may damage."""
    directory = tmp_path / "run"
    shutil.copytree(model_folder[0], directory)
    return directory


def refused(argv, capsys):
    """The message of `python -m zoo ARGV`, which must exit with status 1 and no traceback."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 1, err
    assert "Traceback" not in err
    first = err.splitlines()[0]
    assert first.startswith(f"python -m zoo {argv[0]}: error: ")
    return first


def test_a_missing_translator_json_is_refused_naming_it_and_the_folder(folder, capsys):
    # Without translator.json the folder's delivered model and search settings are unknown:
    # loading model.keras with the library's settings would translate differently in silence.
    (folder / "model.averaged.keras").write_bytes((folder / MODEL_FILE).read_bytes())
    (folder / CONFIG_FILE).unlink()
    for argv in (
        ["translate", str(folder), "Ein Hund."],
        ["translate", str(folder), "Ein Hund.", "--model-file", MODEL_FILE, "--beam-size", "1"],
        ["evaluate", str(folder), "--limit", "2"],
    ):
        message = refused(argv, capsys)
        assert f"{CONFIG_FILE} is missing" in message
        assert f"holds: model.averaged.keras, {MODEL_FILE}, source_tokenizer/" in message
    with pytest.raises(ValueError, match=f"{CONFIG_FILE} is missing"):
        Translator.from_directory(folder)
    # The way out the message names: an empty translator.json takes the library's settings.
    (folder / CONFIG_FILE).write_text("{}")
    assert Translator.from_directory(folder).get_config() == SEARCH_DEFAULTS


@pytest.mark.parametrize(
    "content, message",
    [
        ("[1, 2]", "must hold a JSON object .* it holds a list"),
        ('"beam_size"', "it holds a str"),
        ("{bad", "is not valid JSON"),
        ('{"beam_size": "5"}', "beam_size must be an int >= 1; received '5'"),
        ('{"beam_size": 2.5}', "beam_size must be an int"),
        ('{"length_penalty": -1}', "length_penalty must be a finite float >= 0"),
        ('{"batch_size": 0}', "batch_size must be an int >= 1"),
        (
            '{"max_length_ratio": 1e308}',
            rf"max_length_ratio must be in \[0, {MAX_LENGTH_RATIO_LIMIT:g}\]",
        ),
        (
            json.dumps({"max_length_offset": MAX_LENGTH_OFFSET_LIMIT + 1}),
            rf"max_length_offset must be in \[0, {MAX_LENGTH_OFFSET_LIMIT}\]",
        ),
        ('{"model_file": ["model.keras"]}', "'model_file' must be a file name"),
    ],
)
def test_a_malformed_translator_json_is_refused_naming_the_file(folder, capsys, content, message):
    (folder / CONFIG_FILE).write_bytes(content.encode("utf-8"))
    text = refused(["translate", str(folder), "Ein Hund."], capsys)
    assert str(folder / CONFIG_FILE) in text
    assert re.search(message, text), text
    with pytest.raises(ValueError, match=message):
        Translator.from_directory(folder)


def test_settings_past_the_limits_are_refused_through_the_api_too(model_folder):
    with pytest.raises(ValueError, match=r"max_length_ratio must be in \[0, 16\]"):
        Translator.from_directory(model_folder[0], max_length_ratio=1e308)


def _rewrite_keras(path, change):
    """Rewrites the .keras archive at `path` with `change(config dict)` applied to its
    config.json."""
    original = path.read_bytes()
    source = path.with_suffix(".orig")
    source.write_bytes(original)
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w") as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                change(config)
                data = json.dumps(config).encode("utf-8")
            new.writestr(item, data)
    source.unlink()


def _unknown_class(config):
    config["class_name"] = "NoSuchModel"
    config["module"] = "nowhere"
    config["registered_name"] = "zoo>NoSuchModel"


@pytest.mark.parametrize(
    "damage, cause",
    [
        (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "not a zip archive"),
        (lambda p: p.write_bytes(b""), "not a zip archive, 0 bytes"),
        (lambda p: p.write_text("not a model"), "not a zip archive"),
        (lambda p: _rewrite_keras(p, _unknown_class), "NoSuchModel"),
    ],
    ids=["truncated", "empty", "text", "unknown class"],
)
def test_a_damaged_model_file_is_refused_as_no_valid_keras_file(folder, capsys, damage, cause):
    damage(folder / MODEL_FILE)
    expected = f"{folder / MODEL_FILE} is not a valid .keras file ("
    for name, text in (("s.de", "Ein Hund\n"), ("t.en", "A dog\n"), ("g.txt", "0-0 1-1\n")):
        (folder / name).write_text(text, encoding="utf-8")
    files = ["--source", folder / "s.de", "--target", folder / "t.en", "--gold", folder / "g.txt"]
    for argv in (
        ["translate", str(folder), "Ein Hund."],
        ["aer", str(folder), *map(str, files)],
        ["average", str(folder)],
    ):
        if argv[0] == "average":
            (folder / "checkpoints").mkdir(exist_ok=True)
        message = refused(argv, capsys)
        assert expected in message and cause in message, message
        assert "File not found" not in message


def test_the_real_command_refuses_a_missing_translator_json(folder):
    (folder / CONFIG_FILE).unlink()
    done = subprocess.run(
        [sys.executable, "-m", "zoo", "translate", str(folder), "Ein Hund."],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert f"{CONFIG_FILE} is missing" in done.stderr and "Traceback" not in done.stderr


def test_evaluate_says_which_model_file_and_settings_it_used(folder, capsys):
    config = json.loads((folder / CONFIG_FILE).read_text())
    (folder / "model.averaged.keras").write_bytes((folder / MODEL_FILE).read_bytes())
    (folder / CONFIG_FILE).write_text(
        json.dumps({**config, "model_file": "model.averaged.keras", "length_penalty": 0.5})
    )
    output = folder / "scores.json"
    assert cli.main(["evaluate", str(folder), "--limit", "2", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "; model.averaged.keras, beam size 2, length penalty 0.5)" in out
    result = json.loads(output.read_text())
    assert (result["model_file"], result["length_penalty"]) == ("model.averaged.keras", 0.5)
