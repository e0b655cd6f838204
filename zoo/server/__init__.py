"""A translation server: JSON over HTTP (Starlette served by uvicorn), requests batched.

    python -m zoo serve saved_models/luong_local_general --port 8080
    curl -s localhost:8080/translate -H 'Content-Type: application/json' \
        -d '{"sentences": ["Ein Hund rennt."]}'
    {"translations": ["A dog is running."], "scores": [-2.41]}

Endpoints:
- `GET /`: a page where a person types a sentence and sees its translation and attention
  heatmap (it calls `POST /translate` with `"attention": true`; `/?q=TEXT` translates TEXT
  on load).
- `GET /health`: `{"status": "ok"}`.
- `GET /config`: the model folder's name, its search settings (`Translator.get_config`),
  the server's limits and its load (requests waiting; batches, requests run and requests
  dropped so far).
- `POST /translate` with a JSON object (`Content-Type: application/json`):
    sentences: list of str (required; empty strings translate to "");
    beam_size: int (optional; the folder's translator.json otherwise);
    n_best: int, also return the n best translations and scores of each sentence (at most
      the beam size);
    alignments: true, also return each translation's word alignment (Pharaoh format);
    attention: true, also return each translation's tokens and attention weights;
    replace_unknown: true, replace <unk> by the attended source word (zoo.unknown_words);
    sample: {temperature, top_k, top_p, seed}, draw translations instead of searching;
    min_length, no_repeat_ngram_size: int >= 0; ban_unknown: true, the decoding controls;
    prefix: list of str, per sentence the target text its translation starts with ("": none);
    constraints: per sentence a list of target phrases its translation contains ([]: none).
  It answers `{"translations": [...], "scores": [...]}` (one per sentence, in order; the
  search scores), plus `n_best` (per sentence a list of `{"translation", "score"}`),
  `alignments` and `attention` (per sentence `{"source_tokens", "target_tokens",
  "weights"}`, weights a list of rows, one per target token) when asked. A sampled request
  answers `translations` only. Answers are strict JSON: a score that is not finite (-inf,
  NaN) is null.

Every error is answered `{"error": message}`: 400 (a bad value, named), 404 (another
path), 405 (another method), 408 (a body slower than `read_timeout`), 413 (over a size
limit, named), 415 (a POST body that is not `application/json`), 500 (a failure of the
model: a short message and an id, the traceback in the log under that id), 503 (the queue
is full), 504 (no answer within `request_timeout`). The limits are `ServerLimits`'s fields
(`zoo/server/limits.py`). A request whose client leaves while it waits is dropped unrun.

The parts, one role each: `validation.py` (the body's checks), `batcher.py` (the queue and
the worker thread that runs the model), `translation.py` (what a request asks of the
translator, and a batch of requests in one call), `app.py` (the routes and answers),
`http_server.py` (uvicorn, the socket and the connection timeouts), `page.py` (the page).
The package imports nothing of zoo outside itself: it is handed a translator (a
`zoo.translator.Translator` or a `zoo.export.SavedModelTranslator`).
"""

from zoo.server.app import make_app
from zoo.server.http_server import HttpServer
from zoo.server.limits import MAX_REQUEST_BYTES, ServerLimits
from zoo.server.translation import translate_request
from zoo.server.validation import RequestError

__all__ = [
    "MAX_REQUEST_BYTES",
    "HttpServer",
    "RequestError",
    "ServerLimits",
    "make_app",
    "make_server",
    "translate_request",
]


def make_server(translator, host="127.0.0.1", port=8080, model_dir=None, **limits):
    """An HTTP server (not yet serving) that answers with `translator`; call
    `serve_forever()` on it (and `shutdown()` from another thread to stop it). `port=0`
    picks a free port: read it from `server.server_address[1]`. `limits` are fields of
    `ServerLimits` (e.g. `max_sentences=20`); `/config` shows only the last part of
    `model_dir`."""
    limits = ServerLimits(**limits)
    return HttpServer(make_app(translator, model_dir, limits), host, port, limits)
