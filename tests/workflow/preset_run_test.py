"""`python -m zoo train PRESET`: the preset trains through the recipes' workflow, with the
recipe's model (same layers, shapes and initial values at the same seed) and the recipe's
flags; `--config` of a recipe's run trains it again under that recipe."""

import json
import runpy
import sys

import keras
import numpy as np
import pytest
from recipe_runs import RECIPES, TINY, run_recipe

import zoo.workflow
from zoo.cli import main as zoo_main
from zoo.workflow import add_mode_argument, make_parser, resolve_defaults
from zoo.workflow.flags import DEFAULT_SWITCHES, preset_switches, recipe_family, recipe_preset
from zoo.workflow.preset_run import build_model

# recipe, its --mode (None: the recipe has none), the preset it trains
RECIPE_PRESETS = [
    ("bahdanau_rnnencdec", None, "bahdanau_rnnencdec"),
    ("bahdanau_rnnsearch", None, "bahdanau_rnnsearch"),
    ("luong_base", None, "luong_base"),
    ("luong_global_dot", None, "luong_global_dot"),
    ("luong_global_general", None, "luong_global_general"),
    ("luong_global_concat", None, "luong_global_concat"),
    ("luong_global_location", None, "luong_global_location"),
    ("luong_local_dot", "predictive", "luong_local_p_dot"),
    ("luong_local_general", "predictive", "luong_local_p_general"),
    ("luong_local_general", "monotonic", "luong_local_m_general"),
]


def recipe_help(recipe, capsys):
    """The option strings of `python recipes/<recipe>.py --help`."""
    argv = sys.argv
    sys.argv = [str(RECIPES / f"{recipe}.py"), "--help"]
    try:
        with pytest.raises(SystemExit):
            runpy.run_path(str(RECIPES / f"{recipe}.py"), run_name="__main__")
    finally:
        sys.argv = argv
    return options(capsys.readouterr().out)


def options(help_text):
    """The option strings of argparse's option lines (not the description's prose)."""
    found = set()
    for line in help_text.splitlines():
        if line.startswith("  -"):
            found |= {w.strip(",") for w in line.split() if w.startswith("--")}
    return found


@pytest.mark.parametrize("recipe, mode, preset", RECIPE_PRESETS)
def test_the_preset_builds_the_recipes_model_with_its_initial_values(recipe, mode, preset):
    assert recipe_preset(recipe, mode) == preset
    recipe_module = runpy.run_path(str(RECIPES / f"{recipe}.py"))  # its build_model only
    parser = make_parser(recipe, "bahdanau" if recipe.startswith("bahdanau") else "luong")
    if mode:
        add_mode_argument(parser)
    args = parser.parse_args(["--size", "tiny", *(["--mode", mode] if mode else [])])
    resolve_defaults(args)
    keras.utils.set_random_seed(3)
    ours = build_model(args, 40, 30)
    keras.utils.set_random_seed(3)
    theirs = recipe_module["build_model"](args, 40, 30)
    assert ours.name == theirs.name == preset
    assert [w.path for w in ours.weights] == [w.path for w in theirs.weights]
    for layer in ("encoder", "decoder"):  # also what makes no weights: dropout, feeding
        assert ours.get_layer(layer).get_config() == theirs.get_layer(layer).get_config()
    for mine, recipes in zip(ours.weights, theirs.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(recipes), err_msg=mine.path)


@pytest.mark.parametrize("recipe", sorted({r for r, _, _ in RECIPE_PRESETS}))
def test_zoo_train_takes_the_recipes_flags(recipe, capsys):
    preset = recipe_preset(recipe, "predictive")
    with pytest.raises(SystemExit) as exit_:
        zoo_main(["train", preset, "--help"])
    assert exit_.value.code == 0
    help_text = capsys.readouterr().out
    assert help_text.startswith(f"usage: python -m zoo train {preset} ")
    theirs = recipe_help(recipe, capsys)
    assert {"--data", "--epochs", "--dropout"} <= theirs  # the option lines were read
    assert options(help_text) == theirs - {"--mode"}  # the preset fixes local-p or local-m


@pytest.mark.parametrize("recipe", sorted({r for r, _, _ in RECIPE_PRESETS}))
def test_the_presets_switches_are_those_its_recipe_passes(recipe, monkeypatch):
    calls = []
    monkeypatch.setattr(zoo.workflow, "main", lambda *args, **kwargs: calls.append(kwargs))
    runpy.run_path(str(RECIPES / f"{recipe}.py"), run_name="__main__")
    passed = calls[0].get("switches") or DEFAULT_SWITCHES[recipe_family(recipe)]
    assert tuple(passed) == preset_switches(recipe_preset(recipe))


def test_unknown_preset_and_no_preset_are_usage_errors(capsys):
    assert zoo_main(["train", "luong_local_general"]) == 2  # a recipe, not a preset
    error = capsys.readouterr().err
    assert "unknown preset 'luong_local_general'" in error and "luong_local_p_general" in error
    assert zoo_main(["train", "--epochs", "3"]) == 2
    assert "name a preset" in capsys.readouterr().err
    assert zoo_main(["train", "--config", "/nonexistent/run.json"]) == 2
    assert "/nonexistent" in capsys.readouterr().err
    assert zoo_main(["train", "--help"]) == 0
    assert "Presets: bahdanau_rnnencdec" in capsys.readouterr().out


def test_a_preset_trains_and_a_recipes_run_trains_again_from_its_config(tmp_path, tiny_corpus):
    recipe_run = tmp_path / "recipe"
    metrics = run_recipe(
        recipe_run, "--data", tiny_corpus, "--mode", "monotonic", name="luong_local_general"
    )
    assert metrics["recipe"] == "luong_local_general"

    again = tmp_path / "again"
    status = zoo_main(["train", "--config", str(tmp_path / "recipe"), "--out", str(again)])
    assert status == 0
    recorded = json.loads((tmp_path / "recipe" / "run.json").read_text())
    rerun = json.loads((again / "run.json").read_text())
    assert rerun["recipe"] == "luong_local_general" and rerun["mode"] == "monotonic"
    assert keras.models.load_model(again / "model.keras").name == "luong_local_m_general"
    different = {k for k in recorded if k != "out" and recorded[k] != rerun.get(k)}
    assert different <= {"config", "peak_memory_mib"}, different  # the settings are equal

    preset_out = tmp_path / "preset"
    status = zoo_main(
        ["train", "luong_global_dot", *TINY, "--data", tiny_corpus, "--out", str(preset_out)]
    )
    assert status == 0
    metrics = json.loads((preset_out / "metrics.json").read_text())
    assert metrics["recipe"] == "luong_global_dot" and metrics["steps"] == 2
    assert keras.models.load_model(preset_out / "model.keras").name == "luong_global_dot"
