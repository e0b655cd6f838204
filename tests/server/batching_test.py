"""Batching, the queue, timeouts and clients that leave: the server (uvicorn, real sockets on
127.0.0.1) in this process, so that a stub translator can hold the model's calls."""

import concurrent.futures
import json
import socket
import threading
import time

import numpy as np
import pytest
from server_helpers import StubTranslator, call, running, url_of


def _wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _load(url):
    return call(url, "/config")[1]["load"]


def test_concurrent_requests_are_batched_and_each_answer_is_its_own_alone(data_dir):
    """32 clients at once with four kinds of options: each answer equals the translation of
    its request alone, and the requests were merged into fewer calls."""
    from translator_toy import LONG, MIXED, toy_translator

    translator = toy_translator("luong_local_p_general", beam_size=2)
    kinds = [{}, {"beam_size": 1}, {"attention": True}, {"n_best": 2, "alignments": True}]
    short = [s for s in MIXED if s != LONG]  # LONG (slow to decode) in the first request only
    requests = [
        {"sentences": [short[i % len(short)], short[(3 * i + 1) % len(short)]][: 1 + i % 2],
         **kinds[i % len(kinds)]}
        for i in range(32)
    ]  # fmt: skip
    requests[0]["sentences"].append(LONG)
    with running(translator, max_wait_ms=50) as server:
        url = url_of(server)
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            answers = list(pool.map(lambda r: call(url, "/translate", r, timeout=120), requests))
        load = _load(url)
    assert load["requests"] == 32 and load["batches"] < 32
    alone_cache = {}
    for request, (status, body, _) in zip(requests, answers, strict=True):
        sentences, beam = request["sentences"], request.get("beam_size")
        assert status == 200
        key = (tuple(sentences), beam)  # the same request alone gives the same answer
        if key not in alone_cache:
            alone_cache[key] = translator.translate_with_attention(sentences, beam_size=beam)
        alone = alone_cache[key]
        assert body["translations"] == [t.translation for t in alone]
        np.testing.assert_allclose(body["scores"], [t.score for t in alone], rtol=1e-5)
        if request.get("attention"):
            for entry, t in zip(body["attention"], alone, strict=True):
                assert entry["target_tokens"] == t.target_tokens
                weights = np.reshape(entry["weights"], t.weights.shape)  # (0, 0) when empty
                np.testing.assert_allclose(weights, t.weights, atol=2e-4)
        if request.get("alignments"):
            assert body["alignments"] == [t.alignment() for t in alone]
        if request.get("n_best"):
            expected = translator.translate_n_best(sentences, 2)
            assert [[e["translation"] for e in n] for n in body["n_best"]] == [
                [text for text, score in n if score != float("-inf")] for n in expected
            ]


def _hold_the_worker(stub, url):
    """Clears the gate and sends one request that holds the worker; returns its thread."""
    stub.gate.clear()
    stub.started.clear()
    first = threading.Thread(target=call, args=(url, "/translate", {"sentences": ["first"]}))
    first.start()
    assert stub.started.wait(10)
    return first


def test_a_request_is_never_split_and_sampling_is_never_merged():
    stub = StubTranslator()
    with running(stub, max_batch_size=4, max_wait_ms=1) as server:
        url = url_of(server)
        first = _hold_the_worker(stub, url)
        requests = [{"sentences": [f"r{i}-{j}" for j in range(2)]} for i in range(4)]
        requests += [{"sentences": ["big"] * 6}]  # over max_batch_size: alone, whole
        requests += [{"sentences": [f"S{i}", f"T{i}"], "sample": {"seed": i}} for i in range(3)]
        with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
            futures = [pool.submit(call, url, "/translate", r) for r in requests]
            _wait_until(lambda: _load(url)["waiting"] == len(requests))
            stub.gate.set()
            answers = [f.result()[:2] for f in futures]
        first.join(10)
    for request, answer in zip(requests, answers, strict=True):
        case = str.lower if "sample" in request else str.upper
        assert answer == (200, {"translations": [case(s) for s in request["sentences"]]})
    whole = [r["sentences"] for r in requests]
    for sentences in stub.calls[1:]:
        parts, rest = [], list(sentences)
        while rest:  # each call is a run of whole requests
            part = next(w for w in whole if rest[: len(w)] == w)
            parts.append(part)
            rest = rest[len(part) :]
        assert len(parts) == 1 or len(sentences) <= 4
        assert not any(p[0].startswith("S") for p in parts) or len(parts) == 1
    assert len(stub.calls) < 1 + len(requests)  # some requests did share a call


def test_the_event_loop_answers_while_the_model_runs():
    stub = StubTranslator()
    with running(stub) as server:
        url = url_of(server)
        first = _hold_the_worker(stub, url)
        start = time.monotonic()
        assert call(url, "/health")[:2] == (200, {"status": "ok"})
        assert time.monotonic() - start < 2
        stub.gate.set()
        first.join(10)


def test_a_full_queue_is_a_503_and_a_slow_answer_a_504():
    stub = StubTranslator()
    with running(stub, max_queue=2, request_timeout=1.5) as server:
        url = url_of(server)
        first = _hold_the_worker(stub, url)
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            queued = [
                pool.submit(call, url, "/translate", {"sentences": [f"q{i}"]}) for i in range(2)
            ]
            _wait_until(lambda: _load(url)["waiting"] == 2)
            status, body, headers = call(url, "/translate", {"sentences": ["third"]})
            assert status == 503 and "(max_queue)" in body["error"]
            assert headers["Retry-After"] == "1"
            for future in queued:  # still queued after request_timeout: 504, and dropped
                status, body, _ = future.result()
                assert status == 504 and "(request_timeout)" in body["error"]
        assert _load(url)["dropped"] == 2
        stub.gate.set()
        first.join(10)
        assert call(url, "/translate", {"sentences": ["after"]})[:2] == (
            200,
            {"translations": ["AFTER"]},
        )
    assert [c for c in stub.calls if c[0].startswith("q")] == []  # never run


def test_a_client_that_leaves_while_queued_is_dropped_before_it_runs():
    stub = StubTranslator()
    with running(stub) as server:
        url = url_of(server)
        first = _hold_the_worker(stub, url)
        body = json.dumps({"sentences": ["gone"]}).encode()
        head = (
            "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection(server.server_address, timeout=5) as sock:
            sock.sendall(head + body)
            _wait_until(lambda: _load(url)["waiting"] == 1)
        _wait_until(lambda: _load(url)["dropped"] == 1)
        assert _load(url)["waiting"] == 0
        stub.gate.set()
        first.join(10)
        assert call(url, "/translate", {"sentences": ["next"]})[:2] == (
            200,
            {"translations": ["NEXT"]},
        )
    assert ["gone"] not in stub.calls


@pytest.mark.parametrize("limits", [{"max_queue": 0}, {"max_wait_ms": -1}, {"max_sentences": 2.5}])
def test_limits_are_checked(limits):
    from zoo.server import make_server

    with pytest.raises(ValueError, match=next(iter(limits))):
        make_server(StubTranslator(), port=0, **limits)
