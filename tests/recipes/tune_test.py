"""recipes/tune.py: its command line (the search itself is tested in tests/tuning)."""

import inspect
import runpy
from pathlib import Path

import pytest

TUNE = Path(__file__).resolve().parents[2] / "recipes" / "tune.py"


@pytest.fixture(scope="module")
def tune():
    return runpy.run_path(str(TUNE))  # not as __main__: defines parser() and main()


@pytest.mark.parametrize(
    "flag",
    [
        "--max-trials",
        "--epochs",
        "--steps-per-trial",
        "--train-limit",
        "--eval-limit",
        "--vocab-size",
        "--batch-size",
        "--max-length",
    ],
)
@pytest.mark.parametrize("value", ["0", "-2", "1.5"])
def test_counts_must_be_positive_ints(tune, flag, value, capsys):
    with pytest.raises(SystemExit):
        tune["parser"]().parse_args([flag, value])
    assert f"argument {flag}: expected a positive integer" in capsys.readouterr().err


FLAGS = (  # each flag's dest is the name of a zoo.tuning.tune argument
    "data",
    "tuner",
    "objective",
    "max_trials",
    "epochs",
    "steps_per_trial",
    "size",
    "directory",
    "train_limit",
    "eval_limit",
    "vocab_size",
    "batch_size",
    "max_length",
    "seed",
)


def test_defaults_are_the_librarys_and_the_help_shows_them(tune):
    from zoo.tuning import tune as library_tune

    parser = tune["parser"]()
    args = vars(parser.parse_args([]))
    parameters = inspect.signature(library_tune).parameters
    assert {name: args[name] for name in FLAGS} == {
        name: parameters[name].default for name in FLAGS
    }
    text = " ".join(parser.format_help().split())
    for phrase in (
        f"(default {args['max_trials']})",
        f"Default {args['epochs']}.",
        f"Default: {args['tuner']}.",
        f"Default: {args['objective']}.",
        f"Default: {args['size']}.",
        f"(default {args['directory']})",
        f"(default {args['eval_limit']})",
        f"(default {args['vocab_size']};",
        f"({args['batch_size']})",
        f"(default {args['max_length']})",
        f"({args['seed']})",
    ):
        assert phrase in text, phrase
    assert "--epochs 2 \\" in tune["__doc__"]  # the docstring's line continuation is kept


def test_a_changed_library_default_changes_the_flag_and_its_help(tune, monkeypatch):
    from zoo import tuning

    changed = {"max_trials": 7, "vocab_size": 1234, "batch_size": 96, "directory": "runs/x"}
    monkeypatch.setattr(tuning.tune, "__kwdefaults__", {**tuning.tune.__kwdefaults__, **changed})
    parser = tune["parser"]()
    args = vars(parser.parse_args([]))
    assert {name: args[name] for name in changed} == changed
    text = " ".join(parser.format_help().split())
    for phrase in ("(default 7)", "(default 1234;", "(96)", "(default runs/x)"):
        assert phrase in text, phrase


def test_size_help_shows_the_presets_sizes(tune):
    from zoo.models import SIZES, preset_arguments

    text = " ".join(tune["parser"]().format_help().split())
    for size in SIZES:
        reference = preset_arguments("luong_global_general", size)
        assert f"{size}: {reference['embedding_dim']}/{reference['units']}" in text


def test_the_tuning_guide_states_the_library_defaults():
    from zoo.tuning import tune as library_tune

    parameters = inspect.signature(library_tune).parameters
    guide = Path(__file__).resolve().parents[2] / "docs" / "tuning.md"
    text = " ".join(guide.read_text(encoding="utf-8").split())
    assert f"`--directory` (`{parameters['directory'].default}`)" in text
    assert f"`--objective {parameters['objective'].default}` (default)" in text
    assert f"(`--eval-limit`, {parameters['eval_limit'].default} sentences)" in text


@pytest.mark.parametrize("value", ["-1", str(2**32), "x"])
def test_the_seed_is_one_numpy_takes(tune, value, capsys):
    with pytest.raises(SystemExit):
        tune["parser"]().parse_args(["--seed", value])
    assert "argument --seed: expected an integer in [0, 2**32)" in capsys.readouterr().err


def test_a_data_error_is_one_line_and_status_1(tune, tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("no tab on this line\n", encoding="utf-8")
    argv = ["--data", str(bad), "--source-lang", "en", "--target-lang", "fr", "--quiet"]
    with pytest.raises(SystemExit) as stopped:
        tune["main"]([*argv, "--directory", str(tmp_path / "search")])
    err = capsys.readouterr().err
    assert stopped.value.code == 1 and "Traceback" not in err
    assert err.startswith("recipes/tune.py: error: ") and "bad.tsv" in err, err
    with pytest.raises(ValueError, match="bad.tsv"):  # --debug: the exception itself
        tune["main"]([*argv, "--directory", str(tmp_path / "search2"), "--debug"])
