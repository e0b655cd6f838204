"""`python -m zoo serve`: translations as JSON over HTTP."""

import logging
import os
import sys

from zoo.checks import argparse_number, positive_float, positive_int
from zoo.cli.flags import MODEL_HELP, add_search_flags, check_input_file
from zoo.cli.loading import SEARCH_FLAGS, is_saved_model, load_translator, search_overrides
from zoo.errors import UsageError
from zoo.server import HttpServer, ServerLimits, make_app, make_server
from zoo.server.http_server import bind
from zoo.server.limits import BATCH_SIZE_DEFAULT, limit_default, limit_help
from zoo.translator.output_folder import CONFIG_FILE
from zoo.workflow.flags import library_default

MAX_PORT = 65535
ENGINES = ("keras", "litert-int8")

# The limits as flags: (field of ServerLimits, argparse type, the default's text, None: the
# value itself).
LIMIT_FLAGS = (
    ("max_request_bytes", positive_int, None),
    ("max_header_bytes", positive_int, None),
    ("max_sentences", positive_int, None),
    ("max_sentence_chars", positive_int, None),
    ("max_sentence_tokens", positive_int, None),
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


# --port's type: an integer in [0, 65535] (0: any free port).
port_number = argparse_number(
    int, 0, False, f"a port, an integer from 0 to {MAX_PORT} (0: any free port)", maximum=MAX_PORT
)


def check_default_beam(beam_size, max_beam_size, source):
    """A UsageError when the beam size of requests that name none (`source` says where it
    comes from) is above --max-beam-size: those requests would search wider than the
    server lets any request ask for."""
    if beam_size is not None and beam_size > max_beam_size:
        raise UsageError(
            f"the default beam size, {beam_size} ({source}), is above --max-beam-size "
            f"{max_beam_size}: requests that name no beam_size use it. Give --beam-size at "
            f"most {max_beam_size}, or --max-beam-size {beam_size} or more."
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
        help=f"{MODEL_HELP}, or its serving/ SavedModel (its beam size and sampling "
        "settings are those fixed at export)",
    )
    serve.add_argument(
        "--engine",
        choices=ENGINES,
        default=ENGINES[0],
        help="what runs the model: keras (the model folder's Translator, every request "
        "option) or litert-int8 (a LiteRT file of int8 weights made from the folder once "
        "and kept in $ZOO_CACHE_DIR/litert/: several times faster one sentence at a time; "
        "no sample, n_best, attention or decoding controls) (default: %(default)s; a .tflite "
        "MODEL_DIR is served as it is)",
    )
    serve.add_argument(
        "--host",
        default=library_default(make_server, "host"),
        help="address to listen on; 0.0.0.0 opens the server to the network (default: %(default)s)",
    )
    serve.add_argument(
        "--port",
        type=port_number,
        default=library_default(make_server, "port"),
        help=f"port, 0 to {MAX_PORT} (default: %(default)s; 0: any free port)",
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


def load_engine(args, limits, out):
    """The translator `--engine` names for MODEL_DIR: `load_translator`'s (keras), or a
    `LiteRTTranslator` of a .tflite MODEL_DIR or of the folder's int8 file (litert-int8)."""
    from zoo.export.litert_translator import LiteRTTranslator, engine_file

    if args.model_dir.endswith(".tflite"):
        given = [
            f"--{name.replace('_', '-')}"
            for name in SEARCH_FLAGS
            if getattr(args, name) is not None
        ]
        if given or args.ensemble:
            raise UsageError(
                f"{args.model_dir} is a LiteRT file, its search fixed at export; received "
                f"{', '.join(given or ['--ensemble'])}."
            )
        return LiteRTTranslator(check_input_file(args.model_dir, "MODEL_DIR"))
    if args.engine == "keras":
        return load_translator(args)
    if is_saved_model(args.model_dir) or args.ensemble:
        raise UsageError(
            f"--engine {args.engine} converts a model folder (model.keras) alone; received "
            + ("--ensemble." if args.ensemble else f"the SavedModel {args.model_dir}.")
        )
    from zoo.translator import Translator

    overrides = search_overrides(args)
    batch_size = limits.max_batch_size or overrides.pop("batch_size", None)
    translator = Translator.from_directory(args.model_dir, args.model_file, **overrides)
    return LiteRTTranslator(engine_file(translator, "int8", batch_size, out))


def run_serve(args, out=None, ready=None):
    """Serves until Ctrl-C. `ready(server)` (for tests) is called once it listens."""
    out = sys.stdout if out is None else out
    # The server's log (requests, and the traceback of each 500 under its id) on stderr.
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    limits = ServerLimits(**{name: getattr(args, name) for name, _, _ in LIMIT_FLAGS})
    check_default_beam(args.beam_size, limits.max_beam_size, "--beam-size")
    # Bound before the model loads, so that a busy port or a bad --host is reported at once;
    # clients are refused until it listens, once the model is loaded.
    sock = bind(args.host, args.port)
    try:
        translator = load_engine(args, limits, out)
        check_default_beam(
            getattr(translator, "beam_size", None),
            limits.max_beam_size,
            "fixed at export"
            if is_saved_model(args.model_dir) or args.model_dir.endswith(".tflite")
            else os.path.join(args.model_dir, CONFIG_FILE),
        )
        app = make_app(translator, os.fspath(args.model_dir), limits)
        server = HttpServer(app, args.host, args.port, limits, sock=sock)
    except BaseException:
        sock.close()
        raise
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
