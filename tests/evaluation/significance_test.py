"""Paired significance tests (zoo.evaluation.significance) against sacreBLEU's own command
line on the same files, and their invariants."""

import os

import pytest
from sacrebleu_command import sacrebleu_paired, write_files

from zoo.evaluation import corpus_scores
from zoo.evaluation.significance import (
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    SIGNIFICANCE_DEFAULTS,
    compare_systems,
)

SAMPLES = {"bs": 300, "ar": 400}
SEED = 11


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_files(tmp_path_factory.mktemp("significance"))


def _systems(files, names=("a", "b", "c")):
    return {str(files[n][0]): files[n][1] for n in names}


def assert_agrees(result, expected):
    """`compare_systems`' numbers equal those sacreBLEU prints (6 decimals, p-values 4)."""
    assert [s["name"] for s in result["systems"]] == list(expected)
    for record in result["systems"]:
        for metric in result["metrics"]:
            ours, theirs = record[metric], expected[record["name"]][metric]
            assert ours["score"] == pytest.approx(theirs["score"], abs=1e-6)
            if theirs["mean"] is not None:
                assert ours["mean"] == pytest.approx(theirs["mean"], abs=1e-6)
                assert ours["ci"] == pytest.approx(theirs["ci"], abs=1e-6)
            if record["baseline"]:
                assert ours["p_value"] is None and theirs["p_value"] is None
            else:
                assert ours["p_value"] == pytest.approx(theirs["p_value"], abs=5e-5)
                assert ours["significant"] == (ours["p_value"] < 0.05)


@pytest.mark.parametrize("method", ["bs", "ar"])
def test_agrees_with_the_sacrebleu_command_line(files, method):
    systems = _systems(files)
    result = compare_systems(
        files["ref"][1], systems, method=method, n_samples=SAMPLES[method], seed=SEED
    )
    expected = sacrebleu_paired(files["ref"][0], list(systems), method, SAMPLES[method], SEED)
    assert_agrees(result, expected)
    assert result["n_samples"] == SAMPLES[method] and result["seed"] == SEED
    assert result["sentences"] == len(files["ref"][1])
    assert f"seed:{SEED}" in result["signatures"]["bleu"]
    assert f"{method}:{SAMPLES[method]}" in result["signatures"]["chrf"]
    # The data tell the systems apart as built: b clearly better than a, c hardly different.
    b, c = result["systems"][1], result["systems"][2]
    assert b["bleu"]["significant"] and b["bleu"]["score"] > result["systems"][0]["bleu"]["score"]
    assert not c["bleu"]["significant"]


def test_scores_are_those_of_corpus_scores(files):
    result = compare_systems(files["ref"][1], _systems(files, "ab"), n_samples=10)
    for record, name in zip(result["systems"], "ab", strict=True):
        scores = corpus_scores(files[name][1], files["ref"][1])
        assert record["bleu"]["score"] == scores["bleu"]
        assert record["chrf"]["score"] == pytest.approx(scores["chrf"])


@pytest.mark.parametrize("method", ["bs", "ar"])
def test_the_p_value_is_symmetric_in_the_two_systems(files, method):
    forward = compare_systems(files["ref"][1], _systems(files, "ab"), method=method, n_samples=200)
    backward = compare_systems(files["ref"][1], _systems(files, "ba"), method=method, n_samples=200)
    for metric in ("bleu", "chrf"):
        assert forward["systems"][1][metric]["p_value"] == backward["systems"][1][metric]["p_value"]


def test_identical_translations_are_not_significant(files):
    systems = {"a": files["a"][1], "a again": list(files["a"][1])}
    for method in ("bs", "ar"):
        result = compare_systems(files["ref"][1], systems, method=method, n_samples=50)
        again = result["systems"][1]
        assert again["bleu"]["p_value"] == 1.0 and again["bleu"]["significant"] is False
        assert again["bleu"]["score"] == result["systems"][0]["bleu"]["score"]


def test_seeds_repeat_and_the_environment_is_left_as_found(files, monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", "3")
    refs, systems = files["ref"][1], _systems(files, "ab")
    first, second = (compare_systems(refs, systems, n_samples=100, seed=5) for _ in range(2))
    assert first == second
    other = compare_systems(refs, systems, n_samples=100, seed=6)
    assert other["systems"][1]["bleu"]["mean"] != first["systems"][1]["bleu"]["mean"]
    unseeded = compare_systems(refs, systems, metrics=("bleu",), n_samples=20, seed=None)
    assert unseeded["seed"] is None and "seed:none" in unseeded["signatures"]["bleu"]
    assert os.environ["SACREBLEU_SEED"] == "3"


def test_defaults_are_sacrebleus(files, monkeypatch):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    named = [("a", files["a"][1][:5]), ("b", files["b"][1][:5])]
    for method in ("bs", "ar"):
        test = PairedTest(named, {"bleu": BLEU()}, [files["ref"][1][:5]], test_type=method)
        assert test.n_samples == DEFAULT_SAMPLES[method]
        signatures, _ = test()
        assert f"seed:{DEFAULT_SEED}|" in str(signatures["BLEU"])
    assert SIGNIFICANCE_DEFAULTS["method"] == "bs" and SIGNIFICANCE_DEFAULTS["level"] == 0.05
    result = compare_systems(files["ref"][1][:5], dict(named), metrics=("bleu",))
    assert result["n_samples"] == DEFAULT_SAMPLES["bs"] and result["seed"] == DEFAULT_SEED


@pytest.mark.parametrize(
    "change, message",
    [
        ({"systems": {"a": ["x"] * 3}}, "at least two named systems"),
        ({"systems": {"a": ["x"] * 3, "b": ["x"] * 2}}, "'b' has 2 translations for 3"),
        ({"references": []}, "references is empty"),
        ({"references": "a b c"}, "references must be a list of strings"),
        ({"systems": {"a": ["x"] * 3, "b": [1, 2, 3]}}, "'b' must be a list of strings"),
        ({"metrics": ("bleu", "ter")}, "metrics must be distinct names among bleu, chrf"),
        ({"method": "paired"}, "method must be one of bs, ar; received 'paired'"),
        ({"seed": 0}, "seed must be an int >= 1 or None"),
        ({"n_samples": 0}, "n_samples must be an int >= 1"),
        ({"n_samples": 2**30}, "n_samples=1073741824 for 3 sentences would draw 3,221,225,472"),
        ({"level": 1.5}, "level must be in"),
    ],
)
def test_bad_input_is_named(change, message):
    arguments = {"references": ["x y", "y z", "z"], "systems": {"a": ["x"] * 3, "b": ["y"] * 3}}
    arguments.update(change)
    with pytest.raises(ValueError, match=message):
        compare_systems(**arguments)


def _paper_table_rows(tmp_path, monkeypatch, limit=80):
    """bench/paper_table.py, and three recorded rows scored on the first `limit` test
    sentences, each with made-up beam translations in its run folder under `tmp_path`
    (luong_global_general's file holds another run's: its recorded BLEU is off by 1)."""
    import json
    import random
    from pathlib import Path

    from zoo.data import load_corpus

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "bench"))
    import paper_table

    references = load_corpus("multi30k", "de", "en", "test2016").target[:limit]
    rng = random.Random(0)
    rows = {
        "luong_local_p_general": 0.4,
        "luong_local_p_general_feed": 0.1,
        "luong_global_general": 0.1,
    }
    results, translations = {}, {}
    for label, rate in rows.items():
        metrics = json.loads(paper_table.recorded_path(label, 12).read_text())
        lines = [" ".join(w for w in r.split() if rng.random() > rate) for r in references]
        path = paper_table.translations_path(tmp_path, label, metrics)
        path.parent.mkdir()
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        metrics["args"]["eval_limit"] = limit
        metrics["bleu"] = corpus_scores(lines, references)["bleu"]
        results[label], translations[label] = metrics, lines
    results["luong_global_general"]["bleu"] += 1.0
    return paper_table, results, translations, references


def _feed_verdict(references, translations):
    """The table line of the input-feeding pair, from compare_systems itself."""
    baseline, row = "luong_local_p_general", "luong_local_p_general_feed"
    systems = {baseline: translations[baseline], row: translations[row]}
    expected = compare_systems(references, systems, metrics=("bleu",))["systems"]
    first, second = expected[0]["bleu"], expected[1]["bleu"]
    assert second["significant"]
    return (
        f"| {baseline} | {row} | {first['score']:.2f} → {second['score']:.2f} | "
        f"{second['score'] - first['score']:+.2f} | {second['p_value']:.4f} | yes |"
    )


def test_the_paper_table_tests_the_pairs_whose_translations_it_finds(
    data_dir, tmp_path, monkeypatch
):
    """bench/paper_table.py: a pair of rows whose run folders hold the recorded runs' beam
    translations gets compare_systems' verdict; a row without them (or with another run's)
    is named, with how to produce them."""
    paper_table, results, translations, references = _paper_table_rows(tmp_path, monkeypatch)
    text = paper_table.significance(results, tmp_path)
    assert _feed_verdict(references, translations) in text
    assert "Not tested (1 of 2 comparisons)" in text
    assert "(or are another run's) for luong_global_general." in text
    assert f"--hypotheses {tmp_path}/ROW/translations.test2016.beam.txt`" in text
    assert f"--table-only --out {tmp_path}`" in text
    assert paper_table.table(results, text).endswith("\n\n" + text)
    nothing = paper_table.significance(results, tmp_path / "elsewhere")
    assert "Not tested (2 of 2 comparisons)" in nothing and "| yes |" not in nothing


def test_the_paper_table_keeps_translations_and_verdicts_while_their_rows_stay_the_same(
    data_dir, tmp_path, monkeypatch
):
    """The recorded runs' translations are kept (gzip) in the recorded folder and stand in for
    the run folders once those are gone; a verdict recorded with them stands in for both; the
    verdict falls when one of its rows is another run (its recorded BLEU changed)."""
    import gzip
    import json

    paper_table, results, translations, references = _paper_table_rows(tmp_path, monkeypatch)
    baseline, row = "luong_local_p_general", "luong_local_p_general_feed"
    recorded = tmp_path / "recorded"
    record = recorded / paper_table.SIGNIFICANCE_FILE
    line = _feed_verdict(references, translations)
    assert line in paper_table.significance(results, tmp_path, recorded)
    assert [(v["baseline"], v["row"]) for v in json.loads(record.read_text())] == [(baseline, row)]
    kept = {
        label: paper_table.kept_translations_path(recorded, label, m)
        for label, m in results.items()
    }
    assert kept[row].name == f"{row}.translations.test2016.beam.txt.gz"
    for label in (baseline, row):
        assert (
            gzip.decompress(kept[label].read_bytes()).decode().split("\n")[:-1]
            == translations[label]
        )
    assert not kept["luong_global_general"].exists()  # another run's translations: not kept

    elsewhere = tmp_path / "elsewhere"  # no run folders: the kept translations are tested
    record.unlink()
    again = paper_table.significance(results, elsewhere, recorded)
    assert line in again and "Not tested (1 of 2 comparisons)" in again
    assert "(or are another run's) for luong_global_general." in again
    assert f"or their copy `{recorded}/ROW.translations.test2016.beam.txt.gz`" in again

    for label in (baseline, row):  # no translations at all: the recorded verdict stands
        kept[label].unlink()
    again = paper_table.significance(results, elsewhere, recorded)
    assert line in again and "Not tested (1 of 2 comparisons)" in again
    assert f"for luong_global_general, {baseline}." in again
    assert len(json.loads(record.read_text())) == 1

    results[row]["bleu"] += 0.01  # the row was trained again
    retrained = paper_table.significance(results, elsewhere, recorded)
    assert "| yes |" not in retrained and "Not tested (2 of 2 comparisons)" in retrained
    assert json.loads(record.read_text()) == []
