"""The server's Starlette application: its routes, and the page of `GET /`.

The page of `GET /`: type a sentence, see its translation and attention heatmap.

The Starlette application: the routes, the body's reading within the limits, and the
answers (statuses and `{"error": message}`).
"""

import asyncio
import contextlib
import functools
import json
import logging
import math
import os
import uuid

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from zoo.server.batcher import Batcher, QueueFull
from zoo.server.limits import FALLBACK_BATCH_SIZE, ServerLimits
from zoo.server.translation import run_batch
from zoo.server.validation import (
    RequestError,
    batch_key,
    check_content_type,
    check_request,
    check_token_counts,
    parse_json,
)

# The page of `GET /`: one form, the translation, and the attention as a table of shaded
# cells (rows: target tokens, columns: source tokens), with no other files or libraries.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>zoo translator</title>
<style>
body { font-family: sans-serif; margin: 2em; max-width: 60em; }
textarea { width: 100%; font-size: 1.1em; }
#translation { font-size: 1.3em; margin: 1em 0; }
table { border-collapse: collapse; font-size: 0.8em; }
td { width: 2.2em; height: 1.6em; border: 1px solid #eee; text-align: center; }
th { font-weight: normal; padding: 0 0.3em; white-space: nowrap; }
th.source { writing-mode: vertical-rl; transform: rotate(180deg); }
#error { color: #b00; }
</style></head>
<body>
<h1>zoo translator</h1>
<form id="form"><textarea id="text" rows="3" placeholder="Type a sentence"></textarea>
<p><button type="submit">Translate</button></p></form>
<div id="translation"></div><div id="error"></div>
<table id="heatmap"></table>
<script>
function cell(tag, text, cls) {
  const node = document.createElement(tag);
  node.textContent = text;
  if (cls) node.className = cls;
  return node;
}
function draw(entry) {
  const table = document.getElementById("heatmap");
  table.replaceChildren();
  const head = document.createElement("tr");
  head.appendChild(cell("th", ""));
  for (const s of entry.source_tokens) head.appendChild(cell("th", s, "source"));
  table.appendChild(head);
  entry.target_tokens.forEach((t, i) => {
    const row = document.createElement("tr");
    row.appendChild(cell("th", t));
    entry.weights[i].forEach((w) => {
      const td = cell("td", "");
      td.title = w.toFixed(3);
      td.style.background = "rgba(20, 60, 160, " + w + ")";
      row.appendChild(td);
    });
    table.appendChild(row);
  });
}
async function translate(text) {
  document.getElementById("error").textContent = "";
  const response = await fetch("/translate", {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({sentences: [text], attention: true}),
  });
  const body = await response.json();
  if (!response.ok) {
    document.getElementById("error").textContent = body.error;
    return;
  }
  document.getElementById("translation").textContent = body.translations[0];
  draw(body.attention[0]);
  document.body.dataset.done = "yes";
}
document.getElementById("form").addEventListener("submit", (event) => {
  event.preventDefault();
  translate(document.getElementById("text").value);
});
const q = new URLSearchParams(location.search).get("q");
if (q) { document.getElementById("text").value = q; translate(q); }
</script>
</body></html>
"""


logger = logging.getLogger("zoo.server")


def finite(value):
    """`value` (JSON-like: dicts, lists, numbers, strings) with every float that is not
    finite (a score of -inf, a NaN) replaced by None: JSON has no such numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def reply(status, payload, headers=None):
    """A JSON response (UTF-8, not ASCII-escaped), strict JSON: a float that is not finite
    is written null."""
    try:
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False)
    except ValueError:  # rare: rewritten only then, as a response may hold many numbers
        text = json.dumps(finite(payload), ensure_ascii=False, allow_nan=False)
    return Response(text.encode("utf-8"), status, headers, media_type="application/json")


def error(status, message, close=False, headers=None):
    headers = dict(headers or {})
    if close:  # the body may be unread: the connection cannot serve another request
        headers["Connection"] = "close"
    return reply(status, {"error": message}, headers)


async def read_body(request, limit):
    """The body's bytes, read as they come and refused (413) past `limit` bytes, whether
    the client declared its length or not (chunked)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestError(
            f"the body has {int(declared)} bytes; at most {limit} (max_request_bytes).",
            status=413,
            close=True,
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestError(
                f"the body is longer than {limit} bytes; at most {limit} (max_request_bytes).",
                status=413,
                close=True,
            )
        chunks.append(chunk)
    return b"".join(chunks)


async def _disconnected(request):
    """Returns once the client has gone (called after the body was read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def internal_error(exception, what):
    """A 500 whose body holds a short message and an id; the traceback goes to the log."""
    error_id = uuid.uuid4().hex[:12]
    logger.error("error %s: %s", error_id, what, exc_info=exception)
    return error(500, f"internal error (id {error_id}); the server's log has the details.")


async def translate(request):
    state = request.app.state
    limits = state.limits
    try:
        check_content_type(request.headers.get("content-type"))
        try:
            body = await asyncio.wait_for(
                read_body(request, limits.max_request_bytes), limits.read_timeout
            )
        except TimeoutError:
            raise RequestError(
                f"the body did not arrive within {limits.read_timeout:g} s (read_timeout).",
                status=408,
                close=True,
            ) from None
        options = check_request(parse_json(body), limits, state.default_beam_size)
        counter = getattr(state.translator, "source_lengths", None)  # a SavedModel has none
        if counter is not None and options["sentences"]:
            counts = await asyncio.to_thread(counter, options["sentences"])
            check_token_counts(options["sentences"], counts, limits)
    except RequestError as refused:
        return error(refused.status, str(refused), refused.close)
    except ClientDisconnect:  # gone before its body was read: nobody to answer
        return error(400, "the client closed the connection before sending its body.", True)
    try:
        job = state.batcher.submit(
            options, batch_key(options), len(options["sentences"]), client=request.client
        )
    except QueueFull:
        return error(
            503,
            f"the server is busy: {limits.max_queue} requests are waiting (max_queue); "
            "try again shortly.",
            headers={"Retry-After": "1"},
        )
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait(
            {job.future, gone}, timeout=limits.request_timeout,
            return_when=asyncio.FIRST_COMPLETED,
        )  # fmt: skip
    finally:
        gone.cancel()
        if not job.future.done():  # timed out, the client left, or the server stops
            state.batcher.drop(job)
    if not job.future.done():
        if gone.done() and not gone.cancelled():
            logger.info("a client left before its answer; its request was dropped")
            return error(499, "the client closed the connection.")
        return error(
            504,
            f"no answer within {limits.request_timeout:g} s (request_timeout); the server is "
            "busy, try again later.",
        )
    outcome = job.future.result()
    if isinstance(outcome, QueueFull):
        return error(503, f"{outcome}; try again shortly.", headers={"Retry-After": "1"})
    if isinstance(outcome, ValueError):  # a value the library refuses: its message
        return error(getattr(outcome, "status", 400), str(outcome))
    if isinstance(outcome, BaseException):
        return internal_error(outcome, "POST /translate failed")
    return reply(200, outcome)


async def page(request):
    return HTMLResponse(PAGE)


async def health(request):
    return reply(200, {"status": "ok"})


async def config(request):
    state = request.app.state
    translator = state.translator
    get_config = getattr(translator, "get_config", None)
    settings = get_config() if get_config else {"beam_size": state.default_beam_size}
    model_dir = os.path.basename(os.path.normpath(state.model_dir)) if state.model_dir else None
    return reply(
        200,
        {
            "model_dir": model_dir,
            **settings,
            "limits": state.limits.as_dict(),
            "load": state.batcher.load(),
        },
    )


async def http_error(request, exc):
    if exc.status_code == 404:
        return error(404, f"no such path {request.url.path!r}; try POST /translate.")
    if exc.status_code == 405:
        return error(405, f"{request.method} {request.url.path} is not served.",
                     headers=exc.headers)  # fmt: skip
    return error(exc.status_code, exc.detail, headers=exc.headers)


def make_app(translator, model_dir=None, limits=None):
    """The ASGI application (Starlette) that answers with `translator`; `limits` is a
    `ServerLimits` (its defaults if None). Serve it with uvicorn, or with `make_server`."""
    limits = limits or ServerLimits()
    default_beam_size = getattr(translator, "beam_size", None) or 1
    if default_beam_size > limits.max_beam_size:
        raise ValueError(
            f"the translator's beam size, {default_beam_size}, is above max_beam_size="
            f"{limits.max_beam_size}: the requests that name no beam_size would search wider "
            "than the server lets a request ask for."
        )
    batch_size = limits.max_batch_size or getattr(translator, "batch_size", None)
    batch_size = batch_size or FALLBACK_BATCH_SIZE
    batcher = Batcher(
        functools.partial(run_batch, translator),
        max_batch_size=batch_size,
        max_wait_s=limits.max_wait_ms / 1000,
        max_queue=limits.max_queue,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await batcher.start()
        try:
            yield
        finally:
            await batcher.stop()

    app = Starlette(
        routes=[
            Route("/", page, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/config", config, methods=["GET"]),
            Route("/translate", translate, methods=["POST"]),
        ],
        exception_handlers={HTTPException: http_error},
        lifespan=lifespan,
    )
    app.state.translator = translator
    app.state.model_dir = None if model_dir is None else os.fspath(model_dir)
    app.state.limits = limits
    app.state.batcher = batcher
    app.state.default_beam_size = default_beam_size
    return app
