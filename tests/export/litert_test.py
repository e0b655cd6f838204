"""Tests of zoo.export.litert: the .tflite translator (model and search converted to TFLite
builtins) against the Translator, its quantized files, and the files beside it."""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf
from translator_toy import MIXED, toy_translator

from zoo.constants import END_ID
from zoo.export.litert import export_litert, sidecar
from zoo.export.litert_translator import LiteRTTranslator
from zoo.models import build, presets
from zoo.translator import Translator

SENTENCES = [
    "Ein Hund rennt.",
    "Zwei Männer lachen im Park.",
    "Eine Frau sitzt auf einer Bank und liest ein Buch.",
    "Kinder.",
    "Ein kleiner Junge spielt mit einem roten Ball auf der grünen Wiese neben dem Haus.",
    *MIXED,
]


def writing(model):
    """`model` with an output layer of unit normal weights and no bias (as
    `export_toy.writing_toy`): greedy and beam search then write outputs of many lengths
    (an untrained model's end at once or run to the length limit)."""
    decoder = model.get_layer("decoder")
    kernel, bias = decoder.weights[-2:]
    assert kernel.shape[-1] == bias.shape[0] == decoder.vocab_size, (kernel.path, bias.path)
    rng = np.random.default_rng(0)
    kernel.assign(rng.normal(size=kernel.shape).astype("float32"))
    bias.assign(np.zeros(bias.shape, "float32"))
    return model


def translator_ids(translator, beam_size, sentences):
    """(source rows, target rows without END) of the Translator's graph, one per sentence."""
    out = translator.translate_function(beam_size, attention=False)(tf.constant(sentences))
    sources = [
        row[:n].tolist()
        for row, n in zip(out["source_ids"].numpy(), out["source_lengths"].numpy(), strict=True)
    ]
    targets = []
    for row, n in zip(out["target_ids"].numpy(), out["target_lengths"].numpy(), strict=True):
        kept = row[:n].tolist()
        targets.append(kept[:-1] if kept and kept[-1] == END_ID else kept)
    return sources, targets


@pytest.fixture(scope="module")
def translators():
    made = {}
    for preset in ("bahdanau_rnnsearch", "luong_local_p_general"):
        translator = toy_translator(preset, beam_size=3, length_penalty=2.0)
        writing(translator.model)
        made[preset] = translator
    return made


CASES = [
    ("bahdanau_rnnsearch", "greedy", 1),
    ("bahdanau_rnnsearch", "beam", 3),
    ("luong_local_p_general", "greedy", 2),
    pytest.param("luong_local_p_general", "beam", 1, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("preset,search,batch_size", CASES)
def test_float32_file_gives_the_translators_ids(translators, tmp_path, preset, search, batch_size):
    translator = translators[preset]
    beam_size = 1 if search == "greedy" else 3
    path = export_litert(
        translator, tmp_path / "model.tflite", search=search, batch_size=batch_size
    )
    sources, expected = translator_ids(translator, beam_size, SENTENCES)
    lite = LiteRTTranslator(path)
    assert lite.translate_ids(sources) == expected
    lengths = {len(ids) for ids in expected}
    assert len(lengths) > 2 and max(lengths) > 3  # real translations of several lengths
    # Strings in, strings out through the tokenizers saved beside the file.
    assert lite.translate(SENTENCES) == translator.translate(SENTENCES, beam_size=beam_size)
    metadata = json.loads(open(sidecar(path, "json"), encoding="utf-8").read())
    assert metadata["search"] == search and metadata["beam_size"] == beam_size
    assert metadata["batch_size"] == batch_size and metadata["quantize"] == "none"
    if search == "beam":  # greedy search too, in the same file
        assert metadata["signatures"] == {
            "serving_default": {"beam_size": 3, "batch_size": batch_size},
            "greedy": {"beam_size": 1, "batch_size": batch_size},
        }
        assert (
            lite.translate_ids(sources, beam_size=1) == translator_ids(translator, 1, SENTENCES)[1]
        )
    else:
        assert metadata["signatures"] == {
            "serving_default": {"beam_size": 1, "batch_size": batch_size}
        }
    with pytest.raises(ValueError, match="beam_size=4"):
        lite.translate(SENTENCES, beam_size=4)


def test_a_file_of_several_batch_sizes_runs_each_call_in_the_smallest(translators, tmp_path):
    translator = translators["bahdanau_rnnsearch"]
    path = export_litert(translator, tmp_path / "m.tflite", search="beam", batch_size=(1, 4))
    lite = LiteRTTranslator(path)
    assert lite.metadata["signatures"] == {
        "serving_default": {"beam_size": 3, "batch_size": 1},
        "greedy": {"beam_size": 1, "batch_size": 1},
        "serving_default_batch4": {"beam_size": 3, "batch_size": 4},
        "greedy_batch4": {"beam_size": 1, "batch_size": 4},
    }
    assert lite.batch_size == 4
    assert [lite.runner(3, rows)[0] for rows in (1, 2, 4, 9)] == [1, 4, 4, 4]
    for beam_size in (1, 3):
        sources, expected = translator_ids(translator, beam_size, SENTENCES)
        assert lite.translate_ids(sources, beam_size) == expected  # batches of 4, then 1
        alone = [lite.translate_ids([row], beam_size)[0] for row in sources]
        assert alone == expected
    with pytest.raises(ValueError, match="at most 1024 .*; received 2000"):
        export_litert(translator, tmp_path / "x.tflite", batch_size=(1, 2000))
    with pytest.raises(ValueError, match=r"received \(\)"):
        export_litert(translator, tmp_path / "x.tflite", batch_size=())


def test_a_file_of_format_1_is_read(translators, tmp_path):
    translator = translators["bahdanau_rnnsearch"]
    path = export_litert(translator, tmp_path / "m.tflite", search="beam", batch_size=2)
    metadata_path = sidecar(path, "json")
    metadata = json.loads(open(metadata_path, encoding="utf-8").read())
    metadata.update(format_version=1, signatures={"serving_default": 3, "greedy": 1})
    open(metadata_path, "w", encoding="utf-8").write(json.dumps(metadata))
    sources, expected = translator_ids(translator, 1, SENTENCES[:3])
    lite = LiteRTTranslator(path)
    assert lite.runner(1, 1)[0] == 2
    assert lite.translate_ids(sources, 1) == expected


def test_quantized_files_are_smaller_and_translate(tmp_path):
    # Wide layers, so that the weights dominate the file (the graph is about 0.2 MB).
    base = toy_translator("bahdanau_rnnsearch")
    keras.utils.set_random_seed(0)
    model = build(
        "bahdanau_rnnsearch",
        size="tiny",
        source_vocab_size=base.source_tokenizer.vocab_size,
        target_vocab_size=base.target_tokenizer.vocab_size,
        embedding_dim=128,
        encoder_units=256,
        units=256,
    )
    writing(model)
    translator = Translator(model, base.source_tokenizer, base.target_tokenizer, length_penalty=0)
    sizes, outputs = {}, {}
    for quantize in ("none", "float16", "int8"):
        path = export_litert(translator, tmp_path / f"{quantize}.tflite", quantize=quantize)
        sizes[quantize] = os.path.getsize(path)
        outputs[quantize] = LiteRTTranslator(path).translate(SENTENCES[:4])
    both = export_litert(translator, tmp_path / "beam.tflite", search="beam", beam_size=2)
    assert os.path.getsize(both) <= 1.15 * sizes["none"]  # greedy and beam: weights once
    assert sizes["float16"] <= 0.55 * sizes["none"], sizes
    assert sizes["int8"] <= 0.30 * sizes["none"], sizes
    assert outputs["none"] == translator.translate(SENTENCES[:4], beam_size=1)
    # float16 weights compute in float32: the output layer's wide margins survive the
    # rounding; int8's on-the-fly quantized activations may change a token or two.
    assert outputs["float16"] == outputs["none"]
    same = sum(a == b for a, b in zip(outputs["int8"], outputs["none"], strict=True))
    assert same >= 3, outputs


RUNNER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    path, rows = sys.argv[1], json.loads(sys.argv[2])
    runner = Interpreter(model_path=path).get_signature_runner()
    out = []
    for row in rows:
        result = runner(source_ids=np.array([row or [0]], np.int32))
        out.append(result["ids"][0, : result["lengths"][0]].tolist())
    print(json.dumps({"ids": out, "modules": sorted(m for m in ("zoo", "tensorflow") if m in sys.modules)}))
    """
)


def test_the_file_runs_without_zoo_or_tensorflow(translators, tmp_path):
    pytest.importorskip("ai_edge_litert")
    translator = translators["bahdanau_rnnsearch"]
    path = export_litert(translator, tmp_path / "greedy.tflite")
    sources, expected = translator_ids(translator, 1, SENTENCES[:3])
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(path), json.dumps(sources)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["modules"] == []
    assert [ids[:-1] for ids in report["ids"]] == expected
    assert all(ids[-1] == END_ID for ids in report["ids"])


def test_bad_arguments_are_refused(translators, tmp_path):
    translator = translators["bahdanau_rnnsearch"]
    with pytest.raises(ValueError, match="quantize must be one of none, float16, int8"):
        export_litert(translator, tmp_path / "m.tflite", quantize="int4")
    with pytest.raises(ValueError, match="search must be one of greedy, beam"):
        export_litert(translator, tmp_path / "m.tflite", search="sample")
    with pytest.raises(ValueError, match="beam size 1"):
        export_litert(translator, tmp_path / "m.tflite", beam_size=4)
    with pytest.raises(ValueError, match="beam_size >= 2"):
        export_litert(translator, tmp_path / "m.tflite", search="beam", beam_size=1)
    with pytest.raises(ValueError, match="no such .tflite file"):
        LiteRTTranslator(tmp_path / "missing.tflite")
    assert not list(tmp_path.iterdir())


def test_export_command_writes_the_file(translators, tmp_path, capsys):
    from zoo import cli

    translator = translators["bahdanau_rnnsearch"]
    folder = translator.save(tmp_path / "folder", serving=False)
    out = tmp_path / "beam.tflite"
    argv = ["export", str(folder), "--format", "tflite", "--search", "beam", "--out", str(out)]
    assert cli.main([*argv, "--quantize", "none", "--beam-size", "2", "--batch-size", "2"]) == 0
    assert str(out) in capsys.readouterr().out
    lite = LiteRTTranslator(out)
    assert lite.metadata["beam_size"] == 2 and lite.metadata["batch_size"] == 2
    assert lite.translate(SENTENCES[:5]) == translator.translate(SENTENCES[:5], beam_size=2)
    # Usage errors, before any work: exit status 2 and one message.
    for wrong in (
        ["--out", str(tmp_path / "model.bin")],
        ["--out", str(tmp_path / "x.tflite"), "--beam-size", "3"],
        ["--out", str(tmp_path / "missing" / "x.tflite")],
    ):
        with pytest.raises(SystemExit) as exited:
            cli.main(["export", str(folder), *wrong])
        assert exited.value.code == 2, wrong
    errors = capsys.readouterr().err
    assert (
        "--out must name a .tflite file" in errors and "--beam-size is for --search beam" in errors
    )
    assert "does not exist" in errors
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["folder", "beam.tflite", "beam.json", "beam.source_tokenizer", "beam.target_tokenizer"]
    )


def test_the_guides_runner_translates_as_the_translator(translators, tmp_path, monkeypatch):
    """docs/serving.md's runner (sentencepiece and the interpreter only) on sentences of
    every kind gives LiteRTTranslator's translations, which are the Translator's, from a
    greedy file and from a beam file (two signatures)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "serving.md").read_text("utf-8")
    section = text.split("## LiteRT (TFLite)", 1)[1]
    runner = section.split("A runner needs", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    translator = translators["bahdanau_rnnsearch"]
    monkeypatch.chdir(tmp_path)
    export_litert(translator, "lite/bahdanau.tflite")
    namespace = {}
    exec(compile(runner, "serving.md", "exec"), namespace)
    sentences = [*SENTENCES, "\ufeffZwei\u3000Hunde", "ﬁn Ⅻ"]
    expected = translator.translate(sentences, beam_size=1)
    assert [namespace["translate"](s) for s in sentences] == expected
    # A beam file has two signatures: the runner names the one it runs.
    export_litert(translator, "lite/bahdanau.tflite", search="beam", beam_size=2)
    namespace = {}
    exec(compile(runner, "serving.md", "exec"), namespace)
    expected = translator.translate(sentences, beam_size=2)
    assert [namespace["translate"](s) for s in sentences] == expected


@pytest.mark.slow
@pytest.mark.parametrize("preset", presets())
def test_every_preset_converts_with_the_translators_ids(preset, tmp_path):
    translator = toy_translator(preset, beam_size=2, length_penalty=2.0)
    writing(translator.model)
    for search, beam_size in (("greedy", 1), ("beam", 2)):
        path = export_litert(translator, tmp_path / f"{search}.tflite", search=search, batch_size=2)
        sources, expected = translator_ids(translator, beam_size, SENTENCES)
        assert LiteRTTranslator(path).translate_ids(sources) == expected, search


def test_the_translator_exports_itself_to_litert(monkeypatch, tmp_path):
    import zoo.export

    received = {}
    monkeypatch.setattr(
        zoo.export, "export_litert", lambda *args, **kwargs: received.update(kwargs) or args
    )
    translator = toy_translator()
    args = translator.export_litert(tmp_path / "t.tflite", quantize="int8", search="beam")
    assert args[0] is translator
    assert received == {
        "quantize": "int8", "search": "beam", "beam_size": None, "batch_size": 1, "greedy": True
    }  # fmt: skip


def test_bad_rows_are_refused_before_the_interpreter_which_stays_usable(translators, tmp_path):
    translator = translators["bahdanau_rnnsearch"]
    lite = LiteRTTranslator(export_litert(translator, tmp_path / "greedy.tflite"))
    with pytest.raises(ValueError, match=r"a call takes 1 to 1 rows \(the batch size fixed"):
        lite.run(np.array([[5, 6], [7, 0]], np.int32))
    with pytest.raises(ValueError, match=r"source_ids must be token ids >= 0 .*received -1"):
        lite.run(np.array([[5, -1]], np.int32))
    assert lite.translate(SENTENCES[:2]) == translator.translate(SENTENCES[:2], beam_size=1)
