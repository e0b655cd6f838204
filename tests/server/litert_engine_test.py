"""The server on a LiteRT file (`python -m zoo serve DIR --engine litert-int8`): the file is
made once from the folder and kept in the cache, a sentence batched with others gets the
answer it gets alone, and what the file cannot do is refused with a message."""

import io
import os
import re
import subprocess
import sys
import threading

import pytest
from server_helpers import call, running, url_of

from zoo.export.litert_translator import LiteRTTranslator, engine_file
from zoo.translator import Translator

SENTENCES = [
    "Ein Hund rennt.",
    "Zwei Männer lachen im Park.",
    "Eine Frau sitzt auf einer Bank und liest ein Buch.",
    "Kinder.",
    "Ein kleiner Junge spielt mit einem roten Ball auf der grünen Wiese.",
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from translator_toy import writing_toy  # outputs of many lengths, beam 2

    folder = tmp_path_factory.mktemp("engine") / "model"
    writing_toy().save(folder, serving=False)
    return folder


def engine(folder, **settings):
    """`engine_file` of the folder's translator."""
    return engine_file(Translator.from_directory(folder), **settings)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def test_the_engine_file_is_made_once_per_model_and_settings(folder, cache, monkeypatch):
    monkeypatch.setenv("ZOO_CACHE_DIR", str(cache))
    told = io.StringIO()
    path = engine(folder, batch_size=4, out=told)
    assert path.startswith(str(cache / "litert"))
    assert told.getvalue().startswith("Converting the model to a LiteRT file (int8 weights, beam")
    lite = LiteRTTranslator(path)
    assert lite.beam_size == 2 and lite.metadata["quantize"] == "int8"
    assert sorted({b for by_batch in lite.runners.values() for b in by_batch}) == [1, 4]
    made = os.path.getmtime(path)
    assert engine(folder, batch_size=4, out=told) == path and os.path.getmtime(path) == made
    assert told.getvalue().count("Converting") == 1


def test_batched_requests_get_the_answers_of_the_sentences_alone(folder, cache, monkeypatch):
    monkeypatch.setenv("ZOO_CACHE_DIR", str(cache))
    lite = LiteRTTranslator(engine(folder, batch_size=4))
    alone = [lite.translate([s])[0] for s in SENTENCES]
    assert len(set(alone)) > 2  # translations that differ
    with running(lite, max_batch_size=4, max_wait_ms=500) as server:
        url = url_of(server)
        answers = [None] * len(SENTENCES)

        def ask(i):
            answers[i] = call(url, "/translate", {"sentences": [SENTENCES[i]]})[1]

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(SENTENCES))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert [a["translations"][0] for a in answers] == alone
        status, body, _ = call(url, "/translate", {"sentences": SENTENCES, "beam_size": 1})
        assert status == 200 and body["translations"] == lite.translate(SENTENCES, beam_size=1)
        for asked, shown in (
            ({"n_best": 2}, '"n_best" needs a model folder'),
            ({"sample": {}}, '"sample" needs a model folder'),
            ({"attention": True}, "LiteRTTranslator leaves out"),
            ({"min_length": 2}, "runs a LiteRTTranslator, whose search is fixed"),
        ):
            status, body, _ = call(url, "/translate", {"sentences": SENTENCES[:1], **asked})
            assert status == 400 and shown in body["error"], body
        status, body, _ = call(url, "/translate", {"sentences": SENTENCES[:1], "beam_size": 3})
        assert status == 400 and "beam_size=3" in body["error"], body


def test_the_serve_command_serves_the_kept_file(folder, cache, monkeypatch):
    monkeypatch.setenv("ZOO_CACHE_DIR", str(cache))
    env = {**os.environ, "ZOO_CACHE_DIR": str(cache), "TF_CPP_MIN_LOG_LEVEL": "2"}
    argv = [sys.executable, "-m", "zoo", "serve", str(folder), "--engine", "litert-int8"]
    process = subprocess.Popen(
        [*argv, "--port", "0", "--max-batch-size", "4"],  # the file of the tests above
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        serving = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", serving)
        assert match, (serving, process.stderr.read() if process.poll() is not None else "")
        status, body, _ = call(f"http://127.0.0.1:{match[1]}", "/translate",
                               {"sentences": SENTENCES[:2]})  # fmt: skip
        assert status == 200 and len(body["translations"]) == 2
    finally:
        process.terminate()
        process.wait(30)
    lite = LiteRTTranslator(engine(folder, batch_size=4))
    assert body["translations"] == lite.translate(SENTENCES[:2])
    for wrong, shown in (
        (["--engine", "litert-int8", "--ensemble", str(folder)], "--ensemble"),
        (["--engine", "fast"], "invalid choice: 'fast'"),
    ):
        done = subprocess.run([*argv[:5], *wrong, "--port", "0"], capture_output=True,
                              text=True, env=env, timeout=120)  # fmt: skip
        assert done.returncode in (1, 2) and shown in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_a_tflite_file_is_served_as_it_is_and_its_search_flags_refused(folder, cache, capsys,
                                                                       monkeypatch):  # fmt: skip
    from zoo import cli
    from zoo.cli import serve
    from zoo.cli.parser import build_parser

    monkeypatch.setenv("ZOO_CACHE_DIR", str(cache))
    path = engine(folder, batch_size=4)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", path, "--beam-size", "2", "--port", "0"])
    assert stopped.value.code == 2
    assert "is a LiteRT file, its search fixed at export; received --beam-size" in (
        capsys.readouterr().err
    )
    args = build_parser().parse_args(["serve", path])
    lite = serve.load_engine(args, serve.ServerLimits(), None)
    assert isinstance(lite, LiteRTTranslator) and lite.path == path
