"""`python -m zoo evaluate`: sacreBLEU and chrF of a model on a corpus split."""

import os
import sys

from zoo.checks import positive_int
from zoo.cli.flags import (
    MODEL_HELP,
    add_control_flags,
    add_search_flags,
    add_unknown_word_flags,
    check_output_path,
    control_options,
)
from zoo.cli.loading import load_translator, unknown_options
from zoo.data.registry import DEFAULT_CORPUS, corpora_help, default_test_split
from zoo.errors import UsageError
from zoo.json_files import write_json
from zoo.translator.output_folder import CONFIG_FILE
from zoo.workflow.flags import resolve_languages, test_split_help


def add_evaluate_command(commands):
    evaluate = commands.add_parser(
        "evaluate",
        help="score a trained model on a corpus split with sacreBLEU",
        description="Translate a corpus split and print sacreBLEU BLEU (13a, cased) and chrF "
        "with their signatures.",
    )
    evaluate.add_argument("model_dir", metavar="MODEL_DIR", help=MODEL_HELP)
    evaluate.add_argument(
        "--data",
        default=None,
        help=f"{corpora_help()} (default: 'data' in MODEL_DIR/{CONFIG_FILE}, else "
        f"{DEFAULT_CORPUS})",
    )
    evaluate.add_argument(
        "--split",
        default=None,
        help=f"split to translate (default: {test_split_help()})",
    )
    evaluate.add_argument(
        "--source-lang",
        default=None,
        help=f"source language code, for a model whose {CONFIG_FILE} does not name it "
        f"(default: MODEL_DIR/{CONFIG_FILE}'s; a model is evaluated on its own languages)",
    )
    evaluate.add_argument(
        "--target-lang",
        default=None,
        help=f"target language code, for a model whose {CONFIG_FILE} does not name it "
        f"(default: MODEL_DIR/{CONFIG_FILE}'s; a model is evaluated on its own languages)",
    )
    evaluate.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        help="only the first N sentence pairs (default: all)",
    )
    evaluate.add_argument("--output", default=None, help="also write the scores to this JSON file")
    evaluate.add_argument(
        "--hypotheses", default=None, help="also write the translations to this text file"
    )
    add_search_flags(evaluate)
    add_control_flags(evaluate)
    add_unknown_word_flags(evaluate)


def fill_corpus_defaults(args, metadata):
    """--data, the languages and the split not given: translator.json's, else the corpus'
    defaults; languages other than the model's are a usage error."""
    config = os.path.join(getattr(args, "model_dir", "MODEL_DIR"), CONFIG_FILE)
    for key in ("data", "source_lang", "target_lang"):
        value = metadata.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(
                f"{config}: {key!r} must be a string such as "
                f"{DEFAULT_CORPUS if key == 'data' else 'de'!r}; it holds {value!r}."
            )
    trained = metadata.get("source_lang"), metadata.get("target_lang")
    given = args.source_lang, args.target_lang
    if None not in trained and any(g not in (None, t) for g, t in zip(given, trained, strict=True)):
        flags = " ".join(
            f"--{name}-lang {value}"
            for name, value in zip(("source", "target"), given, strict=True)
            if value
        )
        raise UsageError(
            f"the model translates {trained[0]}->{trained[1]} ({config}); received {flags}. "
            "Evaluate it on its own languages, or leave --source-lang and --target-lang out."
        )
    for key in ("data", "source_lang", "target_lang"):
        if getattr(args, key) is None:
            setattr(args, key, metadata.get(key))
    if args.data is None:
        args.data = DEFAULT_CORPUS
    args.source_lang, args.target_lang = resolve_languages(
        args.data, args.source_lang, args.target_lang
    )
    if args.split is None:
        args.split = default_test_split(args.data)


def run_evaluate(args, out=None):
    """Translates the split, prints BLEU and chrF, and writes --output and --hypotheses."""
    out = sys.stdout if out is None else out
    from zoo.data import load_corpus
    from zoo.evaluation import corpus_scores

    unknown = unknown_options(args)  # usage errors before the model loads
    reads = [("MODEL_DIR", args.model_dir), ("--unk-dictionary", args.unk_dictionary)]
    check_output_path(args.output, "--output", [*reads, ("--hypotheses", args.hypotheses)])
    check_output_path(args.hypotheses, "--hypotheses", reads)
    translator = load_translator(args)
    fill_corpus_defaults(args, translator.read_metadata(args.model_dir))
    corpus = load_corpus(args.data, args.source_lang, args.target_lang, args.split)
    if args.limit is not None:
        corpus = corpus.take(args.limit)
    controls = control_options(args)
    hypotheses = translator.translate(corpus.source, progress=True, **unknown, **controls)
    scores = corpus_scores(hypotheses, corpus.target)
    model_file = args.model_file or translator.model_file(args.model_dir)
    result = {
        "model_dir": os.fspath(args.model_dir),
        "model_file": model_file,
        "data": args.data,
        "split": args.split,
        "source_lang": args.source_lang,
        "target_lang": args.target_lang,
        "sentences": len(corpus),
        **translator.get_config(),
        **controls,
        "replace_unknown": bool(args.replace_unk),
        **scores,
    }
    print(f"BLEU = {scores['bleu']:.2f}  {scores['bleu_signature']}", file=out)
    print(f"chrF = {scores['chrf']:.2f}  {scores['chrf_signature']}", file=out)
    print(
        f"({len(corpus)} sentences of {args.data} {args.split}, "
        f"{args.source_lang}->{args.target_lang}; {model_file}, beam size "
        f"{translator.beam_size}, length penalty {translator.length_penalty:g})",
        file=out,
    )
    if args.output:
        write_json(args.output, result)
    if args.hypotheses:
        with open(args.hypotheses, "w", encoding="utf-8") as f:
            f.writelines(h + "\n" for h in hypotheses)
    return 0
