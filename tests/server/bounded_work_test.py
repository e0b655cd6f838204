"""One request cannot hold the model: what it asks is bounded before any work starts, on a
real server (`python -m zoo serve` in a subprocess on 127.0.0.1, or a real translator in
this process on real sockets), and a plain request sent right after is answered at once."""

import json
import socket
import time

import pytest
from server_helpers import StubTranslator, call, exchange, running, status_of, url_of


@pytest.fixture(scope="module")
def translator(data_dir):
    from translator_toy import toy_translator

    return toy_translator("bahdanau_rnnsearch", beam_size=1)


def test_huge_ngram_size_and_expanding_text_do_not_hold_the_model(zoo_serve):
    url, _, _, _, translator = zoo_serve
    plain = {"sentences": ["Hallo."]}
    expected = translator.translate(["Hallo."])
    status, body, _ = call(url, "/translate", plain, timeout=60)  # traced once
    assert status == 200 and body["translations"] == expected
    # An n-gram size longer than any output bans nothing and is answered as one.
    status, body, _ = call(
        url, "/translate", {**plain, "no_repeat_ngram_size": 2**31 - 1}, timeout=60
    )
    assert status == 200 and body["translations"] == expected, body
    # 1,000 characters that NFKC turns into 18,000: refused before the model.
    status, body, _ = call(url, "/translate", {"sentences": ["\ufdfa" * 1000]}, timeout=10)
    assert status == 413, body
    assert "18000 after NFKC normalisation" in body["error"], body
    assert "(max_sentence_chars)" in body["error"], body
    # The model is free: a plain request is answered within a 2 s client timeout.
    status, body, _ = call(url, "/translate", plain, timeout=2)
    assert status == 200 and body["translations"] == expected


def test_a_sentence_over_the_token_limit_is_refused_naming_it(translator):
    sentence = "Ein Hund rennt über eine große grüne Wiese."
    count = int(translator.source_lengths([sentence])[0])
    with running(translator, max_sentence_tokens=count - 1) as server:
        url = url_of(server)
        status, body, _ = call(url, "/translate", {"sentences": ["Hallo.", sentence]})
        assert status == 413, body
        assert body["error"] == (
            f"sentences[1] has {count} source tokens; this server takes at most {count - 1} "
            "a sentence (max_sentence_tokens)."
        )
        status, body, _ = call(url, "/translate", {"sentences": ["Hallo."]})
        assert status == 200 and body["translations"] == translator.translate(["Hallo."])


def _answer(port, head):
    answer, _ = exchange(port, head.encode("latin-1"))
    status = status_of(answer)
    body = answer.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in answer else b""
    return status, body


def test_connections_heads_and_absolute_targets_are_answered_in_json():
    stub = StubTranslator()
    with running(stub, max_connections=3, max_header_bytes=4096) as server:
        port = server.server_address[1]
        # An absolute-form target is the path it names.
        status, body = _answer(
            port, "GET http://x/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        assert (status, json.loads(body)) == (200, {"status": "ok"})
        # A head over the limit: refused, whether one long header or many short ones.
        for headers in (
            "X-Big: " + "a" * 5000 + "\r\n",
            "".join(f"X-{i}: 1\r\n" for i in range(1000)),
        ):
            status, body = _answer(
                port, f"GET /health HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n"
            )
            assert status == 431, body
            assert "(max_header_bytes)" in json.loads(body)["error"]
        # Over max_connections: 503 with the documented JSON body.
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]
        try:
            time.sleep(0.2)  # accepted by the server
            status, body = _answer(
                port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            assert status == 503, body
            assert "(max_connections)" in json.loads(body)["error"]
        finally:
            for sock in idle:
                sock.close()


def test_every_request_is_answered_within_the_timeout_at_batch_size_one(zoo_serve, tmp_path):
    """32 clients, each posting one sentence at a time for a few seconds, against `zoo
    serve --max-batch-size 1 --request-timeout 10`: every request is answered (200) or
    refused (503, 504) before the client's own timeout of the request timeout plus 5 s."""
    import concurrent.futures
    import os
    import re
    import subprocess
    import sys

    _, _, _, _, translator = zoo_serve
    folder = tmp_path / "model"
    translator.save(folder, serving=False)
    argv = [sys.executable, "-m", "zoo", "serve", str(folder), "--port", "0",
            "--max-batch-size", "1", "--request-timeout", "10"]  # fmt: skip
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        line = process.stdout.readline().decode()
        url = "http://127.0.0.1:" + re.search(r"127\.0\.0\.1:(\d+)/", line)[1]
        assert call(url, "/translate", {"sentences": ["Ein Hund."]}, timeout=60)[0] == 200

        def client(index):
            statuses = []
            for turn in range(4):  # bounded: four requests a client
                sentence = f"Ein Hund rennt {index} mal {turn}."
                statuses.append(call(url, "/translate", {"sentences": [sentence]}, timeout=15)[0])
            return statuses

        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            statuses = [s for result in pool.map(client, range(32)) for s in result]
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert len(statuses) == 128 and set(statuses) <= {200, 503, 504}, statuses
    assert statuses.count(200) > 0
