"""`python -m zoo export`: a model folder as a LiteRT (TFLite) translator file.

`python -m zoo list` and `python -m zoo push`: the shipped translators, and publishing a
folder on the Hugging Face Hub (`zoo.hub`).
"""

import json
import os
import sys

from zoo.checks import argparse_number, positive_int
from zoo.cli.flags import (
    MODEL_HELP,
    add_debug_flag,
    add_model_file_flag,
    check_output_path,
    folder_default,
)
from zoo.constants import CONFIG_FILE, RUN_FILE
from zoo.errors import UsageError
from zoo.export.litert import MAX_BATCH_SIZE, QUANTIZATIONS, SEARCHES, export_litert, sidecar
from zoo.hub import HUB_PREFIX, SAVED_MODELS, push_translator, shipped_translators
from zoo.search.defaults import BEAM_SIZE
from zoo.workflow.flags import library_default

FORMATS = ("tflite",)


def add_export_command(commands):
    export = commands.add_parser(
        "export",
        help="write a model folder's model and search as a LiteRT (TFLite) file",
        description="Convert MODEL_DIR's model, with greedy or beam search inside, to one "
        ".tflite file of TFLite builtin operators (zoo.export.export_litert): source ids in, "
        "target ids out, for ai_edge_litert's interpreter without zoo or TensorFlow (a beam "
        "file holds greedy search too, its signature 'greedy'). The "
        "tokenizers and the settings are written beside it (FILE's stem + "
        ".source_tokenizer/, .target_tokenizer/, .json). The SavedModel is MODEL_DIR/serving, "
        "which training writes. Guide: docs/serving.md, 'LiteRT (TFLite)'.",
    )
    export.add_argument("model_dir", metavar="MODEL_DIR", help=MODEL_HELP)
    export.add_argument(
        "--format", choices=FORMATS, default=FORMATS[0], help="file format (default: %(default)s)"
    )
    export.add_argument("--out", required=True, metavar="FILE", help="the .tflite file to write")
    export.add_argument(
        "--quantize",
        choices=QUANTIZATIONS,
        default=library_default(export_litert, "quantize"),
        help="weights: none (float32), float16 (half the size) or int8 (dynamic-range "
        "quantization, a quarter) (default: %(default)s; measured sizes and BLEU: "
        "bench/RESULTS.md)",
    )
    export.add_argument(
        "--search",
        choices=SEARCHES,
        default=library_default(export_litert, "search"),
        help="the search inside the file (default: %(default)s)",
    )
    export.add_argument(
        "--beam-size",
        type=positive_int,
        default=None,
        help=f"beam search's K, with --search beam ({folder_default(BEAM_SIZE)})",
    )
    export.add_argument(
        "--batch-size",
        type=argparse_number(
            int, 1, False, f"an integer from 1 to {MAX_BATCH_SIZE}", maximum=MAX_BATCH_SIZE
        ),
        default=library_default(export_litert, "batch_size"),
        help="the file's fixed batch: sentences per call, short batches padded "
        f"(default: %(default)s; at most {MAX_BATCH_SIZE})",
    )
    add_model_file_flag(export)
    add_debug_flag(export)


def run_export(args, out=None):
    """Writes the .tflite file of --out and the files beside it."""
    from zoo.translator import Translator

    out = sys.stdout if out is None else out
    path = check_output_path(args.out, "--out", [("MODEL_DIR", args.model_dir)])
    if not path.endswith(".tflite"):
        raise UsageError(f"--out must name a .tflite file; received {path!r}.")
    check_output_path(
        sidecar(path, "json"), "--out's settings file", [("MODEL_DIR", args.model_dir)]
    )
    if args.search == "greedy" and args.beam_size not in (None, 1):
        raise UsageError("--beam-size is for --search beam (greedy search has beam size 1).")
    translator = Translator.from_directory(args.model_dir, model_file=args.model_file)
    export_litert(
        translator,
        path,
        quantize=args.quantize,
        search=args.search,
        beam_size=args.beam_size,
        batch_size=args.batch_size,
    )
    size = os.path.getsize(path) / 2**20
    print(f"Wrote {path} ({size:.1f} MiB, {args.quantize} weights, {args.search} search)", file=out)
    print(
        f"Settings: {sidecar(path, 'json')}; tokenizers: {sidecar(path, '*_tokenizer')}/", file=out
    )
    return 0


def add_list_command(commands):
    listing = commands.add_parser(
        "list",
        help="list the trained translators shipped in saved_models/",
        description="The shipped translators: trained folders in the checkout's "
        "saved_models/ with a model card (README.md), which every command takes by name "
        "(python -m zoo translate NAME ...). Architectures are presets: python -m zoo params.",
    )
    add_debug_flag(listing)


def add_push_command(commands):
    push = commands.add_parser(
        "push",
        help="upload a trained folder to the Hugging Face Hub",
        description="Upload MODEL_DIR's model file, tokenizers, translator.json, run.json "
        "and model card (README.md; a minimal one when it has none) to the Hub repository "
        f"HANDLE ({HUB_PREFIX}owner/name, created if missing). Needs huggingface_hub "
        '(pip install "zoo-nmt[hub]") and a token (hf auth login, or HF_TOKEN).',
    )
    push.add_argument("model_dir", metavar="MODEL_DIR", help=MODEL_HELP)
    push.add_argument("handle", metavar="HANDLE", help=f"{HUB_PREFIX}owner/name[@revision]")
    push.add_argument("--private", action="store_true", help="create the repository private")
    add_debug_flag(push)


def _summary(name):
    folder = SAVED_MODELS / name
    info = {}
    for file in (CONFIG_FILE, RUN_FILE):
        try:
            info.update(json.loads((folder / file).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass
    pair = f"{info.get('source_lang', '?')}->{info.get('target_lang', '?')}"
    return f"{name}  {info.get('data', '?')} {pair}, recipe {info.get('recipe', '?')}"


def run_list(args, out=None):
    """Prints one line per shipped translator."""
    out = sys.stdout if out is None else out
    names = shipped_translators()
    if not names:
        print(f"No shipped translators in {SAVED_MODELS}.", file=out)
    for name in names:
        print(_summary(name), file=out)
    return 0


def run_push(args, out=None):
    """Uploads MODEL_DIR to HANDLE."""
    out = sys.stdout if out is None else out
    url = push_translator(os.fspath(args.model_dir), args.handle, private=args.private)
    print(f"Pushed {args.model_dir} to {url}", file=out)
    return 0
