"""`python -m zoo serve`: translations as JSON over HTTP."""

import logging
import os
import sys

from zoo.checks import non_negative_int, positive_float, positive_int
from zoo.cli.flags import add_search_flags
from zoo.cli.loading import load_translator
from zoo.server import ServerLimits, make_server
from zoo.server.limits import BATCH_SIZE_DEFAULT, limit_default, limit_help
from zoo.workflow.flag_types import library_default

# The limits as flags: (field of ServerLimits, argparse type, the default's text, None: the
# value itself).
LIMIT_FLAGS = (
    ("max_request_bytes", positive_int, None),
    ("max_sentences", positive_int, None),
    ("max_sentence_chars", positive_int, None),
    ("max_beam_size", positive_int, None),
    ("max_beam_sentences", positive_int, None),
    ("max_batch_size", positive_int, f" (default: {BATCH_SIZE_DEFAULT}, --batch-size)"),
    ("max_wait_ms", positive_float, None),
    ("max_queue", positive_int, None),
    ("request_timeout", positive_float, None),
    ("read_timeout", positive_float, None),
    ("keep_alive_timeout", positive_float, None),
    ("backlog", positive_int, None),
    ("max_connections", positive_int, None),
)


def add_serve_command(commands):
    serve = commands.add_parser(
        "serve",
        help="serve translations as JSON over HTTP (zoo.server)",
        description='Answer POST /translate {"sentences": [...]} (Content-Type: '
        'application/json) with {"translations": [...]} (also n_best, alignments, '
        "replace_unknown, sample, the decoding controls, prefix and constraints; GET "
        "/health, GET /config, and a page at GET /). Requests "
        "with the same options that arrive within --max-wait-ms are translated in one "
        "batch. See docs/serving.md for the protocol, the limits and the error statuses. "
        "Stop with Ctrl-C.",
    )
    serve.add_argument(
        "model_dir",
        metavar="MODEL_DIR",
        help="a zoo output folder, or its serving/ SavedModel (its beam size and sampling "
        "settings are those fixed at export)",
    )
    serve.add_argument(
        "--host",
        default=library_default(make_server, "host"),
        help="address to listen on; 0.0.0.0 opens the server to the network (default: %(default)s)",
    )
    serve.add_argument(
        "--port",
        type=non_negative_int,
        default=library_default(make_server, "port"),
        help="port (default: %(default)s; 0: any)",
    )
    limits = serve.add_argument_group(
        "limits", "what one request may ask, batching, and how long clients may take"
    )
    for name, kind, default_text in LIMIT_FLAGS:
        shown = " (default: %(default)s)" if default_text is None else default_text
        limits.add_argument(
            "--" + name.replace("_", "-"),
            type=kind,
            default=limit_default(name),
            help=limit_help(name) + shown,
        )
    add_search_flags(serve)


def run_serve(args, out=None, ready=None):
    """Serves until Ctrl-C. `ready(server)` (for tests) is called once it listens."""
    out = sys.stdout if out is None else out
    # The server's log (requests, and the traceback of each 500 under its id) on stderr.
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    limits = {name: getattr(args, name) for name, _, _ in LIMIT_FLAGS}
    ServerLimits(**limits)  # checked before the model loads
    translator = load_translator(args)
    server = make_server(
        translator, args.host, args.port, model_dir=os.fspath(args.model_dir), **limits
    )
    host, port = server.server_address[:2]
    print(f"Serving {args.model_dir} on http://{host}:{port}/translate (Ctrl-C stops)", file=out)
    out.flush()
    if ready is not None:
        ready(server)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
