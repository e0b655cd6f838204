"""`python -m zoo aer`: the attention's word alignments scored against gold ones."""

import os
import sys

from zoo.checks import positive_int
from zoo.cli.flags import add_debug_flag, add_model_file_flag
from zoo.evaluation import forced_alignments
from zoo.workflow.flag_types import library_default


def add_aer_command(commands):
    aer = commands.add_parser(
        "aer",
        help="score the model's attention as word alignments (AER) against a gold file",
        description="Force the model to output each reference translation, read a hard word "
        "alignment from its attention (each target word's highest-weight source word) and "
        "score it with Och and Ney's alignment error rate, as Luong et al. 2015 section 5.4. "
        "Prints AER, precision and recall.",
    )
    aer.add_argument("model_dir", metavar="MODEL_DIR", help="a zoo output folder")
    aer.add_argument("--source", required=True, help="source sentences, one per line (UTF-8)")
    aer.add_argument("--target", required=True, help="their reference translations, line by line")
    aer.add_argument(
        "--gold",
        required=True,
        help="gold alignments, one line per pair: links i-j (sure) and i?j (possible), word "
        "indices 0-based, source first",
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


def _read_text_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def run_aer(args, out=None):
    """Prints the AER, precision and recall of the model's alignments on --source/--target."""
    out = sys.stdout if out is None else out
    import keras

    from zoo.evaluation import alignment_error_rate, format_pharaoh, parse_gold
    from zoo.text import load_tokenizer
    from zoo.translator import SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR, Translator

    sources, targets = _read_text_lines(args.source), _read_text_lines(args.target)
    gold_lines = _read_text_lines(args.gold)
    if not len(sources) == len(targets) == len(gold_lines):
        raise ValueError(
            f"--source, --target and --gold must have one line per pair: {len(sources)}, "
            f"{len(targets)} and {len(gold_lines)} lines."
        )
    gold = [parse_gold(line, f"{args.gold}, line {n}") for n, line in enumerate(gold_lines, 1)]
    model_file = args.model_file or Translator.model_file(args.model_dir)
    model_path = os.path.join(args.model_dir, model_file)
    if not os.path.isfile(model_path):
        raise ValueError(f"{args.model_dir} is not a zoo output folder: no {model_file}.")
    model = keras.models.load_model(model_path)  # `import zoo` registered the layers
    tokenizers = [
        load_tokenizer(os.path.join(args.model_dir, name))
        for name in (SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR)
    ]
    links = forced_alignments(model, *tokenizers, sources, targets, batch_size=args.batch_size)
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
