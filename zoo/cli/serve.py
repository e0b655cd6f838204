"""`python -m zoo serve`: translations as JSON over HTTP."""

import os
import sys

from zoo.checks import non_negative_int, positive_int
from zoo.cli.flags import add_search_flags
from zoo.cli.loading import load_translator
from zoo.server import MAX_REQUEST_BYTES, make_server
from zoo.workflow.flag_types import library_default


def add_serve_command(commands):
    serve = commands.add_parser(
        "serve",
        help="serve translations as JSON over HTTP (zoo.server)",
        description='Answer POST /translate {"sentences": [...]} with {"translations": '
        "[...]} (also n_best, alignments, replace_unknown, sample; GET /health, GET /config). "
        "See zoo/server.py for the protocol and docs/serving.md. Stop with Ctrl-C.",
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
        help="address to listen on (default: %(default)s)",
    )
    serve.add_argument(
        "--port",
        type=non_negative_int,
        default=library_default(make_server, "port"),
        help="port (default: %(default)s; 0: any)",
    )
    serve.add_argument(
        "--max-request-bytes",
        type=positive_int,
        default=MAX_REQUEST_BYTES,
        help="largest request body accepted (default: %(default)s)",
    )
    add_search_flags(serve)


def run_serve(args, out=None, ready=None):
    """Serves until Ctrl-C. `ready(server)` (for tests) is called once it listens."""
    out = sys.stdout if out is None else out
    translator = load_translator(args)
    server = make_server(
        translator,
        args.host,
        args.port,
        model_dir=os.fspath(args.model_dir),
        max_request_bytes=args.max_request_bytes,
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
