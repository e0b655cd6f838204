"""`python -m zoo serve` in a subprocess on 127.0.0.1, real sockets: the body limit under
every framing, slow and idle connections, many connections at once, and what the answers'
headers disclose. The server runs with --read-timeout 1 --keep-alive-timeout 1
--max-request-bytes 65536 (conftest.SERVE_FLAGS)."""

import concurrent.futures
import json
import socket
import time

from server_helpers import call, exchange, status_of

LIMIT = 65536


def _post(body, framing):
    head = "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    return (head + framing + "\r\n").encode() + body


def _still_serving(url, translator):
    status, body, _ = call(url, "/translate", {"sentences": ["Ein Hund."]})
    assert (status, body["translations"]) == (200, translator.translate(["Ein Hund."]))


def test_headers_disclose_no_versions_and_config_no_path(zoo_serve):
    url, port, _, _, translator = zoo_serve
    status, config, headers = call(url, "/config")
    assert status == 200 and config["model_dir"] == "model"
    assert "Server" not in headers and "/" not in config["model_dir"]
    answer, _ = exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status_of(answer) == 200 and b"server:" not in answer.lower()
    assert b"uvicorn" not in answer.lower() and b"python" not in answer.lower()


def test_the_body_limit_holds_for_every_framing(zoo_serve):
    url, port, _, _, translator = zoo_serve
    big = json.dumps({"sentences": ["Ein Hund rennt."] * 10}).encode() + b" " * (4 * LIMIT)
    # Content-Length -1, then 4 MiB: refused by the HTTP parser, nothing read.
    answer, _ = exchange(port, _post(big, "Content-Length: -1\r\n"))
    assert status_of(answer) == 400
    # A declared length over the limit: 413 at once, the body unread.
    answer, _ = exchange(port, _post(b"{}", f"Content-Length: {64 * LIMIT}\r\n"))
    assert status_of(answer) == 413 and b"(max_request_bytes)" in answer
    # Chunked: read until the limit, then 413.
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(big[i : i + 8192]), big[i : i + 8192])
                      for i in range(0, len(big), 8192)) + b"0\r\n\r\n"  # fmt: skip
    answer, _ = exchange(port, _post(chunks, "Transfer-Encoding: chunked\r\n"))
    assert status_of(answer) == 413 and b"at most 65536" in answer
    # No length at all: no body, so no JSON (the rest is not a request either).
    answer, _ = exchange(port, _post(big[:200], "Connection: close\r\n"))
    assert status_of(answer) == 400
    # A chunked body under the limit is translated.
    small = json.dumps({"sentences": ["Ein Hund."]}).encode()
    answer, _ = exchange(
        port,
        _post(b"%x\r\n%s\r\n0\r\n\r\n" % (len(small), small),
              "Transfer-Encoding: chunked\r\nConnection: close\r\n"),
    )  # fmt: skip
    assert status_of(answer) == 200
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["translations"] == translator.translate(
        ["Ein Hund."]
    )
    _still_serving(url, translator)


def test_a_body_shorter_than_its_length_is_a_408_and_blocks_nobody(zoo_serve):
    url, port, _, _, translator = zoo_serve
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        short = pool.submit(exchange, port, _post(b'{"sente', "Content-Length: 100\r\n"))
        time.sleep(0.2)
        start = time.monotonic()
        _still_serving(url, translator)  # while the short body waits
        assert time.monotonic() - start < 5
        answer, seconds = short.result(timeout=15)
    assert status_of(answer) == 408 and b"(read_timeout)" in answer
    assert seconds < 5  # --read-timeout 1, and the connection is closed


def test_a_client_that_leaves_midway_leaves_no_traceback(zoo_serve):
    url, port, _, log, translator = zoo_serve
    exchange(port, _post(b'{"sentences": ["Ein', "Content-Length: 100\r\n"), read=False)
    exchange(port, b"POST /translate HTTP/1.1\r\nHost: x\r\n", read=False)
    time.sleep(0.5)
    _still_serving(url, translator)
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in text and "Exception in ASGI application" not in text


def test_idle_and_trickling_connections_are_closed_and_block_nobody(zoo_serve):
    url, port, _, _, translator = zoo_serve
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(300)]
    trickle = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        start = time.monotonic()
        _still_serving(url, translator)
        assert time.monotonic() - start < 5
        for byte in b"GET /health HTTP/1.1\r\n":  # a head that never ends, a byte at a time
            try:
                trickle.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(0.1)
        for sock in [*idle, trickle]:  # closed by the server: recv gives b"" (or a reset)
            try:
                assert sock.recv(100) == b""
            except ConnectionResetError:
                pass
    finally:
        for sock in [*idle, trickle]:
            sock.close()
    _still_serving(url, translator)


def test_many_connections_at_once_are_all_accepted_and_answered(zoo_serve):
    """600 connections opened before any is read: the listen queue holds them (no reset)."""
    url, port, _, _, translator = zoo_serve
    sockets = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(600)]
    try:
        for sock in sockets:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")

        def answer(sock):
            received = b""
            while chunk := sock.recv(4096):
                received += chunk
            return status_of(received)

        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            statuses = list(pool.map(answer, sockets))
    finally:
        for sock in sockets:
            sock.close()
    assert statuses == [200] * 600
    _still_serving(url, translator)
