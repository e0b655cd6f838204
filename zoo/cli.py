"""The `zoo` command line: `python -m zoo translate|evaluate|params ...` (also `zoo ...`).

    python -m zoo translate saved_models/luong_local_general "Ein Hund rennt."
    cat sentences.de | python -m zoo translate saved_models/luong_local_general --beam-size 5
    python -m zoo evaluate saved_models/luong_local_general --split test2016 --beam-size 5
    python -m zoo params --size paper

MODEL_DIR is an output folder written by `zoo.translator.Translator.save` (model.keras,
source_tokenizer/, target_tokenizer/, translator.json).
"""

import argparse
import json
import os
import sys

EVALUATE_DEFAULTS = {"data": "multi30k", "source_lang": "de", "target_lang": "en"}


def _add_search_flags(parser):
    parser.add_argument(
        "--beam-size",
        type=int,
        default=None,
        help="beam size K; 1 is greedy search (default: MODEL_DIR/translator.json, else 1)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="sentences per search call (default: MODEL_DIR/translator.json, else 64)",
    )
    parser.add_argument(
        "--length-penalty",
        type=float,
        default=None,
        help="GNMT length penalty alpha, 0 ranks by log-probability "
        "(default: MODEL_DIR/translator.json, else 0)",
    )
    parser.add_argument(
        "--model-file",
        default="model.keras",
        help="model file inside MODEL_DIR (default: %(default)s)",
    )


def build_parser():
    """The argparse parser of `python -m zoo` (every flag has a --help line)."""
    parser = argparse.ArgumentParser(
        prog="python -m zoo",
        description="Attention-based recurrent NMT (Bahdanau et al. 2014; Luong et al. 2015).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    translate = commands.add_parser(
        "translate",
        help="translate sentences with a trained model",
        description="Translate the SENTENCE arguments, or standard input line by line when none "
        "is given (one translation per line, in order; empty lines give empty lines).",
    )
    translate.add_argument(
        "model_dir",
        metavar="MODEL_DIR",
        help="a zoo output folder, or its serving/ SavedModel (beam size fixed at export; "
        "--beam-size 1 uses its greedy endpoint)",
    )
    translate.add_argument(
        "sentences", metavar="SENTENCE", nargs="*", help="sentences to translate (default: stdin)"
    )
    _add_search_flags(translate)
    translate.add_argument(
        "--attention",
        action="store_true",
        help="also print each sentence's score, tokens and attention matrix",
    )
    translate.add_argument(
        "--plot-dir",
        default=None,
        help="write an attention heatmap attention_<n>.png per sentence into this folder",
    )

    evaluate = commands.add_parser(
        "evaluate",
        help="score a trained model on a corpus split with sacreBLEU",
        description="Translate a corpus split and print sacreBLEU BLEU (13a, cased) and chrF "
        "with their signatures.",
    )
    evaluate.add_argument("model_dir", metavar="MODEL_DIR", help="a zoo output folder")
    evaluate.add_argument(
        "--data",
        default=None,
        help="corpus: multi30k, anki-spa-eng, anki-fra-eng, a .tsv file, a file prefix or "
        "tfds:NAME (default: 'data' in MODEL_DIR/translator.json, else multi30k)",
    )
    evaluate.add_argument(
        "--split", default="test2016", help="split to translate (default: %(default)s)"
    )
    evaluate.add_argument(
        "--source-lang",
        default=None,
        help="source language code (default: MODEL_DIR/translator.json, else de)",
    )
    evaluate.add_argument(
        "--target-lang",
        default=None,
        help="target language code (default: MODEL_DIR/translator.json, else en)",
    )
    evaluate.add_argument(
        "--limit", type=int, default=None, help="only the first N sentence pairs (default: all)"
    )
    evaluate.add_argument("--output", default=None, help="also write the scores to this JSON file")
    evaluate.add_argument(
        "--hypotheses", default=None, help="also write the translations to this text file"
    )
    _add_search_flags(evaluate)

    commands.add_parser(
        "params",
        help="print the parameter counts of the presets (python -m zoo params --help)",
        add_help=False,
    )
    return parser


def _overrides(args):
    """The search flags given on the command line, as Translator settings."""
    names = ("beam_size", "batch_size", "length_penalty")
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def _is_saved_model(directory):
    return os.path.isfile(os.path.join(directory, "saved_model.pb"))


def _load(args):
    from zoo.translator import Translator

    if _is_saved_model(args.model_dir):
        from zoo.export import SavedModelTranslator

        if args.command != "translate":
            raise ValueError(
                f"{args.model_dir} is a SavedModel; `evaluate` needs the output folder that "
                "holds model.keras (usually its parent)."
            )
        if args.length_penalty is not None:
            raise ValueError("--length-penalty is fixed in a SavedModel (set at export time).")
        return SavedModelTranslator(args.model_dir, batch_size=args.batch_size or 64)
    return Translator.from_directory(args.model_dir, model_file=args.model_file, **_overrides(args))


def _stdin_batches(stream, batch_size):
    """Lines of `stream` (newline stripped) in lists of up to `batch_size`; one line at a
    time when it is a terminal, so that each translation appears as soon as it is typed."""
    size = 1 if stream.isatty() else batch_size
    batch = []
    for line in stream:
        batch.append(line.rstrip("\r\n"))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _print_translations(translator, sentences, args, out, counter):
    if not (args.attention or args.plot_dir):
        for text in translator.translate(sentences, beam_size=args.beam_size):
            print(text, file=out, flush=True)
        return
    for t in translator.translate_with_attention(sentences, beam_size=args.beam_size):
        counter[0] += 1
        print(t.translation, file=out)
        if args.attention:
            print(f"# score {t.score:.4f}", file=out)
            print("# " + t.format_weights().replace("\n", "\n# "), file=out)
        if args.plot_dir and t.target_tokens:
            os.makedirs(args.plot_dir, exist_ok=True)
            path = os.path.join(args.plot_dir, f"attention_{counter[0]}.png")
            t.plot(path, title=t.source)
        out.flush()


def run_translate(args, out=None):
    out = sys.stdout if out is None else out
    translator = _load(args)
    counter = [0]
    if args.sentences:
        _print_translations(translator, list(args.sentences), args, out, counter)
        return 0
    for batch in _stdin_batches(sys.stdin, translator.batch_size):
        _print_translations(translator, batch, args, out, counter)
    return 0


def run_evaluate(args, out=None):
    out = sys.stdout if out is None else out
    from zoo.data import load_corpus
    from zoo.evaluation import corpus_scores

    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be a positive int, received {args.limit}.")
    translator = _load(args)
    metadata = translator.read_metadata(args.model_dir)
    for key, fallback in EVALUATE_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, metadata.get(key, fallback))
    corpus = load_corpus(args.data, args.source_lang, args.target_lang, args.split)
    if args.limit is not None:
        corpus = corpus.take(args.limit)
    hypotheses = translator.translate(corpus.source, progress=True)
    scores = corpus_scores(hypotheses, corpus.target)
    result = {
        "model_dir": os.fspath(args.model_dir),
        "data": args.data,
        "split": args.split,
        "source_lang": args.source_lang,
        "target_lang": args.target_lang,
        "sentences": len(corpus),
        **translator.get_config(),
        **scores,
    }
    print(f"BLEU = {scores['bleu']:.2f}  {scores['bleu_signature']}", file=out)
    print(f"chrF = {scores['chrf']:.2f}  {scores['chrf_signature']}", file=out)
    print(
        f"({len(corpus)} sentences of {args.data} {args.split}, "
        f"{args.source_lang}->{args.target_lang}, beam size {translator.beam_size})",
        file=out,
    )
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2, ensure_ascii=False)
            f.write("\n")
    if args.hypotheses:
        with open(args.hypotheses, "w", encoding="utf-8") as f:
            f.writelines(h + "\n" for h in hypotheses)
    return 0


def main(argv=None):
    """Entry point of `python -m zoo` and of the `zoo` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "params":
        from zoo.models import params

        params.main(argv[1:])
        return 0
    args = build_parser().parse_args(argv)
    if args.command == "translate":
        return run_translate(args)
    return run_evaluate(args)


if __name__ == "__main__":
    sys.exit(main())
