"""`python -m zoo list` and `python -m zoo push`: the shipped translators, and publishing a
folder on the Hugging Face Hub (`zoo.hub`)."""

import json
import os
import sys

from zoo.cli.flags import MODEL_HELP, add_debug_flag
from zoo.constants import CONFIG_FILE, RUN_FILE
from zoo.hub import HUB_PREFIX, SAVED_MODELS, push_translator, shipped_translators


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
