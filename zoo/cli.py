"""The `zoo` command line: `python -m zoo translate|evaluate|aer|average|serve|params ...`.

    python -m zoo translate saved_models/luong_local_general "Ein Hund rennt."
    python -m zoo translate saved_models/luong_local_general --alignments "Ein Hund rennt."
    python -m zoo aer saved_models/luong_local_general --source s.de --target t.en --gold g.txt
    python -m zoo average saved_models/luong_local_general --last 3
    python -m zoo serve saved_models/luong_local_general --port 8080
    cat sentences.de | python -m zoo translate saved_models/luong_local_general --beam-size 5
    python -m zoo evaluate saved_models/luong_local_general --split test2016 --beam-size 5
    python -m zoo params --size paper

MODEL_DIR is an output folder written by `zoo.translator.Translator.save` (model.keras,
source_tokenizer/, target_tokenizer/, translator.json).
"""

import argparse
import os
import sys

from zoo.checks import non_negative_float as _non_negative_float
from zoo.checks import non_negative_int as _non_negative_int
from zoo.checks import positive_float as _positive_float
from zoo.checks import positive_int as _positive_int
from zoo.errors import UsageError, exit_on_user_error
from zoo.json_files import write_json

_MODEL_FILE_DEFAULT = (
    "the file MODEL_DIR/translator.json names, the one the run chose on validation; else "
    "model.keras"
)
EVALUATE_DEFAULTS = {"data": "multi30k", "source_lang": "de", "target_lang": "en"}


def _add_search_flags(parser):
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error (default: the message alone, exit status 1)",
    )
    parser.add_argument(
        "--beam-size",
        type=_positive_int,
        default=None,
        help="beam size K; 1 is greedy search (default: MODEL_DIR/translator.json, else 1)",
    )
    parser.add_argument(
        "--batch-size",
        type=_positive_int,
        default=None,
        help="sentences per search call (default: MODEL_DIR/translator.json, else 64)",
    )
    parser.add_argument(
        "--length-penalty",
        type=_non_negative_float,
        default=None,
        help="GNMT length penalty alpha, 0 ranks by log-probability "
        "(default: MODEL_DIR/translator.json, else 1.0)",
    )
    parser.add_argument(
        "--coverage-penalty",
        type=_non_negative_float,
        default=None,
        help="GNMT coverage penalty beta for beam search, favouring translations that cover "
        "the source (default: MODEL_DIR/translator.json, else 0)",
    )
    parser.add_argument(
        "--model-file",
        default=None,
        help=f"model file inside MODEL_DIR (default: {_MODEL_FILE_DEFAULT})",
    )
    parser.add_argument(
        "--ensemble",
        nargs="+",
        default=None,
        metavar="OTHER_DIR",
        help="decode with an ensemble: MODEL_DIR's model and these folders' models (the mean "
        "of their distributions at every step); all must share MODEL_DIR's target vocabulary "
        "and read its source tokenizer's ids",
    )


def _add_unknown_word_flags(parser):
    """--replace-unk and --unk-dictionary (translate and evaluate; a server's requests ask
    for replacement themselves)."""
    parser.add_argument(
        "--replace-unk",
        action="store_true",
        help="replace each <unk> of a translation by the source word it attends to most "
        "(Luong et al. 2015 section 4.1; for word-level vocabularies)",
    )
    parser.add_argument(
        "--unk-dictionary",
        default=None,
        metavar="FILE",
        help="with --replace-unk: translate the copied source word with this dictionary "
        "(one 'source<TAB>target' pair a line) where it has an entry",
    )


def _add_sampling_flags(parser):
    group = parser.add_argument_group(
        "sampling",
        "draw one translation per sentence at random instead of searching (zoo.search.sample; "
        "synthetic sources for back-translation); --temperature, --top-k and --top-p imply "
        "--sample. A SavedModel samples with the settings it was exported with.",
    )
    group.add_argument(
        "--sample", action="store_true", help="sample instead of greedy or beam search"
    )
    group.add_argument(
        "--temperature",
        type=_positive_float,
        default=None,
        help="divide the logits by T: below 1 sharper, above 1 flatter (default: 1)",
    )
    group.add_argument(
        "--top-k",
        type=_positive_int,
        default=None,
        metavar="K",
        help="draw from the K most likely tokens only (default: all)",
    )
    group.add_argument(
        "--top-p",
        type=_positive_float,
        default=None,
        metavar="P",
        help="draw from the smallest set of most likely tokens holding probability P, in "
        "(0, 1] (nucleus sampling; default: all)",
    )
    group.add_argument(
        "--seed",
        type=_non_negative_int,
        default=None,
        help="make the draws reproducible: the same input, seed and --batch-size give the "
        "same translations (default: fresh draws)",
    )


def _add_translate_command(commands):
    """`python -m zoo translate`: sentences or stdin through a trained model."""
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
    _add_unknown_word_flags(translate)
    translate.add_argument(
        "--attention",
        action="store_true",
        help="also print each sentence's score, tokens and attention matrix",
    )
    translate.add_argument(
        "--n-best",
        type=_positive_int,
        default=None,
        metavar="N",
        help="print the N best translations of each sentence with their scores, in the Moses "
        "n-best format 'i ||| translation ||| score' (i: the 0-based sentence number); N is "
        "at most the beam size (a SavedModel: the n it was exported with)",
    )
    translate.add_argument(
        "--alignments",
        action="store_true",
        help="append each sentence's word alignment read from the attention, in the Pharaoh "
        "format: 'translation ||| 0-0 1-2 ...' (source word index first, 0-based)",
    )
    _add_sampling_flags(translate)
    translate.add_argument(
        "--plot-dir",
        default=None,
        help="write an attention heatmap attention_<n>.png per sentence into this folder",
    )


def _add_evaluate_command(commands):
    """`python -m zoo evaluate`: sacreBLEU and chrF of a model on a corpus split."""
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
        "--limit",
        type=_positive_int,
        default=None,
        help="only the first N sentence pairs (default: all)",
    )
    evaluate.add_argument("--output", default=None, help="also write the scores to this JSON file")
    evaluate.add_argument(
        "--hypotheses", default=None, help="also write the translations to this text file"
    )
    _add_search_flags(evaluate)
    _add_unknown_word_flags(evaluate)


def _add_aer_command(commands):
    """`python -m zoo aer`: the attention's word alignments scored against gold ones."""
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
    aer.add_argument("--batch-size", type=_positive_int, default=32, help="pairs per pass (32)")
    aer.add_argument(
        "--model-file", default=None, help=f"model file inside MODEL_DIR ({_MODEL_FILE_DEFAULT})"
    )
    aer.add_argument("--debug", action="store_true", help="show the traceback of an error")


def _add_average_command(commands):
    """`python -m zoo average`: the mean of a run's last checkpoints."""
    average = commands.add_parser(
        "average",
        help="average the model weights of a run's last checkpoints into one model file",
        description="Set every weight to its mean over the newest N intact checkpoints in "
        "MODEL_DIR/checkpoints (zoo.training.average_checkpoints) and save the model beside "
        "model.keras; score it with `python -m zoo evaluate MODEL_DIR --model-file FILE`.",
    )
    average.add_argument("model_dir", metavar="MODEL_DIR", help="a zoo output folder")
    average.add_argument(
        "--last", type=_positive_int, default=3, help="how many checkpoints (default: 3)"
    )
    average.add_argument(
        "--output",
        default="model.averaged.keras",
        help="file name inside MODEL_DIR (default: %(default)s)",
    )
    average.add_argument("--debug", action="store_true", help="show the traceback of an error")


def _add_serve_command(commands):
    """`python -m zoo serve`: translations as JSON over HTTP."""
    serve = commands.add_parser(
        "serve",
        help="serve translations as JSON over HTTP (zoo.server)",
        description='Answer POST /translate {"sentences": [...]} with {"translations": '
        "[...]} (also n_best, alignments, replace_unknown, sample; GET /health, GET /config). "
        "See zoo/server.py for the protocol. Stop with Ctrl-C.",
    )
    serve.add_argument(
        "model_dir",
        metavar="MODEL_DIR",
        help="a zoo output folder, or its serving/ SavedModel (its beam size and sampling "
        "settings are those fixed at export)",
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    serve.add_argument(
        "--port", type=_non_negative_int, default=8080, help="port (default: %(default)s; 0: any)"
    )
    serve.add_argument(
        "--max-request-bytes",
        type=_positive_int,
        default=1 << 20,
        help="largest request body accepted (default: %(default)s)",
    )
    _add_search_flags(serve)


def build_parser():
    """The argparse parser of `python -m zoo` (every flag has a --help line)."""
    parser = argparse.ArgumentParser(
        prog="python -m zoo",
        description="Attention-based recurrent NMT (Bahdanau et al. 2014; Luong et al. 2015).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_translate_command(commands)
    _add_evaluate_command(commands)
    _add_aer_command(commands)
    _add_average_command(commands)
    _add_serve_command(commands)
    commands.add_parser(
        "params",
        help="print the parameter counts of the presets (python -m zoo params --help)",
        add_help=False,
    )
    return parser


def _overrides(args):
    """The search flags given on the command line, as Translator settings."""
    names = ("beam_size", "batch_size", "length_penalty", "coverage_penalty")
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def _unknown_options(args):
    """`Translator.translate`'s replace_unknown/dictionary keywords from the flags."""
    if args.unk_dictionary and not args.replace_unk:
        raise UsageError("--unk-dictionary is used with --replace-unk only.")
    if not args.replace_unk:
        return {}
    if _is_saved_model(args.model_dir):
        if args.unk_dictionary:
            raise UsageError("--unk-dictionary needs the model folder, not a SavedModel.")
        return {"replace_unknown": True}
    from zoo.unknown_words import read_dictionary

    dictionary = read_dictionary(args.unk_dictionary) if args.unk_dictionary else None
    return {"replace_unknown": True, "dictionary": dictionary}


def _is_saved_model(directory):
    return os.path.isfile(os.path.join(directory, "saved_model.pb"))


def _load(args):
    from zoo.translator import Translator

    if _is_saved_model(args.model_dir):
        from zoo.export import SavedModelTranslator

        if args.ensemble:
            raise UsageError("--ensemble needs model folders (model.keras), not a SavedModel.")
        if args.command not in ("translate", "serve"):
            raise ValueError(
                f"{args.model_dir} is a SavedModel; `evaluate` needs the output folder that "
                "holds model.keras (usually its parent)."
            )
        for flag in ("length_penalty", "coverage_penalty"):
            if getattr(args, flag) is not None:
                raise UsageError(
                    f"--{flag.replace('_', '-')} is fixed in a SavedModel (set at export time)."
                )
        return SavedModelTranslator(args.model_dir, batch_size=args.batch_size or 64)
    translator = Translator.from_directory(
        args.model_dir, model_file=args.model_file, **_overrides(args)
    )
    if not args.ensemble:
        return translator
    import keras

    from zoo.models import Ensemble

    members = [translator.model]
    for directory in args.ensemble:
        name = args.model_file or Translator.model_file(directory)
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise ValueError(f"--ensemble {directory}: no {name} there.")
        members.append(keras.models.load_model(path))
    return Translator(
        Ensemble(members),
        translator.source_tokenizer,
        translator.target_tokenizer,
        **translator.get_config(),
    )


def _stdin_batches(stream, batch_size, errors=None):
    """Lines of `stream` (newline stripped) in lists of up to `batch_size`; one line at a
    time when it is a terminal, so that each translation appears as soon as it is typed.

    Bytes are decoded as UTF-8 line by line: a line with invalid bytes is decoded with
    replacement characters (U+FFFD) and reported on `errors` (default stderr) with its line
    number, so that it still gives exactly one output line and the others are unharmed.
    """
    errors = sys.stderr if errors is None else errors
    size = 1 if stream.isatty() else batch_size
    raw = getattr(stream, "buffer", None)
    batch = []
    for number, line in enumerate(stream if raw is None else raw, start=1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as error:
                line = line.decode("utf-8", errors="replace")
                print(
                    f"python -m zoo translate: stdin line {number} is not valid UTF-8 "
                    f"({error.reason} at byte {error.start}); translated with U+FFFD "
                    "replacement characters",
                    file=errors,
                    flush=True,
                )
        batch.append(line.rstrip("\r\n"))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _print_n_best(translator, sentences, args, out, counter):
    if _is_saved_model(args.model_dir):
        lists = translator.translate_n_best(sentences, n_best=args.n_best)
    else:
        lists = translator.translate_n_best(sentences, n_best=args.n_best, beam_size=args.beam_size)
    for hypotheses in lists:
        for text, score in hypotheses:
            if score != float("-inf"):  # -inf: fewer hypotheses exist (tiny vocabularies)
                print(f"{counter[0]} ||| {text} ||| {score:.4f}", file=out)
        counter[0] += 1
    out.flush()


def _sampling(args):
    """The sampling options of the command line (None when not sampling); a usage error for
    flags that sampling cannot honour."""
    shaping = {
        key: getattr(args, key)
        for key in ("temperature", "top_k", "top_p")
        if getattr(args, key, None) is not None
    }
    if not (getattr(args, "sample", False) or shaping):
        if getattr(args, "seed", None) is not None:
            raise UsageError("--seed applies to sampling only (--sample).")
        return None
    flags = (
        "n_best",
        "alignments",
        "attention",
        "plot_dir",
        "beam_size",
        "ensemble",
        "replace_unk",
    )
    for flag in flags:
        if getattr(args, flag):
            raise UsageError(f"--{flag.replace('_', '-')} cannot be combined with --sample.")
    if shaping and _is_saved_model(args.model_dir):
        raise UsageError(
            "--temperature, --top-k and --top-p are fixed in a SavedModel (set at export); "
            "use --sample alone, or the model folder."
        )
    if args.top_p is not None and args.top_p > 1:
        raise UsageError(f"--top-p must be in (0, 1]; received {args.top_p}.")
    return shaping


def _print_samples(translator, sentences, args, out, counter, shaping):
    seed = None if args.seed is None else args.seed + counter[0]  # each batch its own draws
    if _is_saved_model(args.model_dir):
        import random

        seed = random.randrange(2**31) if seed is None else seed
        texts = translator.sample(sentences, seed=seed)
    else:
        texts = translator.sample(sentences, seed=seed, **shaping)
    for text in texts:
        print(text, file=out, flush=True)
    counter[0] += len(sentences)


def _print_translations(translator, sentences, args, out, counter, shaping=None, unknown=None):
    if shaping is not None:
        return _print_samples(translator, sentences, args, out, counter, shaping)
    if args.n_best:
        return _print_n_best(translator, sentences, args, out, counter)
    if not (args.attention or args.plot_dir or args.alignments):
        for text in translator.translate(sentences, beam_size=args.beam_size, **(unknown or {})):
            print(text, file=out, flush=True)
        return
    if args.replace_unk:
        raise UsageError(
            "--replace-unk prints translations only: drop --attention, --alignments and --plot-dir."
        )
    from zoo.evaluation import format_pharaoh, hard_alignment

    for t in translator.translate_with_attention(sentences, beam_size=args.beam_size):
        counter[0] += 1
        if args.alignments:
            links = hard_alignment(t.source_tokens, t.target_tokens, t.weights)
            print(f"{t.translation} ||| {format_pharaoh(links)}", file=out)
        else:
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
    # Usage errors before loading: they should not wait for the model.
    shaping = _sampling(args)
    unknown = _unknown_options(args)
    translator = _load(args)
    counter = [0]
    if args.sentences:
        _print_translations(translator, list(args.sentences), args, out, counter, shaping, unknown)
        return 0
    for batch in _stdin_batches(sys.stdin, translator.batch_size):
        _print_translations(translator, batch, args, out, counter, shaping, unknown)
    return 0


def run_evaluate(args, out=None):
    out = sys.stdout if out is None else out
    from zoo.data import load_corpus
    from zoo.evaluation import corpus_scores

    unknown = _unknown_options(args)  # a usage error before the model loads
    translator = _load(args)
    metadata = translator.read_metadata(args.model_dir)
    for key, fallback in EVALUATE_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, metadata.get(key, fallback))
    corpus = load_corpus(args.data, args.source_lang, args.target_lang, args.split)
    if args.limit is not None:
        corpus = corpus.take(args.limit)
    hypotheses = translator.translate(corpus.source, progress=True, **unknown)
    scores = corpus_scores(hypotheses, corpus.target)
    result = {
        "model_dir": os.fspath(args.model_dir),
        "data": args.data,
        "split": args.split,
        "source_lang": args.source_lang,
        "target_lang": args.target_lang,
        "sentences": len(corpus),
        **translator.get_config(),
        "replace_unknown": bool(args.replace_unk),
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
        write_json(args.output, result)
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
    command = {
        "translate": run_translate,
        "evaluate": run_evaluate,
        "aer": run_aer,
        "average": run_average,
        "serve": run_serve,
    }[args.command]
    return exit_on_user_error(
        lambda: command(args), prog=f"python -m zoo {args.command}", debug=args.debug
    )


def run_serve(args, out=None, ready=None):
    """Serves until Ctrl-C. `ready(server)` (for tests) is called once it listens."""
    out = sys.stdout if out is None else out
    from zoo.server import make_server

    translator = _load(args)
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


def run_average(args, out=None):
    out = sys.stdout if out is None else out
    import keras

    from zoo.training import average_checkpoints

    path = os.path.join(args.model_dir, "model.keras")
    if not os.path.isfile(path):
        raise ValueError(f"{args.model_dir} is not a zoo output folder: no model.keras.")
    model = keras.models.load_model(path)
    used = average_checkpoints(model, os.path.join(args.model_dir, "checkpoints"), args.last)
    target = os.path.join(args.model_dir, args.output)
    model.save(target)
    names = ", ".join(os.path.basename(p) for p in used)
    print(f"Averaged {len(used)} checkpoints ({names}) into {target}", file=out)
    return 0


def _read_text_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def run_aer(args, out=None):
    out = sys.stdout if out is None else out
    import keras

    from zoo.evaluation import alignment_error_rate, forced_alignments, format_pharaoh, parse_gold
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


if __name__ == "__main__":
    sys.exit(main())
