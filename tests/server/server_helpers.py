"""What the server tests share: a stub translator whose calls can be held, a server of it
in this process on real sockets, and HTTP calls, JSON or raw bytes."""

import contextlib
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.request

from zoo.server import make_server

# What a TensorFlow failure's text looks like: none of it may reach a client.
SECRET = "{{function_node __inference_translate_77}} decoder/while/GatherV2 /home/me/model"


class StubTranslator:
    """The translator interface without a model: a translation is the sentence upper-cased
    (sampled: lower-cased). Every call's sentences are recorded in `calls`; a call waits
    until `gate` is set (it is, unless a test clears it); the sentence "boom" makes the
    call fail as a TensorFlow error would."""

    metadata = {"outputs": ["translation", "score"]}  # no attention: translate() alone
    beam_size = 1
    batch_size = 64

    def __init__(self):
        self.calls = []
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()

    def _call(self, sentences):
        self.calls.append(list(sentences))
        self.started.set()
        assert self.gate.wait(60)
        if "boom" in sentences:
            raise RuntimeError(SECRET)

    def translate(self, sentences, beam_size=None):
        self._call(sentences)
        return [s.upper() for s in sentences]

    def translate_n_best(self, sentences, n_best, beam_size=None):
        self._call(sentences)
        return [[(s.upper(), -1.0)] * n_best for s in sentences]

    def sample(self, sentences, temperature=1.0, top_k=None, top_p=None, seed=None):
        if temperature < 1e-30:  # as the library refuses values it cannot draw with
            raise ValueError(f"temperature must be at least 1e-30, got {temperature}.")
        self._call(sentences)
        return [s.lower() for s in sentences]

    def get_config(self):
        return {"beam_size": 1}


@contextlib.contextmanager
def running(translator, **limits):
    """`make_server(translator, port=0, **limits)` serving in a thread: yields the server."""
    server = make_server(translator, port=0, model_dir="/secret/place/stub_model", **limits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        if hasattr(translator, "gate"):
            translator.gate.set()
        server.shutdown()
        server.server_close()
        thread.join(30)


def url_of(server):
    return f"http://127.0.0.1:{server.server_address[1]}"


def call(url, path, payload=None, raw=None, headers=None, timeout=30):
    """(status, JSON body, headers) of a GET (no payload) or a JSON POST."""
    data = raw if raw is not None else None if payload is None else json.dumps(payload).encode()
    sent = {} if data is None else {"Content-Type": "application/json"}
    sent.update(headers or {})
    request = urllib.request.Request(url + path, data=data, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), error.headers


def exchange(port, data, timeout=10.0, read=True):
    """Sends `data` on a new connection to 127.0.0.1:port and returns what the server
    answers until it closes the connection (or `timeout` s pass), and the seconds taken."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(OSError):  # the server may close before all is sent
            sock.sendall(data)
        received = b""
        while read:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            received += chunk
    return received, time.monotonic() - start


def status_of(answer):
    match = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    return int(match[1]) if match else None
