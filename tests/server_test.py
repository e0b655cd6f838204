"""Tests of zoo/server/ (`python -m zoo serve`): a real HTTP server on a free port, whose
answers must equal the Translator's own. tests/server/ holds the limits, batching and
hostile-input cases."""

import html
import json
import shutil
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest
from translator_toy import MIXED, toy_translator

from zoo import cli
from zoo.server import make_server


@pytest.fixture(scope="module")
def served(data_dir):
    translator = toy_translator("luong_local_p_general", beam_size=2)
    server = make_server(translator, port=0, max_request_bytes=4096)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield translator, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _call(url, path, payload=None, raw=None):
    data = raw if raw is not None else None if payload is None else json.dumps(payload).encode()
    headers = {} if data is None else {"Content-Type": "application/json"}
    request = urllib.request.Request(url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_translate_n_best_alignments_and_sample_equal_the_translator(served):
    translator, url = served
    assert _call(url, "/health") == (200, {"status": "ok"})
    assert _call(url, "/config")[1]["beam_size"] == 2
    status, body = _call(url, "/translate", {"sentences": MIXED})
    expected = translator.translate_with_attention(MIXED)
    assert status == 200 and body["translations"] == translator.translate(MIXED)
    assert body["scores"] == pytest.approx([t.score for t in expected], rel=1e-6)
    _, body = _call(url, "/translate", {"sentences": MIXED[:1], "attention": True})
    (entry,) = body["attention"]
    assert entry["source_tokens"] == expected[0].source_tokens
    assert entry["target_tokens"] == expected[0].target_tokens
    np.testing.assert_allclose(entry["weights"], expected[0].weights, atol=1e-4)
    status, body = _call(url, "/translate", {"sentences": MIXED[:3], "n_best": 2})
    assert body["translations"] == translator.translate(MIXED[:3])
    expected = translator.translate_n_best(MIXED[:3], 2)
    assert [[e["translation"] for e in entries] for entries in body["n_best"]] == [
        [text for text, _ in entries] for entries in expected
    ]
    _, body = _call(url, "/translate", {"sentences": MIXED[:3], "alignments": True})
    assert body["alignments"] == [
        t.alignment() for t in translator.translate_with_attention(MIXED[:3])
    ]
    sample = {"seed": 3, "temperature": 2.0}
    _, body = _call(url, "/translate", {"sentences": MIXED[:3], "sample": sample})
    assert body["translations"] == translator.sample(MIXED[:3], **sample)


@pytest.mark.parametrize(
    "payload, raw, status, message",
    [
        (None, b"{not json", 400, "JSON object"),
        ({"sentence": ["a"]}, None, 400, "unknown field"),
        ({"sentences": "Ein Hund."}, None, 400, "single string"),
        ({"sentences": ["a"], "beam_size": 0}, None, 400, "beam_size"),
        ({"sentences": ["a"], "sample": {"top_p": 2.0}}, None, 400, "top_p"),
        ({"sentences": ["x" * 5000]}, None, 413, "at most 4096"),
    ],
)
def test_bad_requests_get_a_status_and_a_message(served, payload, raw, status, message):
    got, body = _call(served[1], "/translate", payload, raw)
    assert got == status and message in body["error"]
    assert _call(served[1], "/health") == (200, {"status": "ok"})  # still serving


def test_concurrent_requests_get_their_own_answers(served):
    translator, url = served
    sentences = ["Ein Hund rennt.", "Zwei Männer lachen.", "Eine Frau.", "Ein Kind spielt."]
    expected = translator.translate(sentences)
    answers = [None] * 8

    def client(i):
        answers[i] = _call(url, "/translate", {"sentences": [sentences[i % 4]]})

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    for i, (status, body) in enumerate(answers):
        assert status == 200 and body["translations"] == [expected[i % 4]]


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_the_page_shows_the_translation_and_heatmap_in_a_browser(served, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip("no headless browser (chromium) on this machine: apt-get install chromium")
    translator, url = served
    sentence = "Ein Hund rennt."
    done = subprocess.run(
        [
            browser, "--headless", "--no-sandbox", "--disable-gpu",
            f"--user-data-dir={tmp_path}", "--virtual-time-budget=60000", "--dump-dom",
            f"{url}/?q={urllib.parse.quote(sentence)}",
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    dom = done.stdout
    assert 'data-done="yes"' in dom, done.stderr[-2000:]
    expected = translator.translate_with_attention([sentence])[0]
    assert f'<div id="translation">{html.escape(expected.translation, quote=False)}</div>' in dom
    cells = dom.count("<td ")
    assert cells == len(expected.target_tokens) * len(expected.source_tokens)


def test_unknown_path_is_404(served):
    assert _call(served[1], "/nothing")[0] == 404


def test_cli_serve(data_dir, tmp_path, capsys):
    translator = toy_translator("bahdanau_rnnsearch", beam_size=1)
    translator.save(tmp_path, serving=False)
    answers = []

    def ready(server):
        def client():
            url = f"http://127.0.0.1:{server.server_address[1]}"
            answers.append(_call(url, "/translate", {"sentences": ["Ein Hund."]}))
            server.shutdown()

        threading.Thread(target=client, daemon=True).start()

    args = cli.build_parser().parse_args(["serve", str(tmp_path), "--port", "0"])
    assert cli.run_serve(args, ready=ready) == 0
    ((status, body),) = answers
    assert status == 200 and body["translations"] == translator.translate(["Ein Hund."])
    assert "Serving" in capsys.readouterr().out
