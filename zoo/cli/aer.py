"""`python -m zoo aer`: the attention's word alignments scored against gold ones."""

import os
import sys

from zoo.checks import positive_int
from zoo.cli.flags import MODEL_HELP, add_debug_flag, add_model_file_flag, check_output_path
from zoo.evaluation import forced_alignments
from zoo.workflow.flags import library_default


def add_aer_command(commands):
    aer = commands.add_parser(
        "aer",
        help="score the model's attention as word alignments (AER) against a gold file",
        description="Force the model to output each reference translation, read a hard word "
        "alignment from its attention (each target word's highest-weight source word) and "
        "score it with Och and Ney's alignment error rate, as Luong et al. 2015 section 5.4. "
        "Prints AER, precision and recall.",
    )
    aer.add_argument("model_dir", metavar="MODEL_DIR", help=MODEL_HELP)
    aer.add_argument(
        "--source",
        required=True,
        help="source sentences, one per line (UTF-8; lines end at a newline, LF or CRLF, alone)",
    )
    aer.add_argument("--target", required=True, help="their reference translations, line by line")
    aer.add_argument(
        "--gold",
        required=True,
        help="gold alignments, one line per pair: links i-j (sure) and i?j (possible), word "
        "indices 0-based (ASCII digits, each inside its pair's whitespace-separated words), "
        "source first",
    )
    aer.add_argument(
        "--output", default=None, help="also write the predicted alignments (Pharaoh) here"
    )
    aer.add_argument(
        "--batch-size",
        type=positive_int,
        default=library_default(forced_alignments, "batch_size"),
        help="pairs per pass (default: %(default)s)",
    )
    add_model_file_flag(aer)
    add_debug_flag(aer)


def read_text_lines(path, flag):
    """The lines of the UTF-8 text file `path` (given as `flag`), split on "\\n" alone: a
    U+2028, U+0085 or form feed inside a sentence stays in it (`str.splitlines` would cut
    the sentence there), and a "\\r" before the "\\n" is dropped. A ValueError names the file
    (and line) when it is a folder, is not UTF-8 or ends its lines with "\\r" alone."""
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path}: a folder, not a text file.")
    if not os.path.exists(path):
        raise ValueError(f"{flag} {path}: no such file.")
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines[-1] == b"":  # the newline that ends the last line
        lines.pop()
    texts = []
    for number, line in enumerate(lines, start=1):
        line = line[:-1] if line.endswith(b"\r") else line
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(
                f"{flag} {path}, line {number}: not valid UTF-8 ({error.reason} at byte "
                f"{error.start})."
            ) from None
        if "\r" in text:
            raise ValueError(
                f"{flag} {path}, line {number}: a carriage return inside the line; lines must "
                "end with a newline (LF or CRLF), not a carriage return alone (old Mac files)."
            )
        texts.append(text)
    return texts


def read_pairs(args):
    """(sources, targets, gold (sure, possible) per pair) of --source, --target and --gold,
    checked: one line per pair, at least one pair, every gold link inside its pair's words,
    and at least one link in all."""
    from zoo.evaluation import parse_gold

    sources = read_text_lines(args.source, "--source")
    targets = read_text_lines(args.target, "--target")
    gold_lines = read_text_lines(args.gold, "--gold")
    if not len(sources) == len(targets) == len(gold_lines):
        raise ValueError(
            f"--source, --target and --gold must have one line per pair: {len(sources)}, "
            f"{len(targets)} and {len(gold_lines)} lines."
        )
    if not sources:
        raise ValueError(f"--source {args.source}, --target and --gold are empty: no pairs.")
    gold = [
        parse_gold(line, f"--gold {args.gold}, line {n}", len(s.split()), len(t.split()))
        for n, (line, s, t) in enumerate(zip(gold_lines, sources, targets, strict=True), 1)
    ]
    if not any(sure or possible for sure, possible in gold):
        raise ValueError(
            f"--gold {args.gold} holds no link on any of its {len(gold)} lines: the AER "
            "would be 1.0 whatever the model; expected links i-j (sure) and i?j (possible)."
        )
    return sources, targets, gold


def run_aer(args, out=None):
    """Prints the AER, precision and recall of the model's alignments on --source/--target."""
    out = sys.stdout if out is None else out
    from zoo.evaluation import alignment_error_rate, format_pharaoh
    from zoo.translator.output_folder import load_parts

    reads = [("--source", args.source), ("--target", args.target), ("--gold", args.gold)]
    check_output_path(args.output, "--output", [*reads, ("MODEL_DIR", args.model_dir)])
    sources, targets, gold = read_pairs(args)
    model, source_tokenizer, target_tokenizer = load_parts(args.model_dir, args.model_file)
    links = forced_alignments(
        model, source_tokenizer, target_tokenizer, sources, targets, batch_size=args.batch_size
    )
    scores = alignment_error_rate(links, [g[0] for g in gold], [g[1] for g in gold])
    print(
        f"AER = {scores['aer']:.4f}  precision {scores['precision']:.4f}  recall "
        f"{scores['recall']:.4f}  ({len(links)} pairs, {scores['predicted']} predicted and "
        f"{scores['sure']} sure links)",
        file=out,
    )
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.writelines(format_pharaoh(pair) + "\n" for pair in links)
    return 0
