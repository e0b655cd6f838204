"""`python -m zoo score`: the model's log-probability of given translations (forced
decoding), pair by pair."""

import sys

from zoo.checks import positive_int
from zoo.cli.aer import read_text_lines
from zoo.cli.flags import (
    MODEL_HELP,
    add_debug_flag,
    add_model_file_flag,
    check_output_path,
    folder_default,
)
from zoo.cli.loading import is_saved_model
from zoo.search import defaults as search_defaults


def add_score_command(commands):
    score = commands.add_parser(
        "score",
        help="score given translations: each pair's log-probability under the model",
        description="Force the model to output each --target line as the translation of its "
        "--source line and print, one line per pair, the log-probability of its tokens and "
        "END in total and per token, tab-separated (Translator.score: minus the pair's "
        "training loss without label smoothing). For filtering corpora and reranking.",
    )
    score.add_argument("model_dir", metavar="MODEL_DIR", help=MODEL_HELP)
    score.add_argument(
        "--source",
        required=True,
        metavar="FILE",
        help="source sentences, one per line (UTF-8; lines end at a newline, LF or CRLF, alone)",
    )
    score.add_argument(
        "--target", required=True, metavar="FILE", help="their translations, line by line"
    )
    score.add_argument(
        "--output",
        default=None,
        metavar="FILE",
        help="write the scores to this file (default: standard output)",
    )
    score.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        help="pairs per pass, sorted by length first "
        f"({folder_default(search_defaults.BATCH_SIZE)})",
    )
    add_model_file_flag(score)
    add_debug_flag(score)


def run_score(args, out=None):
    """Prints (or writes to --output) each pair's total and per-token log-probability."""
    out = sys.stdout if out is None else out
    reads = [("--source", args.source), ("--target", args.target), ("MODEL_DIR", args.model_dir)]
    check_output_path(args.output, "--output", reads)  # before any work
    if is_saved_model(args.model_dir):
        raise ValueError(
            f"{args.model_dir} is a SavedModel; `score` needs the output folder that holds "
            "model.keras (usually its parent)."
        )
    sources = read_text_lines(args.source, "--source")
    targets = read_text_lines(args.target, "--target")
    if len(sources) != len(targets):
        raise ValueError(
            f"--source {args.source} and --target {args.target} must have one line per pair: "
            f"{len(sources)} and {len(targets)} lines."
        )
    from zoo.translator import Translator

    translator = Translator.from_directory(args.model_dir, model_file=args.model_file)
    scores = translator.score(sources, targets, batch_size=args.batch_size)
    lines = [f"{total:.4f}\t{per_token:.4f}\n" for total, per_token in scores]
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.writelines(lines)
    else:
        out.writelines(lines)
        out.flush()
    return 0
