"""recipes/tune.py: its command line (the search itself is tested in tests/tuning)."""

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


def test_defaults_match_the_help(tune):
    parser = tune["parser"]()
    args = parser.parse_args([])
    text = parser.format_help()
    assert (args.max_trials, args.epochs, args.eval_limit, args.batch_size) == (10, 1, 1000, 64)
    for phrase in ("(default 10)", "Default 1.", "(default 1000)", "(64)", "(default 50)"):
        assert phrase in " ".join(text.split()), phrase
    assert "--epochs 2 \\" in tune["__doc__"]  # the docstring's line continuation is kept
