"""zoo.tuning.runner: a real search on a slice of Multi30k, its table, plot, export and resume.

One search (tiny sizes, a few hundred pairs, 3 steps per trial) is shared by the tests of
this file: it runs 2 trials, then is resumed in the same directory with max_trials=3, which
must run exactly one new trial.
"""

import csv
import json
import os

import keras
import pytest

import zoo  # noqa: F401  (registers zoo's layers for load_model)
from zoo import tuning

SEARCH = dict(
    tuner="random",
    objective="loss",
    epochs=1,
    steps_per_trial=3,
    size="tiny",
    # One LSTM layer and Adam keep each trial short; the rest of the space is searched.
    fixed={"num_layers": 1, "optimizer": "adam"},
    train_limit=300,
    eval_limit=24,
    vocab_size=200,
    batch_size=32,
    max_length=30,
    seed=3,
    verbose=0,
)


def _trial_dirs(directory):
    return sorted(p.name for p in (directory / "search").iterdir() if p.name.startswith("trial_"))


@pytest.fixture(scope="module")
def search(data_dir, tmp_path_factory):
    directory = tmp_path_factory.mktemp("tune")
    first = tuning.tune(
        "multi30k", "de", "en", max_trials=2, directory=directory, export=False, **SEARCH
    )
    first_trials = _trial_dirs(directory)
    first_ids = [row["trial_id"] for row in first["rows"]]
    second = tuning.tune("multi30k", "de", "en", max_trials=3, directory=directory, **SEARCH)
    return {
        "directory": directory,
        "first_ids": first_ids,
        "first_trials": first_trials,
        "result": second,
    }


def test_resumed_search_repeats_no_trial(search):
    assert len(search["first_ids"]) == 2 and len(search["first_trials"]) == 2
    rows = search["result"]["rows"]
    ids = [row["trial_id"] for row in rows]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert set(search["first_ids"]) < set(ids)
    trials = _trial_dirs(search["directory"])
    assert len(trials) == 3 and set(search["first_trials"]) < set(trials)
    # The oracle reloaded the first run's scores instead of training those trials again.
    oracle = json.loads((search["directory"] / "search" / "oracle.json").read_text())
    assert len(oracle["end_order"]) == 3


def test_trials_differ_in_hyperparameters(search):
    rows = search["result"]["rows"]
    names = [n for n in tuning.DIMENSIONS if n in rows[0]]
    configurations = {tuple(str(row[n]) for n in names) for row in rows}
    assert len(configurations) == 3
    for row in rows:  # fixed dimensions stay fixed
        assert row["num_layers"] in (1, "") and row["optimizer"] == "adam"


def test_csv_is_sorted_by_objective(search):
    with open(search["result"]["csv"], newline="") as f:
        table = list(csv.DictReader(f))
    assert [r["trial_id"] for r in table] == [r["trial_id"] for r in search["result"]["rows"]]
    objectives = [float(r["objective"]) for r in table]
    assert objectives == sorted(objectives)
    assert all(float(r["objective"]) == pytest.approx(float(r["val_loss"])) for r in table)
    assert {"trial_id", "objective", "attention", "units", "embedding_dim"} <= set(table[0])


def test_plot_is_written(search):
    with open(search["result"]["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.filterwarnings("ignore:Skipping variable loading")
def test_best_model_loads_and_matches_the_best_trial(search):
    best = search["result"]["best"]
    directory = os.path.dirname(best)
    model = keras.models.load_model(best)
    info = json.loads(open(os.path.join(directory, "hyperparameters.json")).read())
    top = search["result"]["rows"][0]
    assert info["trial_id"] == top["trial_id"]
    assert info["hyperparameters"]["attention"] == top["attention"]
    assert model.get_layer("decoder").units == top["units"]
    for side in ("source_tokenizer", "target_tokenizer"):
        tokenizer = zoo.text.load_tokenizer(os.path.join(directory, side))
        assert tokenizer.vocab_size == 200
    # Same weights as the tuner's checkpoint of that trial.
    trained = search["result"]["tuner"].load_model(
        search["result"]["tuner"].oracle.get_trial(top["trial_id"])
    )
    for a, b in zip(model.get_weights(), trained.get_weights(), strict=True):
        assert (a == b).all()


def test_rerun_with_other_settings_is_refused(search):
    settings = dict(SEARCH, seed=4)
    with pytest.raises(ValueError, match="seed: 3 -> 4"):
        tuning.tune("multi30k", "de", "en", max_trials=3, directory=search["directory"], **settings)


def test_languages_left_out_are_the_corpus_default_pair(search):
    """tune(data) alone takes data's own default pair (Anki: en -> es), not Multi30k's."""
    with pytest.raises(ValueError, match="source_lang: 'de' -> 'en'; target_lang: 'en' -> 'es'"):
        tuning.tune("anki-spa-eng", max_trials=3, directory=search["directory"], **SEARCH)


def test_a_corpus_without_a_default_pair_asks_for_the_languages(tmp_path):
    with pytest.raises(ValueError, match=r"tune\(data='pairs.tsv'\) needs source_lang and"):
        tuning.tune("pairs.tsv", directory=tmp_path, **SEARCH)
    assert list(tmp_path.iterdir()) == []
