"""The shipped translators of saved_models/: each model card agrees with its files (hashes,
parameter count, settings, size, stored precision), the files translate the card's examples
to its recorded translations, by name from any directory; the slow test reproduces the
card's test figures with `python -m zoo evaluate NAME`."""

import json
import os
import subprocess
import sys
import zipfile

import h5py
import pytest

from zoo import hub
from zoo.constants import CARD_FILE, CONFIG_FILE, MODEL_FILE, RUN_FILE
from zoo.translator import Translator
from zoo.translator.output_folder import load_model_file

SHIPPED = hub.shipped_translators()
MIB = 2**20
FOLDER_BUDGET, TOTAL_BUDGET = 25 * MIB, 50 * MIB
pytestmark = pytest.mark.skipif(not SHIPPED, reason="no shipped translators in saved_models/")


def card(name):
    """The facts of a model card: its front matter (JSON, which is YAML)."""
    text = (hub.SAVED_MODELS / name / CARD_FILE).read_text(encoding="utf-8")
    _, front, _ = text.split("---\n", 2)
    return json.loads(front)


def _json(name, file):
    return json.loads((hub.SAVED_MODELS / name / file).read_text(encoding="utf-8"))


def test_the_shipped_folders_keep_to_their_size_budget():
    sizes = {
        name: sum(p.stat().st_size for p in (hub.SAVED_MODELS / name).rglob("*") if p.is_file())
        for name in SHIPPED
    }
    assert all(size <= FOLDER_BUDGET for size in sizes.values()), sizes
    assert sum(sizes.values()) <= TOTAL_BUDGET


@pytest.mark.parametrize("name", SHIPPED)
def test_the_card_agrees_with_the_files(name):
    folder = hub.SAVED_MODELS / name
    hub.verify_checksums(folder)  # every file the checksums list, as recorded
    listed = set(hub.read_checksums(folder))
    assert listed == set(hub.layout_files(folder)), "a file outside the hub layout"
    front = card(name)
    facts = front["zoo"]
    for key in ("language", "license", "datasets", "metrics", "library_name", "model-index"):
        assert front[key], key
    model = load_model_file(folder / MODEL_FILE)
    assert model.count_params() == facts["parameters"]
    config, run = _json(name, CONFIG_FILE), _json(name, RUN_FILE)
    assert config["beam_size"] == facts["beam_size"] and config["model_file"] == MODEL_FILE
    assert run["seed"] == facts["seed"] and run["max_minutes"] is None  # trained to its end
    assert facts["command"] == (
        f"python recipes/{run['recipe']}.py --max-minutes 0 --seed {run['seed']}"
    )
    assert facts["seed"] == max(facts["seeds"], key=lambda s: s["val_bleu"])["seed"]
    with zipfile.ZipFile(folder / MODEL_FILE) as archive, archive.open("model.weights.h5") as f:
        with h5py.File(f, "r") as weights:
            stored = set()
            weights.visititems(
                lambda _, item: stored.add(str(item.dtype)) if hasattr(item, "dtype") else None
            )
    assert stored == {facts["weights_dtype"]}
    test = facts["splits"]["test"]
    metrics = front["model-index"][0]["results"][0]["metrics"]
    assert metrics[0]["value"] == facts["scores"][test]["beam"]["bleu"]


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_files_translate_the_cards_examples(name):
    examples = card(name)["zoo"]["examples"]
    translator = Translator.from_directory(name)
    translations = translator.translate([e["source"] for e in examples])
    assert translations == [e["translation"] for e in examples]


def test_a_shipped_translator_translates_by_name_from_any_directory(tmp_path):
    name = SHIPPED[0]
    example = card(name)["zoo"]["examples"][0]
    command = [sys.executable, "-m", "zoo", "translate", name, example["source"]]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == example["translation"]
    listed = subprocess.run(
        [sys.executable, "-m", "zoo", "list"], capture_output=True, text=True, cwd=tmp_path
    )
    assert [line.split()[0] for line in listed.stdout.splitlines()] == SHIPPED


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("search", ["beam", "greedy"])
def test_evaluate_reproduces_the_cards_test_figures(name, search, tmp_path):
    facts = card(name)["zoo"]
    output = tmp_path / "scores.json"
    command = [sys.executable, "-m", "zoo", "evaluate", name, "--output", str(output)]
    command += ["--beam-size", "1"] if search == "greedy" else []
    subprocess.run(command, check=True, cwd=tmp_path, timeout=1200, env=dict(os.environ))
    scores = json.loads(output.read_text())
    recorded = facts["scores"][facts["splits"]["test"]][search]
    assert (round(scores["bleu"], 2), round(scores["chrf"], 2)) == (
        recorded["bleu"],
        recorded["chrf"],
    )
