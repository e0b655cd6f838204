"""A translation server: JSON over HTTP, with the Python standard library only.

    python -m zoo serve saved_models/luong_local_general --port 8080
    curl -s localhost:8080/translate -d '{"sentences": ["Ein Hund rennt."]}'
    {"translations": ["A dog is running."]}

Endpoints:
- `GET /`: a page where a person types a sentence and sees its translation and attention
  heatmap (it calls `POST /translate` with `"attention": true`; `/?q=TEXT` translates TEXT
  on load).
- `GET /health`: `{"status": "ok"}`.
- `GET /config`: the model folder and its search settings (`Translator.get_config`).
- `POST /translate` with a JSON object:
    sentences: list of str (required; empty strings translate to "");
    beam_size: int (optional; the folder's translator.json otherwise);
    n_best: int, also return the n best translations and scores of each sentence;
    alignments: true, also return each translation's word alignment (Pharaoh format);
    attention: true, also return each translation's tokens and attention weights;
    replace_unknown: true, replace <unk> by the attended source word (zoo.unknown_words);
    sample: {temperature, top_k, top_p, seed}, draw translations instead of searching.
  It answers `{"translations": [...], "scores": [...]}` (one per sentence, in order; the
  search scores), plus `n_best` (per sentence a list of `{"translation", "score"}`),
  `alignments` and `attention` (per sentence `{"source_tokens", "target_tokens",
  "weights"}`, weights a list of rows, one per target token) when asked. A sampled request
  answers `translations` only.

A request the server cannot honour gets status 400 (a bad value, with a message naming
it), 404 (another path), 413 (a body over `max_request_bytes`) or 500 (a failure of the
model), always with `{"error": message}`. Requests are served one at a time by one
`Translator` (its traced searches are reused; a lock keeps two requests from interleaving
their batches); a request's sentences are translated together, sorted by length and
batched as `Translator.translate` does.
"""

import http.server
import json
import logging
import threading

logger = logging.getLogger("zoo.server")

MAX_REQUEST_BYTES = 1 << 20
_NEG_INF = float("-inf")  # an n-best entry that does not exist (tiny vocabularies)
_OPTIONS = (
    "sentences",
    "beam_size",
    "n_best",
    "alignments",
    "attention",
    "replace_unknown",
    "sample",
)


class RequestError(ValueError):
    """A request the server cannot honour: answered with `status` and the message."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


def _request_options(body):
    try:
        request = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RequestError(f"the body must be a JSON object in UTF-8: {error}") from None
    if not isinstance(request, dict):
        raise RequestError(f"the body must be a JSON object, received {type(request).__name__}.")
    unknown = sorted(set(request) - set(_OPTIONS))
    if unknown:
        raise RequestError(f"unknown field(s) {unknown}; expected some of {list(_OPTIONS)}.")
    if "sentences" not in request:
        raise RequestError('the field "sentences" (a list of strings) is required.')
    sample = request.get("sample")
    if sample is not None and not isinstance(sample, dict):
        raise RequestError('"sample" must be an object of temperature, top_k, top_p, seed.')
    return request


def translate_request(translator, request):
    """The response object of a `POST /translate` request (a dict, module docstring)."""
    sentences, beam_size = request["sentences"], request.get("beam_size")
    sample = request.get("sample")
    if sample is not None:
        asked = [k for k in ("n_best", "alignments", "attention", "replace_unknown", "beam_size")
                 if request.get(k)]  # fmt: skip
        if asked:
            raise RequestError(f'"sample" cannot be combined with {asked}.')
        return {"translations": translator.sample(sentences, **sample)}
    if not _has_attention(translator):  # a SavedModel exported with attention=False
        asked = [k for k in ("alignments", "attention", "replace_unknown") if request.get(k)]
        if asked:
            raise RequestError(f"{asked} need the attention, which this SavedModel leaves out.")
        response = {"translations": translator.translate(sentences, beam_size=beam_size)}
        if request.get("n_best"):
            response["n_best"] = _n_best(translator, sentences, request["n_best"], beam_size)
        return response
    translations = translator.translate_with_attention(sentences, beam_size=beam_size)
    response = {
        "translations": [t.translation for t in translations],
        "scores": [t.score for t in translations],
    }
    if request.get("replace_unknown"):
        if hasattr(translator, "replace_unknown"):  # a Translator
            response["translations"] = translator.replace_unknown(translations)
        else:  # a SavedModelTranslator: its translation_unk_replaced output
            response["translations"] = translator.translate(
                sentences, beam_size=beam_size, replace_unknown=True
            )
    if request.get("alignments"):
        response["alignments"] = [t.alignment() for t in translations]
    if request.get("attention"):
        response["attention"] = [
            {
                "source_tokens": t.source_tokens,
                "target_tokens": t.target_tokens,
                "weights": [[round(float(w), 4) for w in row] for row in t.weights],
            }
            for t in translations
        ]
    if request.get("n_best"):
        response["n_best"] = _n_best(translator, sentences, request["n_best"], beam_size)
    return response


def _has_attention(translator):
    outputs = getattr(translator, "metadata", {}).get("outputs")  # a SavedModelTranslator's
    return outputs is None or "attention" in outputs


def _n_best(translator, sentences, n, beam_size):
    if beam_size is None:  # a SavedModel has no beam_size argument
        lists = translator.translate_n_best(sentences, n)
    else:
        lists = translator.translate_n_best(sentences, n, beam_size=beam_size)
    return [
        [{"translation": text, "score": score} for text, score in entries if score != _NEG_INF]
        for entries in lists
    ]


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "zoo"

    def _send(self, status, text, content_type):
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _reply(self, status, payload):
        self._send(status, json.dumps(payload, ensure_ascii=False), "application/json")

    def do_GET(self):
        if self.path == "/" or self.path.startswith("/?"):
            return self._send(200, PAGE, "text/html")
        if self.path == "/health":
            return self._reply(200, {"status": "ok"})
        if self.path == "/config":
            config = {"model_dir": self.server.model_dir, **self.server.translator.get_config()}
            return self._reply(200, config)
        return self._reply(404, {"error": f"no such path {self.path!r}; try POST /translate."})

    def do_POST(self):
        if self.path != "/translate":
            return self._reply(404, {"error": f"no such path {self.path!r}; try POST /translate."})
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length > self.server.max_request_bytes:
                raise RequestError(
                    f"the body has {length} bytes; at most {self.server.max_request_bytes}.", 413
                )
            request = _request_options(self.rfile.read(length))
            with self.server.lock:
                response = translate_request(self.server.translator, request)
        except (RequestError, ValueError, TypeError) as error:
            return self._reply(getattr(error, "status", 400), {"error": str(error)})
        except Exception as error:  # a failure of the model: the server keeps serving
            logger.exception("POST /translate failed")
            return self._reply(500, {"error": f"{type(error).__name__}: {error}"})
        return self._reply(200, response)

    def log_message(self, format, *args):  # through logging, not stderr
        logger.info("%s %s", self.address_string(), format % args)


def make_server(translator, host="127.0.0.1", port=8080, model_dir=None, max_request_bytes=None):
    """An HTTP server (not yet serving) that answers with `translator`; call
    `serve_forever()` on it (and `shutdown()` from another thread to stop it). `port=0`
    picks a free port: read it from `server.server_address[1]`."""
    server = http.server.ThreadingHTTPServer((host, port), _Handler)
    server.translator, server.model_dir = translator, model_dir
    server.max_request_bytes = max_request_bytes or MAX_REQUEST_BYTES
    server.lock = threading.Lock()
    return server


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
