"""`python -m zoo translate`: sentences or stdin through a trained model."""

import os
import sys

from zoo.checks import positive_int
from zoo.cli.aer import read_text_lines
from zoo.cli.flags import (
    CONTROL_FLAGS,
    MODEL_HELP,
    add_control_flags,
    add_sampling_flags,
    add_search_flags,
    add_unknown_word_flags,
    control_options,
    controls_given,
)
from zoo.cli.loading import is_saved_model, load_translator, unknown_options
from zoo.errors import UsageError

# Flags that sampling cannot honour.
NOT_WITH_SAMPLING = (
    "n_best",
    "alignments",
    "attention",
    "plot_dir",
    "beam_size",
    "ensemble",
    "replace_unk",
    "prefix",
    "constraints",
    *CONTROL_FLAGS,
)
# Flags that --n-best cannot honour: it prints n-best lists only.
NOT_WITH_N_BEST = ("alignments", "attention", "plot_dir", "replace_unk")
# The files of one line per input sentence: (the flag's dest, its flag).
ALIGNED_FILES = (("prefix", "--prefix"), ("constraints", "--constraints"))


def add_translate_command(commands):
    translate = commands.add_parser(
        "translate",
        help="translate sentences with a trained model",
        description="Translate the SENTENCE arguments, or standard input line by line when none "
        "is given (one translation per line, in order; empty lines give empty lines).",
    )
    translate.add_argument(
        "model_dir",
        metavar="MODEL_DIR",
        help=f"{MODEL_HELP}, or its serving/ SavedModel (beam size fixed at export; "
        "--beam-size 1 uses its greedy endpoint)",
    )
    translate.add_argument(
        "sentences", metavar="SENTENCE", nargs="*", help="sentences to translate (default: stdin)"
    )
    add_search_flags(translate)
    add_unknown_word_flags(translate)
    translate.add_argument(
        "--attention",
        action="store_true",
        help="also print each sentence's score, tokens and attention matrix",
    )
    translate.add_argument(
        "--n-best",
        type=positive_int,
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
    add_control_flags(translate)
    translate.add_argument(
        "--prefix",
        default=None,
        metavar="FILE",
        help="one target prefix per line, aligned with the input sentences: each translation "
        "starts with its line's text, then the search goes on (an empty line: none)",
    )
    translate.add_argument(
        "--constraints",
        default=None,
        metavar="FILE",
        help="one tab-separated list of target phrases per line, aligned with the input "
        "sentences: each translation contains its line's phrases (constrained beam search, "
        "Post & Vilar 2018; an empty line: none; empty fields, as a trailing tab leaves, "
        "are skipped)",
    )
    add_sampling_flags(translate)
    translate.add_argument(
        "--plot-dir",
        default=None,
        help="write an attention heatmap attention_<n>.png per sentence into this folder",
    )


def stdin_batches(stream, batch_size, errors=None):
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


def sampling_options(args):
    """The sampling options of the command line (None when not sampling); a usage error for
    flags that sampling cannot honour."""
    shaping = {
        key: getattr(args, key)
        for key in ("temperature", "top_k", "top_p")
        if getattr(args, key, None) is not None
    }
    if not getattr(args, "sample", False):
        given = ["--" + key.replace("_", "-") for key in shaping]
        if getattr(args, "seed", None) is not None:
            given.append("--seed")
        if given:
            raise UsageError(
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to sampling "
                "only; add --sample to sample, or leave "
                f"{'it' if len(given) == 1 else 'them'} out to search."
            )
        return None
    for flag in NOT_WITH_SAMPLING:
        if getattr(args, flag):
            shown = CONTROL_FLAGS.get(flag, "--" + flag.replace("_", "-"))
            raise UsageError(f"{shown} cannot be combined with --sample.")
    if shaping and is_saved_model(args.model_dir):
        raise UsageError(
            "--temperature, --top-k and --top-p are fixed in a SavedModel (set at export); "
            "use --sample alone, or the model folder."
        )
    if args.top_p is not None and args.top_p > 1:
        raise UsageError(f"--top-p must be in (0, 1]; received {args.top_p}.")
    return shaping


def aligned_inputs(args):
    """{"prefix": one str per line, "constraints": one list of phrases per line} of the
    files given (--prefix, --constraints); a usage error with a SavedModel, whose search
    takes neither (nor the decoding controls)."""
    given = [flag for name, flag in ALIGNED_FILES if getattr(args, name)] + controls_given(args)
    if given and is_saved_model(args.model_dir):
        verb = "needs" if len(given) == 1 else "need"
        raise UsageError(f"{', '.join(given)} {verb} the model folder, not a SavedModel.")
    inputs = {}
    if args.prefix:
        inputs["prefix"] = read_text_lines(args.prefix, "--prefix")
    if args.constraints:
        lines = read_text_lines(args.constraints, "--constraints")
        inputs["constraints"] = [[p for p in line.split("\t") if p.strip()] for line in lines]
    return inputs


def n_best_usage(args):
    """A usage error for --n-best with a flag it cannot honour, or above the beam size: the
    --beam-size given, else the one MODEL_DIR/translator.json names (read before the model
    loads); for a SavedModel, the n and the beam it was exported with (zoo_export.json)."""
    if not args.n_best:
        return
    for name in NOT_WITH_N_BEST:
        if getattr(args, name):
            flag = "--" + name.replace("_", "-")
            raise UsageError(
                f"--n-best prints n-best lists only; it cannot be combined with {flag}."
            )
    if is_saved_model(args.model_dir):
        return _saved_model_n_best_usage(args)
    beam_size, where = args.beam_size, f"--beam-size {args.beam_size}"
    if beam_size is None:
        from zoo.search.defaults import BEAM_SIZE
        from zoo.translator.output_folder import CONFIG_FILE, read_settings

        beam_size = read_settings(args.model_dir, {}).get("beam_size", BEAM_SIZE)
        config = os.path.join(args.model_dir, CONFIG_FILE)
        where = f"the beam size {beam_size} of {config} (give --beam-size to change it)"
    if args.n_best > beam_size:
        raise UsageError(
            f"--n-best {args.n_best} is more than {where}: beam search keeps that many "
            f"finished translations; give --n-best {beam_size} or less, or --beam-size "
            f"{args.n_best} or more."
        )


def _saved_model_n_best_usage(args):
    """`n_best_usage` for a SavedModel: its n-best lists come from the endpoint exported
    with n best of the export's beam, as zoo_export.json records (none: left to the
    SavedModelTranslator)."""
    from zoo.export import read_export_metadata

    metadata = read_export_metadata(args.model_dir)
    if not metadata:
        return
    exported, beam_size = metadata.get("n_best"), metadata.get("beam_size")
    if not exported:
        raise UsageError(
            f"--n-best: the SavedModel {args.model_dir} was exported without n-best lists "
            "(Translator.export(..., n_best=N)); use the model folder."
        )
    if args.beam_size is not None and args.beam_size != beam_size:
        raise UsageError(
            f"--beam-size {args.beam_size} with --n-best: the SavedModel's n-best lists come "
            f"from its beam of {beam_size}, fixed at export; drop --beam-size or use the "
            "model folder."
        )
    if args.n_best > exported:
        raise UsageError(
            f"--n-best {args.n_best} is more than the {exported} best that the SavedModel "
            f"{args.model_dir} was exported with; give --n-best {exported} or less, or use the "
            "model folder."
        )


def check_counts(aligned, args, count):
    """A usage error unless every aligned file has `count` lines (the input's sentences)."""
    for name, flag in ALIGNED_FILES:
        if name in aligned and len(aligned[name]) != count:
            lines = len(aligned[name])
            raise UsageError(
                f"{flag} {getattr(args, name)} has {lines} line{'' if lines == 1 else 's'} for "
                f"{count} input sentence{'' if count == 1 else 's'}; give one line per sentence "
                "(an empty line: none)."
            )


def _print_n_best(translator, sentences, args, out, counter, search):
    if is_saved_model(args.model_dir):
        lists = translator.translate_n_best(sentences, n_best=args.n_best)
    else:
        lists = translator.translate_n_best(
            sentences, n_best=args.n_best, beam_size=args.beam_size, **search
        )
    for hypotheses in lists:
        for text, score in hypotheses:
            if score != float("-inf"):  # -inf: fewer hypotheses exist (tiny vocabularies)
                print(f"{counter[0]} ||| {text} ||| {score:.4f}", file=out)
        counter[0] += 1
    out.flush()


def _print_samples(translator, sentences, args, out, counter, shaping):
    seed = None if args.seed is None else args.seed + counter[0]  # each batch its own draws
    if is_saved_model(args.model_dir):
        import random

        seed = random.randrange(2**31) if seed is None else seed
        texts = translator.sample(sentences, seed=seed)
    else:
        texts = translator.sample(sentences, seed=seed, **shaping)
    for text in texts:
        print(text, file=out, flush=True)
    counter[0] += len(sentences)


def _print_with_attention(translator, sentences, args, out, counter, search):
    """Translations with --alignments, --attention or --plot-dir."""
    if args.replace_unk:
        raise UsageError(
            "--replace-unk prints translations only: drop --attention, --alignments and --plot-dir."
        )
    from zoo.evaluation import format_pharaoh, hard_alignments

    translations = translator.translate_with_attention(
        sentences, beam_size=args.beam_size, **search
    )
    if args.alignments:  # one call for the batch
        alignments = hard_alignments(
            [t.source_tokens for t in translations],
            [t.target_tokens for t in translations],
            [t.weights for t in translations],
        )
    for k, t in enumerate(translations):
        counter[0] += 1
        if args.alignments:
            print(f"{t.translation} ||| {format_pharaoh(alignments[k])}", file=out)
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


def _print_translations(
    translator, sentences, args, out, counter, shaping=None, unknown=None, search=None
):
    """Prints the translations of `sentences`; `search`: the keywords of the decoding
    controls, prefixes and constraints (a model folder's Translator only)."""
    search = search or {}
    if shaping is not None:
        return _print_samples(translator, sentences, args, out, counter, shaping)
    if args.n_best:
        return _print_n_best(translator, sentences, args, out, counter, search)
    if args.attention or args.plot_dir or args.alignments:
        return _print_with_attention(translator, sentences, args, out, counter, search)
    asked = {**(unknown or {}), **search}
    for text in translator.translate(sentences, beam_size=args.beam_size, **asked):
        print(text, file=out, flush=True)


def run_translate(args, out=None):
    """Prints the translations of `args.sentences`, else of stdin's lines as they come."""
    out = sys.stdout if out is None else out
    # Usage errors before loading: they should not wait for the model.
    shaping = sampling_options(args)
    n_best_usage(args)
    unknown = unknown_options(args)
    if args.plot_dir and os.path.exists(args.plot_dir) and not os.path.isdir(args.plot_dir):
        raise UsageError(f"--plot-dir {args.plot_dir}: a file; expected a folder.")
    aligned = aligned_inputs(args)
    search = {} if is_saved_model(args.model_dir) else control_options(args)
    if args.sentences:
        check_counts(aligned, args, len(args.sentences))
    translator = load_translator(args)
    counter = [0]
    if args.sentences:
        sentences = list(args.sentences)
    elif aligned:  # the whole input, to align it with the files' lines
        sentences = [line for batch in stdin_batches(sys.stdin, 1 << 30) for line in batch]
        check_counts(aligned, args, len(sentences))
    else:
        for batch in stdin_batches(sys.stdin, translator.batch_size):
            _print_translations(translator, batch, args, out, counter, shaping, unknown, search)
        return 0
    search.update(aligned)
    from zoo.translator.targets import TargetTextError

    try:
        _print_translations(translator, sentences, args, out, counter, shaping, unknown, search)
    except TargetTextError as error:  # name the file's line the user wrote
        flag = dict(ALIGNED_FILES)[error.argument]
        path = getattr(args, error.argument)
        raise ValueError(f"{flag} {path} line {error.index + 1}: {error.reason}") from None
    return 0
