"""Load on `python -m zoo serve`: requests/s, p50/p99 latency, errors and the server's peak
memory at 1, 8, 32 and 128 concurrent clients, every answer checked.

Starts `python -m zoo serve MODEL_DIR --port 0` (plus `--server-args`) in a subprocess,
translates each test sentence alone first (one request at a time: the reference, and the
server's warm-up), then for each number of clients C runs C threads that each send
requests of one sentence (the sentences taken in turn) over a kept-alive connection for
`--seconds` seconds (or `--requests` requests each), and checks that every answer equals
the sentence's translation alone. The server's /config counts give the mean batch (the
requests translated together) of each load. With
`--abuse`, hostile requests run at the same time as each load (oversized and malformed
bodies, Content-Length -1, 10,000 sentences, a 5,000-word sentence, beam 1024, text/plain
POSTs, idle connections and bodies shorter than their length): each must be refused with
a 4xx (counted as "abuse ok"), never answered 200 or 5xx. The server's peak resident
memory (VmHWM) is read after each load. Prints a Markdown table.

    python bench/serve_load.py saved_models/luong_local_general_multi30k_de_en
    python bench/serve_load.py saved_models/luong_local_general_multi30k_de_en --abuse --seconds 60
    python bench/serve_load.py saved_models/luong_local_general_multi30k_de_en --versus-one-at-a-time
    python bench/serve_load.py saved_models/luong_local_general_multi30k_de_en --server-args "--max-wait-ms 10"
    python bench/serve_load.py saved_models/luong_local_general_multi30k_de_en --versus-engine litert-int8
    python bench/serve_load.py saved_models/luong_local_general_multi30k_de_en --mixed --clients 32 --seconds 180

The sentences are the source side of the corpus's test split (`--data`, default Multi30k
de-en test2016) or the lines of `--sentences FILE`. One answer that differs from the
sentence alone, or any error of a well-formed request, is counted in the table.
"""

import concurrent.futures
import http.client
import json
import os
import random
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time

import common  # quiet TensorFlow start, repository on the path

CLIENTS = "1,8,32,128"
ABUSE_PAUSE_S = 0.05  # between two hostile requests of one kind: a hostile user, not a flood


def parse_args(argv=None):
    p = common.parser(__doc__)
    common.add_model_dir(p)
    p.add_argument("--clients", default=CLIENTS, help="concurrent clients (default: %(default)s)")
    p.add_argument(
        "--seconds", type=float, default=20,
        help="each load lasts this long: a client sends its next request until then (default: %(default)s)",
    )  # fmt: skip
    p.add_argument(
        "--requests", type=int, default=None,
        help="instead of --seconds: this many requests per client",
    )  # fmt: skip
    p.add_argument("--sentences", default=None, help="a file of sentences, one a line")
    common.add_corpus_flags(p, split="test")
    p.add_argument(
        "--count", type=int, default=200, help="distinct sentences (default: %(default)s)"
    )
    p.add_argument("--abuse", action="store_true", help="hostile requests during each load")
    p.add_argument(
        "--mixed",
        action="store_true",
        help="each request with options drawn at random (beam sizes, decoding controls, "
        "sampling, prefixes, constraints); the server's memory is read every 10 s, and "
        "--check answers are compared afterwards with the same request sent alone",
    )
    p.add_argument(
        "--check", type=int, default=200,
        help="with --mixed: answers compared with the request alone (default: %(default)s)",
    )  # fmt: skip
    p.add_argument(
        "--server-args", default="", help='more flags of zoo serve, e.g. "--max-batch-size 1"'
    )
    p.add_argument("--timeout", type=float, default=300, help="seconds a request may take")
    p.add_argument(
        "--versus-one-at-a-time",
        action="store_true",
        help="run the loads again on a server started with --max-batch-size 1 (no batching) "
        "and show both, with the ratio of their requests/s",
    )
    p.add_argument(
        "--versus-engine",
        default=None,
        metavar="ENGINE",
        help="run the loads again on a server started with --engine ENGINE (e.g. litert-int8; "
        "its own answers alone are its reference) and show both, with the ratio of their "
        "requests/s",
    )
    return p.parse_args(argv)


def load_sentences(args):
    if args.sentences:
        with open(args.sentences, encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
    else:
        lines = list(common.corpus_split(args).source)
    lines = [line for line in lines if line.strip()][: args.count]
    if not lines:
        raise SystemExit("no sentences to send")
    return lines


class Server:
    """`python -m zoo serve MODEL_DIR --port 0 ...` in a subprocess, its log in a file."""

    def __init__(self, model_dir, extra):
        self.log = tempfile.NamedTemporaryFile("w+b", suffix=".log", delete=False)
        command = [sys.executable, "-m", "zoo", "serve", model_dir, "--port", "0", *extra]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self.log, cwd=common.REPO_DIR
        )  # the repository's zoo, also where it is not installed
        line = self.process.stdout.readline().decode()
        while line.startswith("Converting"):  # --engine litert-int8 making its file: minutes
            print(line.strip(), flush=True)
            line = self.process.stdout.readline().decode()
        match = re.search(r"http://([\d.]+):(\d+)/", line)
        if not match:
            self.stop()
            raise SystemExit(f"the server did not start: {line!r}; log: {self.log.name}")
        self.host, self.port = match[1], int(match[2])

    def peak_rss_mib(self):
        """The server's peak resident memory (VmHWM), or its current one where the system
        keeps no peak (psutil)."""
        peak = memory_mib(self.process.pid, "VmHWM")
        if peak is not None:
            return peak
        try:
            import psutil
        except ImportError:
            return None
        return psutil.Process(self.process.pid).memory_info().rss / 2**20

    def batch_counts(self):
        """The server's batches and requests run so far (its /config "load")."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        connection.request("GET", "/config")
        load = json.loads(connection.getresponse().read())["load"]
        connection.close()
        return load

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def post(connection, payload, headers=None):
    body = json.dumps(payload).encode()
    connection.request(
        "POST", "/translate", body, {"Content-Type": "application/json", **(headers or {})}
    )
    response = connection.getresponse()
    return response.status, json.loads(response.read() or b"{}")


def reference(server, sentences, timeout):
    connection = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    answers = {}
    for sentence in sentences:
        status, body = post(connection, {"sentences": [sentence]})
        if status != 200:
            raise SystemExit(f"the reference request failed: {status} {body}")
        answers[sentence] = body["translations"][0]
    connection.close()
    return answers


def mixed_options(rng):
    """The options of one request of a mixed load: defaults, a beam size, decoding controls,
    sampling, a prefix or a constraint, each value drawn anew."""
    kind = rng.randrange(7)
    if kind == 1:
        return {"beam_size": rng.randint(1, 8)}
    if kind == 2:
        return {"min_length": rng.randint(0, 30), "no_repeat_ngram_size": rng.randint(0, 8)}
    if kind == 3:
        return {
            "ban_unknown": True,
            "min_length": rng.randint(0, 12),
            "beam_size": rng.randint(1, 4),
        }
    if kind == 4:
        sample = {"seed": rng.randrange(2**31), "temperature": rng.choice([0.5, 0.8, 1.0, 1.3])}
        sample.update(rng.choice([{}, {"top_k": rng.randint(1, 50)}, {"top_p": 0.9}]))
        return {"sample": sample}
    if kind == 5:
        return {"prefix": [rng.choice(["A", "Two", "The man"])]}
    if kind == 6:
        return {"constraints": [[rng.choice(["dog", "street", "woman"])]]}
    return {}


def client(server, sentences, expected, offset, count, until, timeout, answers=None):
    """Requests on one kept-alive connection, `count` of them (None: as many as fit before
    the `until` time of `time.perf_counter()`): (latencies, errors, wrong answers). With
    `answers` (a dict), each request has `mixed_options` and its answer is kept there by
    the request's JSON, to be compared afterwards (`check_alone`)."""
    latencies, errors, wrong = [], 0, 0
    rng = random.Random(offset)
    connection = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    i = -1
    while True:
        i += 1
        if (i >= count) if count is not None else (time.perf_counter() >= until):
            break
        sentence = sentences[(offset + i) % len(sentences)]
        payload = {"sentences": [sentence]}
        if answers is not None:
            payload.update(mixed_options(rng))
        start = time.perf_counter()
        try:
            status, body = post(connection, payload)
        except (OSError, http.client.HTTPException):
            errors += 1
            connection.close()
            connection = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
            continue
        latencies.append(time.perf_counter() - start)
        if status != 200:
            errors += 1
        elif answers is not None:
            answers.setdefault(json.dumps(payload, sort_keys=True), body["translations"])
        elif body["translations"] != [expected[sentence]]:
            wrong += 1
    connection.close()
    return latencies, errors, wrong


def check_alone(server, answers, count, timeout):
    """How many of the first `count` `answers` (request JSON -> translations) differ from
    the same request sent alone."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    wrong = 0
    for request in list(answers)[:count]:
        status, body = post(connection, json.loads(request))
        wrong += status != 200 or body["translations"] != answers[request]
    connection.close()
    return wrong


def memory_mib(pid, field="VmRSS"):
    """A memory field of the process' /proc status in MiB (VmRSS: resident now, VmHWM: its
    peak), or None where the system has none."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def watch_memory(server, stop, readings, every=10.0):
    """(seconds since start, RSS MiB) of the server every `every` seconds until `stop`."""
    start = time.perf_counter()
    while not stop.wait(every):
        readings.append((time.perf_counter() - start, memory_mib(server.process.pid)))


def _raw(server, data, wait=10.0):
    """Sends raw bytes; the status of the answer (None if the connection closed first)."""
    with socket.create_connection((server.host, server.port), timeout=wait) as sock:
        try:
            sock.sendall(data)
            answer = sock.recv(256)
        except OSError:
            return None
    match = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    return int(match[1]) if match else None


def _json_post(body, content_type="application/json", length=None):
    length = len(body) if length is None else length
    head = (f"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {length}\r\nConnection: close\r\n\r\n")  # fmt: skip
    return head.encode() + body


def hostile_requests():
    """(name, bytes to send) of the abusive requests; each must get a 4xx (or a closed
    connection, for the ones the HTTP parser refuses)."""
    word_salad = json.dumps({"sentences": ["Hund " * 5000]}).encode()
    return [
        ("nested [", _json_post(b"[" * 100_000)),
        (
            "10,000 sentences",
            _json_post(json.dumps({"sentences": ["Ein Hund."] * 10_000}).encode()),
        ),
        ("5,000 words", _json_post(word_salad)),
        (
            "beam 1024",
            _json_post(json.dumps({"sentences": ["a"] * 50, "beam_size": 1024}).encode()),
        ),
        ("sentences object", _json_post(b'{"sentences": {"a": 1}}')),
        ('attention "false"', _json_post(b'{"sentences": ["a"], "attention": "false"}')),
        ("text/plain", _json_post(b'{"sentences": ["a"]}', content_type="text/plain")),
        ("2 MiB body", _json_post(b" " * (2 << 20))),
        ("Content-Length -1", _json_post(b" " * (1 << 20), length=-1)),
        ("short body", _json_post(b'{"sent', length=1000)),
    ]


def abuse(server, stop, counts):
    """Each hostile request in a loop of its own until `stop` is set, with 20 idle
    connections open; `counts` gets the refused ("ok") and the wrongly answered ("bad")."""
    idle = [socket.create_connection((server.host, server.port)) for _ in range(20)]
    lock = threading.Lock()

    def repeat(name, data):
        while not stop.is_set():
            status = _raw(server, data, wait=30.0)
            ok = status is None or 400 <= status < 500
            with lock:
                counts["ok" if ok else "bad"] += 1
                if not ok:
                    counts.setdefault("bad_cases", set()).add(f"{name}: {status}")
            stop.wait(ABUSE_PAUSE_S)

    threads = [
        threading.Thread(target=repeat, args=case, daemon=True) for case in hostile_requests()
    ]
    for thread in threads:
        thread.start()
    stop.wait()
    for thread in threads:
        thread.join(60)
    for sock in idle:
        sock.close()


def run_load(server, sentences, expected, clients, args):
    stop, counts = threading.Event(), {"ok": 0, "bad": 0}
    abuser = None
    if args.abuse:
        abuser = threading.Thread(target=abuse, args=(server, stop, counts), daemon=True)
        abuser.start()
    answers, memory = ({}, []) if args.mixed else (None, None)
    if args.mixed:
        threading.Thread(target=watch_memory, args=(server, stop, memory), daemon=True).start()
    before = server.batch_counts()
    start = time.perf_counter()
    until = start + args.seconds
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        futures = [
            pool.submit(
                client, server, sentences, expected, c * 7, args.requests, until, args.timeout,
                answers,
            )
            for c in range(clients)
        ]  # fmt: skip
        results = [f.result() for f in futures]
    seconds = time.perf_counter() - start
    after = server.batch_counts()
    batches = after["batches"] - before["batches"]
    stop.set()
    if abuser is not None:
        abuser.join(60)
    wrong = sum(r[2] for r in results)
    if args.mixed:
        print("  server RSS (s, MiB): " + ", ".join(f"{t:.0f} {m:.0f}" for t, m in memory if m))
        wrong += check_alone(server, answers, args.check, args.timeout)
        print(f"  {min(args.check, len(answers))} of {len(answers)} distinct answers compared "
              "with the request alone")  # fmt: skip
    latencies = sorted(x for r in results for x in r[0])

    def quantile(q):
        return (
            1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))]
            if latencies
            else None
        )

    return {
        "clients": clients,
        "requests": len(latencies),
        "batch": (after["requests"] - before["requests"]) / batches if batches else 0.0,
        "per_s": len(latencies) / seconds,
        "p50": quantile(0.50),
        "p99": quantile(0.99),
        "max": 1000 * latencies[-1] if latencies else None,
        "errors": sum(r[1] for r in results),
        "wrong": wrong,
        "rss": server.peak_rss_mib(),
        "abuse": f"{counts['ok']}/{counts['ok'] + counts['bad']}" if args.abuse else "-",
        "bad_cases": sorted(counts.get("bad_cases", ())),
    }


COLUMNS = [
    ("server", "server", None),
    ("clients", "clients", "{}"),
    ("requests", "requests", "{}"),
    ("per_s", "requests/s", "{:.1f}"),
    ("p50", "p50 ms", "{:.0f}"),
    ("p99", "p99 ms", "{:.0f}"),
    ("max", "max ms", "{:.0f}"),
    ("errors", "errors", "{}"),
    ("wrong", "wrong", "{}"),
    ("rss", "peak RSS MiB", "{:.0f}"),
    ("abuse", "abuse refused", None),
    ("ratio", "requests/s ratio", "{:.2f}x"),  # of a pair: see main
    ("batch", "mean batch", "{:.1f}"),
]


def serve_and_load(args, sentences, extra, expected=None):
    """Starts a server with `extra` flags, runs every load: (rows, expected answers)."""
    server = Server(os.path.abspath(args.model_dir), extra)
    rows = []
    try:
        if expected is None:
            start = time.perf_counter()
            expected = reference(server, sentences, args.timeout)
            print(f"{len(sentences)} sentences translated alone in "
                  f"{time.perf_counter() - start:.1f} s (server log {server.log.name})")  # fmt: skip
        for clients in [int(c) for c in args.clients.split(",")]:
            row = run_load(server, sentences, expected, clients, args)
            row["server"] = " ".join(extra) or "defaults"
            rows.append(row)
            print(f"[{row['server']}] {clients} clients: {row['per_s']:.1f} requests/s, p99 "
                  f"{row['p99']:.0f} ms, {row['errors']} errors, {row['wrong']} wrong",
                  flush=True)  # fmt: skip
            for case in row["bad_cases"]:
                print(f"  abuse answered wrongly: {case}")
    finally:
        server.stop()
    return rows, expected


def main(argv=None):
    args = parse_args(argv)
    sentences = load_sentences(args)
    extra = shlex.split(args.server_args)
    rows, expected = serve_and_load(args, sentences, extra, {} if args.mixed else None)
    if args.versus_one_at_a_time:
        alone, _ = serve_and_load(args, sentences, [*extra, "--max-batch-size", "1"], expected)
        for batched, single in zip(rows, alone, strict=True):
            batched["ratio"] = single["ratio"] = batched["per_s"] / single["per_s"]
        rows = [row for pair in zip(rows, alone, strict=True) for row in pair]
    if args.versus_engine:
        other, _ = serve_and_load(args, sentences, [*extra, "--engine", args.versus_engine])
        for first, second in zip(rows, other, strict=True):
            first["ratio"] = second["ratio"] = second["per_s"] / first["per_s"]
        rows = [row for pair in zip(rows, other, strict=True) for row in pair]
    print()
    print(f"python -m zoo serve {args.model_dir} (+ the flags in the server column)")
    print()
    print(common.table(rows, COLUMNS, markdown=True))
    print(common.machine_line())
    return 1 if any(r["errors"] or r["wrong"] or r["bad_cases"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
