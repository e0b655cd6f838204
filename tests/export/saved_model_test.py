"""Tests of zoo.export: the Translator's SavedModel, loaded in a process without zoo."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from translator_toy import MIXED, toy_translator

from zoo.export import ATTENTION_KEYS, METADATA_FILE, OUTPUT_KEYS

# Runs in a fresh interpreter that imports only TensorFlow and tensorflow-text.
LOADER = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer ops)

    paths, sentences = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    report = {}
    for kind, path in paths.items():
        m = tf.saved_model.load(path)
        out = {"signatures": sorted(m.signatures)}
        for name in ("translate", "translate_greedy"):
            r = getattr(m, name)(tf.constant(sentences))
            out[name] = {
                "keys": sorted(r),
                "translation": [x.decode() for x in r["translation"].numpy()],
                "score": r["score"].numpy().tolist(),
                "attention": r["attention"].numpy().tolist(),
                "target_lengths": r["target_lengths"].numpy().tolist(),
                "source_lengths": r["source_lengths"].numpy().tolist(),
                "alignment": [x.decode() for x in r["alignment"].numpy()],
            }
        default = m.signatures["serving_default"](sentences=tf.constant(sentences))
        out["serving_default"] = [x.decode() for x in default["translation"].numpy()]
        out["empty_batch"] = m.translate(tf.constant([], tf.string))["translation"].shape.as_list()
        report[kind] = out
    report["zoo_imported"] = "zoo" in sys.modules
    print(json.dumps(report))
    """
)


def _export(root, target_kind):
    translator = toy_translator("luong_local_p_general", target_kind=target_kind, beam_size=2)
    return translator, str(translator.export(root / target_kind, n_best=2))


def _load_in_fresh_process(path):
    done = subprocess.run(
        [sys.executable, "-c", LOADER, json.dumps({"model": path}), json.dumps(MIXED)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def exported(data_dir, tmp_path_factory):
    """(translator, SavedModel path): SentencePiece source, word-level target, beam size 2."""
    return _export(tmp_path_factory.mktemp("serving"), "word")


@pytest.fixture(scope="module")
def loaded(exported):
    return _load_in_fresh_process(exported[1])


def _check_same(translator, report):
    assert report["signatures"] == [
        "serving_default",
        "translate",
        "translate_greedy",
        "translate_n_best",
    ]
    for name, beam_size in (("translate", 2), ("translate_greedy", 1)):
        got = report[name]
        assert got["keys"] == sorted(OUTPUT_KEYS)
        expected = translator.translate_with_attention(MIXED, beam_size=beam_size)
        assert got["translation"] == [t.translation for t in expected]
        assert got["translation"] == translator.translate(MIXED, beam_size=beam_size)
        np.testing.assert_allclose(got["score"], [t.score for t in expected], rtol=1e-5)
        # The in-graph alignment follows zoo.evaluation.hard_alignment's rule exactly.
        assert got["alignment"] == [t.alignment() for t in expected]
        for i, t in enumerate(expected):
            n, m = got["source_lengths"][i], got["target_lengths"][i]
            assert (m, n) == t.weights.shape
            np.testing.assert_allclose(
                np.asarray(got["attention"][i])[:m, :n], t.weights, atol=1e-5
            )
    assert report["serving_default"] == report["translate"]["translation"]
    assert report["translate"]["translation"][1:3] == ["", ""]
    assert report["empty_batch"] == [0]


def test_saved_model_runs_without_zoo(loaded):
    assert loaded["zoo_imported"] is False


def test_saved_model_matches_translator(exported, loaded):
    translator, path = exported
    _check_same(translator, loaded["model"])
    metadata = json.loads(open(f"{path}/{METADATA_FILE}").read())
    assert metadata["beam_size"] == 2
    assert metadata["endpoints"] == {"translate": 2, "translate_greedy": 1, "translate_n_best": 2}
    assert metadata["n_best"] == 2


def test_saved_model_matches_translator_two_sentencepiece_models(data_dir, tmp_path):
    translator, path = _export(tmp_path, "sentencepiece")
    _check_same(translator, _load_in_fresh_process(path)["model"])


def test_export_rejects_bad_beam_size(exported, tmp_path):
    translator, _ = exported
    with pytest.raises(ValueError, match="beam_size"):
        translator.export(tmp_path / "x", beam_size=0)


def test_saved_model_translator_and_cli(exported, capsys):
    """zoo.export.SavedModelTranslator (and `python -m zoo translate SERVING_DIR`) give the
    Translator's output, in order, over sorted batches."""
    from zoo import cli
    from zoo.export import SavedModelTranslator

    translator, path = exported
    serving = SavedModelTranslator(path, batch_size=3)
    assert serving.beam_size == 2
    assert serving.translate(MIXED) == translator.translate(MIXED)
    assert serving.translate(MIXED, beam_size=1) == translator.translate(MIXED, beam_size=1)
    got = serving.translate_with_attention(MIXED[:2])
    expected = translator.translate_with_attention(MIXED[:2])
    for g, e in zip(got, expected, strict=True):
        assert (g.source, g.translation, g.target_tokens) == (
            e.source,
            e.translation,
            e.target_tokens,
        )
        np.testing.assert_allclose(g.weights, e.weights, atol=1e-5)
    with pytest.raises(ValueError, match="exported with beam size 2"):
        serving.translate(MIXED, beam_size=3)
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="batch_size must be an int >= 1"):
            serving.translate(MIXED, batch_size=bad)
    with pytest.raises(ValueError, match="batch_size must be an int >= 1"):
        SavedModelTranslator(path, batch_size=0)
    assert cli.main(["translate", path, MIXED[0], MIXED[1]]) == 0
    assert capsys.readouterr().out.split("\n")[:2] == translator.translate(MIXED[:2])
    # n-best lists through the translate_n_best endpoint, as the Translator gives them.
    got, expected = serving.translate_n_best(MIXED), translator.translate_n_best(MIXED)
    assert [[text for text, _ in e] for e in got] == [[text for text, _ in e] for e in expected]
    np.testing.assert_allclose(
        [[score for _, score in e] for e in got], [[score for _, score in e] for e in expected],
        rtol=1e-5, atol=1e-6,
    )  # fmt: skip
    assert cli.main(["translate", path, MIXED[0], "--n-best", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ||| ")[:2] for line in lines] == [["0", t] for t, _ in expected[0]]


def test_export_without_attention(exported, tmp_path):
    """attention=False: the same translations and scores, no attention output."""
    import tensorflow as tf

    from zoo.export import SavedModelTranslator, load_exported

    translator, _ = exported
    path = str(translator.export(tmp_path / "text", greedy=False, attention=False))
    metadata = json.loads(open(f"{path}/{METADATA_FILE}").read())
    assert metadata["outputs"] == [k for k in OUTPUT_KEYS if k not in ATTENTION_KEYS]
    loaded = load_exported(path)  # keep it alive: its functions use its variables
    result = loaded.translate(tf.constant(MIXED))
    assert sorted(result) == sorted(metadata["outputs"])
    expected = translator.translate_with_attention(MIXED, beam_size=2)
    assert [x.decode() for x in result["translation"].numpy()] == [t.translation for t in expected]
    np.testing.assert_allclose(result["score"].numpy(), [t.score for t in expected], rtol=1e-5)
    serving = SavedModelTranslator(path)
    assert serving.translate(MIXED) == [t.translation for t in expected]
    with pytest.raises(ValueError, match="exported with attention=False"):
        serving.translate_with_attention(MIXED)


def test_an_ensemble_exports_as_one_saved_model(data_dir, tmp_path, capsys):
    """Two models decode together (zoo.models.Ensemble) through the Translator, its
    SavedModel and `python -m zoo translate --ensemble`."""
    from zoo import cli
    from zoo.export import SavedModelTranslator
    from zoo.models import Ensemble
    from zoo.translator import Translator

    first = toy_translator("luong_global_general", beam_size=2, seed=1)
    second = toy_translator("bahdanau_rnnsearch", beam_size=2, seed=2)
    ensemble = Translator(
        Ensemble([first.model, second.model]),
        first.source_tokenizer,
        first.target_tokenizer,
        beam_size=2,
    )
    expected = ensemble.translate(MIXED)
    path = ensemble.export(tmp_path / "serving", greedy=False)
    assert SavedModelTranslator(path).translate(MIXED) == expected
    first.save(tmp_path / "a", serving=False)
    second.save(tmp_path / "b", serving=False)
    argv = ["translate", str(tmp_path / "a"), *MIXED[:3], "--ensemble", str(tmp_path / "b")]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.split("\n")[:3] == expected[:3]


def test_sample_endpoint_is_seeded_and_top_k_1_is_greedy(exported, tmp_path):
    from zoo.export import SavedModelTranslator

    translator, _ = exported
    path = translator.export(tmp_path / "sampling", greedy=False, sampling={"top_k": 1})
    served = SavedModelTranslator(path, batch_size=3)
    assert served.metadata["sampling"] == {"top_k": 1}
    assert served.sample(MIXED, seed=5) == translator.translate(MIXED, beam_size=1)
    free = SavedModelTranslator(translator.export(tmp_path / "free", greedy=False, sampling={}))
    first = free.sample(MIXED, seed=1)
    assert free.sample(MIXED, seed=1) == first and first[1:3] == ["", ""]
    with pytest.raises(ValueError, match="sampling must be a dict"):
        translator.export(tmp_path / "bad", sampling={"beam": 2})
    plain = SavedModelTranslator(translator.export(tmp_path / "plain", greedy=False))
    with pytest.raises(ValueError, match="no sample endpoint"):
        plain.sample(MIXED)
