"""What the bench/ scripts share: their flags, the benchmark corpus and its cached tokenizers,
models, timing, tables, JSON records, the machine's description and the peer's figures.

Not a library module: imported only by the scripts next to it (`python bench/<script>.py`).
"""

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import pathlib
import platform
import re
import subprocess
import sys
import time
from unittest import mock

import zoo_startup

# A benchmark is a program: it starts TensorFlow quietly on a CPU, as the recipes do.
zoo_startup.quiet_tensorflow_start()

BENCH_DIR = pathlib.Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
OUT_DIR = BENCH_DIR / "out"  # gitignored
PEER_DIR = REPO_DIR.parent / "shared" / "peers" / "joeynmt"
PEER_WORK = pathlib.Path(os.environ.get("JOEY_WORK", "/tmp/joeynmt-peer"))

# /work/shared/peers/joeynmt/README.md (Joey NMT 2.3.0, 2-core CPU, batch 64)
PEER_README = {
    "train_bahdanau_tokens_per_s": 900.0,  # 895 mean of 7 epochs
    "train_luong_tokens_per_s": 600.0,  # 570-626
    "decode_beam5_batch64": 36.4,
    "decode_greedy_batch64": 92.9,
    "decode_beam5_batch1": 8.0,
    "decode_greedy_batch1": 15.7,
}

if str(REPO_DIR) not in sys.path:  # `python bench/x.py` from anywhere
    sys.path.insert(0, str(REPO_DIR))

from zoo.backend import BACKENDS, backend_installed  # noqa: E402
from zoo.data import (  # noqa: E402
    BATCHINGS,
    DEFAULT_BATCH_SIZE,
    DEFAULT_BATCHING,
    DEFAULT_BUCKET_WIDTH,
    DEFAULT_CORPUS,
    DEFAULT_MAX_LENGTH,
    default_languages,
    default_test_split,
    load_corpus,
)
from zoo.data.registry import corpora_help  # noqa: E402
from zoo.models.presets import SIZES  # noqa: E402
from zoo.search import defaults as search_defaults  # noqa: E402
from zoo.text import DEFAULT_VOCAB_SIZE  # noqa: E402
from zoo.training.strategy import MATRIX_FLAGS, PRECISIONS, cpu_flags  # noqa: E402
from zoo.workflow.flags import resolve_languages  # noqa: E402
from zoo.workflow.run_folder import peak_memory_mib  # noqa: E402, F401  (the scripts')

# The corpus of the benchmarks that time models (train_speed, decode_speed, early_learning):
# the registry's default corpus in its own pair, what every recorded figure of bench/ measures.
BENCH_PAIR = default_languages(DEFAULT_CORPUS, "luong")
BENCH_TEST = default_test_split(DEFAULT_CORPUS)


def cpu_name():
    """The CPU's model name (/proc/cpuinfo), else the platform's machine name."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def matrix_flags():
    """The CPU's flags that decide the speed of matrix products, in `MATRIX_FLAGS` order."""
    flags = cpu_flags()
    return [flag for flag in MATRIX_FLAGS if flag in flags]


def machine_line():
    """One line for a result: the CPU, its cores and its matrix flags."""
    flags = " ".join(matrix_flags()) or "none of " + " ".join(MATRIX_FLAGS)
    return f"Machine: {cpu_name()}, {os.cpu_count()} cores; CPU flags: {flags}"


# ---------------------------------------------------------------------------------------
# Flags: one vocabulary for every script, the recipes' names where the recipes have them.


def parser(doc):
    """An argument parser described by the first paragraph of a script's docstring `doc`,
    its lines kept."""
    return argparse.ArgumentParser(
        description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )


def split_list(text, convert=str):
    """ "a, b,,c" -> ["a", "b", "c"], each converted by `convert`."""
    return [convert(item.strip()) for item in text.split(",") if item.strip()]


def add_corpus_flags(parser, split=None):
    """`--data`, `--source-lang`, `--target-lang` as the recipes spell them (the languages
    default to the corpus' own pair, `corpus_pair`), and `--split` when `split` is given: its
    default, or "test" for the corpus' own test split (`corpus_split`)."""
    parser.add_argument(
        "--data", default=DEFAULT_CORPUS, help=f"{corpora_help()} (default: %(default)s)"
    )
    for side in ("source", "target"):
        parser.add_argument(
            f"--{side}-lang", default=None, help=f"{side} language (default: the corpus' pair)"
        )
    if split == "test":
        parser.add_argument("--split", help="split to read (default: the corpus' test split)")
    elif split is not None:
        parser.add_argument("--split", default=split, help="split to read (default: %(default)s)")


def corpus_pair(args):
    """(source, target) of `add_corpus_flags`' flags, completed as the recipes complete them
    (`--source-lang en` alone on Multi30k gives en->de); a corpus without a default pair
    and without both flags exits with a message."""
    try:
        return resolve_languages(args.data, args.source_lang, args.target_lang, family="luong")
    except ValueError as error:
        raise SystemExit(str(error)) from None


def corpus_split(args, limit=None):
    """The `Corpus` of `add_corpus_flags`' flags (its first `limit` pairs when given);
    `args.split` left unset becomes the corpus' test split."""
    args.split = args.split or default_test_split(args.data)
    corpus = load_corpus(args.data, *corpus_pair(args), args.split)
    return corpus.take(limit) if limit else corpus


class _Given(argparse.Action):
    """Sets its value only when given: an absent positional leaves the flag's value."""

    def __call__(self, parser, namespace, values, option_string=None):
        if values is not None:
            setattr(namespace, self.dest, values)


def add_model_dir(parser):
    """The trained output folder a script reads: `MODEL_DIR` or `--model-dir MODEL_DIR`."""
    folder = parser.add_mutually_exclusive_group(required=True)
    folder.add_argument(
        "model_dir", nargs="?", action=_Given, help="a trained output folder (or saved_models/NAME)"
    )
    folder.add_argument("--model-dir", dest="model_dir", help="the same folder, as a flag")


def add_preset_flags(parser, presets):
    """`--presets` (default `presets`), `--size`, `--precision` and `--vocab-size`: the
    untrained models a script builds (`preset_specs`, `build_model`)."""
    parser.add_argument(
        "--presets",
        default=presets,
        help="comma-separated preset names (zoo.models.presets(), or 'all' for every one), "
        "each with suffixes: NAME:nofeed / NAME:feed for input feeding off / on, "
        "NAME:unidirectional for the paper's one-way encoder, NAME:tied / NAME:untied for the "
        "output layer tied to the target embeddings or not (suffixes combine, e.g. "
        "NAME:feed:unidirectional) (default: %(default)s)",
    )
    parser.add_argument(
        "--size", default="base", choices=SIZES, help="preset size (default: %(default)s)"
    )
    parser.add_argument(
        "--precision",
        default=PRECISIONS[0],
        choices=PRECISIONS,
        help="Keras dtype policy (default: %(default)s)",
    )
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=DEFAULT_VOCAB_SIZE,
        help="SentencePiece vocabularies of the benchmark corpus (default: %(default)s)",
    )


def add_batch_flags(parser):
    """`--batch-size`, `--max-length` and `--batching`, make_dataset's own defaults."""
    parser.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        help="sentence pairs per batch (default: %(default)s)",
    )
    parser.add_argument(
        "--max-length",
        type=int,
        default=DEFAULT_MAX_LENGTH,
        help="drop pairs with more pieces on either side (default: %(default)s)",
    )
    parser.add_argument(
        "--batching",
        choices=BATCHINGS,
        default=DEFAULT_BATCHING,
        help="make_dataset's grouping of pairs into batches: sorted pools, length buckets of "
        f"width {DEFAULT_BUCKET_WIDTH} (what a token budget needs), or plain shuffled batches "
        "as Joey NMT's (default: %(default)s)",
    )


def add_search_flags(parser):
    """`--searches` and `--beam` (`searches`)."""
    parser.add_argument(
        "--searches", default="greedy,beam", help="greedy, beam or both (default: %(default)s)"
    )
    parser.add_argument(
        "--beam",
        type=int,
        default=search_defaults.BEAM_SIZE,
        help="beam size of the beam rows (default: %(default)s, zoo.search.defaults)",
    )


def searches(args):
    """[(label, beam size)] of `add_search_flags`' flags: ("greedy", 1), ("beam 5", 5)."""
    chosen = split_list(args.searches)
    unknown = sorted(set(chosen) - {"greedy", "beam"})
    if unknown:
        raise ValueError(f"Unknown search(es) {unknown} in --searches; use greedy, beam.")
    return [("greedy", 1) if s == "greedy" else (f"beam {args.beam}", args.beam) for s in chosen]


def add_backend_flag(parser):
    """`--backend`: the Keras backends to measure (`parse_backends`)."""
    parser.add_argument(
        "--backend",
        default=default_backend(),
        help="comma-separated Keras backends, each measured in its own process and shown "
        f"side by side: {', '.join(BACKENDS)} (default: %(default)s, from KERAS_BACKEND, "
        "else tensorflow)",
    )


# ---------------------------------------------------------------------------------------
# Presets, tokenizers and the benchmark corpus.

# Suffixes of a preset spec "NAME[:SUFFIX...]" and the build overrides they stand for. The
# base Luong presets read both ways in the first encoder layer and run without input
# feeding (zoo.models.presets); ":feed:unidirectional" is the paper's model at base sizes,
# the one that bench/RESULTS.md's figures dated up to 2026-12-01 ("Training speed") measured
# as plain "luong_global_general".
PRESET_SUFFIXES = {
    "nofeed": {"input_feeding": False},
    "feed": {"input_feeding": True},
    "unidirectional": {"bidirectional": False},
    "tied": {"tie_embeddings": True},
    "untied": {"tie_embeddings": False},
}


def parse_preset(spec):
    """ "luong_global_general:feed:unidirectional" -> ("luong_global_general", overrides)."""
    name, *suffixes = spec.split(":")
    overrides = {}
    for suffix in suffixes:
        if suffix not in PRESET_SUFFIXES:
            raise ValueError(
                f"Unknown preset suffix {suffix!r} in {spec!r}; valid: "
                f"{', '.join(':' + s for s in PRESET_SUFFIXES)}."
            )
        overrides.update(PRESET_SUFFIXES[suffix])
    return name, overrides


def preset_specs(text, size):
    """The preset specs of `--presets` ('all': every preset, and the paper's Luong model at
    base sizes); a ValueError names an unknown preset, suffix or size."""
    import zoo.models

    if text == "all":
        specs = zoo.models.presets() + ["luong_global_general:feed:unidirectional"]
    else:
        specs = split_list(text)
    for spec in specs:
        zoo.models.preset_arguments(parse_preset(spec)[0], size)
    return specs


def build_model(spec, size, vocab_sizes, precision=None, seed=None, overrides=None):
    """The untrained model of preset `spec` (`parse_preset`) at `size` for (source, target)
    `vocab_sizes`, with build `overrides` (a dict) besides the spec's, built under
    `precision` (a Keras dtype policy) after seeding Keras with `seed`, where given. Seeding
    destroys the SentencePiece resources of tokenizers that exist already, so a script that
    seeds does it before loading them."""
    import keras

    import zoo.models
    from zoo.training import set_precision

    name, spec_overrides = parse_preset(spec)
    if precision is not None:
        set_precision(precision)
    if seed is not None:
        keras.utils.set_random_seed(seed)
    return zoo.models.build(
        name,
        size=size,
        source_vocab_size=vocab_sizes[0],
        target_vocab_size=vocab_sizes[1],
        **{**spec_overrides, **(overrides or {})},
    )


def bench_corpus(split):
    """`split` of the benchmark corpus (DEFAULT_CORPUS in BENCH_PAIR)."""
    return load_corpus(DEFAULT_CORPUS, *BENCH_PAIR, split)


def tokenizers(vocab_size=None, quiet=False):
    """SentencePiece tokenizers (source, target) of `vocab_size` pieces (default: the
    recipes', `zoo.text.DEFAULT_VOCAB_SIZE`) trained on the benchmark corpus' train split,
    cached under bench/out/tokenizers/."""
    from zoo.text import load_tokenizer, train_tokenizer

    vocab_size = vocab_size or DEFAULT_VOCAB_SIZE
    result, corpus = [], None
    for lang, side in zip(BENCH_PAIR, ("source", "target"), strict=True):
        directory = OUT_DIR / "tokenizers" / f"{DEFAULT_CORPUS}-{lang}-sentencepiece-{vocab_size}"
        if (directory / "tokenizer.json").exists():
            result.append(load_tokenizer(str(directory)))
            continue
        corpus = corpus or bench_corpus("train")
        start = time.perf_counter()
        tokenizer = train_tokenizer("sentencepiece", getattr(corpus, side), vocab_size)
        directory.mkdir(parents=True, exist_ok=True)
        tokenizer.save(str(directory))
        if not quiet:
            print(
                f"trained {lang} SentencePiece {vocab_size} in {time.perf_counter() - start:.1f} s"
            )
        result.append(tokenizer)
    return result


# ---------------------------------------------------------------------------------------
# Backends, timing, tables and records.


def default_backend():
    """The Keras backend this program runs on: KERAS_BACKEND, else tensorflow (as Keras)."""
    return os.environ.get("KERAS_BACKEND", "tensorflow")


def parse_backends(text):
    """ "tensorflow,jax" -> ["tensorflow", "jax"]: known and installed backends, in order,
    each once; a ValueError naming what was given otherwise."""
    backends = list(dict.fromkeys(split_list(text or "")))
    if not backends:
        raise ValueError(f"--backend names no backend: {text!r}; use {', '.join(BACKENDS)}.")
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise ValueError(f"Unknown backend(s) {unknown} in {text!r}; use {', '.join(BACKENDS)}.")
    missing = [b for b in backends if not backend_installed(b)]
    if missing:
        raise ValueError(
            f'Backend(s) {missing} are not installed; pip install -e ".[{",".join(missing)}]".'
        )
    return backends


def keras_backend(backend):
    """A context: KERAS_BACKEND set to `backend` for the processes started inside, restored
    after (Keras reads it once, at import, so each backend is measured in a process of its
    own)."""
    return mock.patch.dict(os.environ, {"KERAS_BACKEND": backend})


def run_on(backend, function, *args):
    """`function(*args)`'s value, run in a fresh (spawned) process on Keras `backend`: clean
    memory peaks, and Keras imported anew under that backend."""
    context = multiprocessing.get_context("spawn")
    with (
        keras_backend(backend),
        concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool,
    ):
        return pool.submit(function, *args).result()


def timed(function, *args, **kwargs):
    """(value, seconds) of `function(*args, **kwargs)` called twice, the first call untimed
    (tracing, and each new length setting up its kernels once)."""
    function(*args, **kwargs)
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start


def time_each(function, items, max_seconds=None):
    """(the seconds of `function(item)` for each of `items` in turn, the last call's value),
    stopping after the call that brings the total past `max_seconds` where given."""
    times, value = [], None
    for item in items:
        start = time.perf_counter()
        value = function(item)
        times.append(time.perf_counter() - start)
        if max_seconds is not None and sum(times) > max_seconds:
            break
    return times, value


def table(rows, columns, markdown=False):
    """A table of `rows` (dicts), `columns` (key, header, format or None for str): plain
    text aligned in columns, or Markdown. A missing value shows as "-"."""
    cells = [[header for _, header, _ in columns]]
    for row in rows:
        cells.append(
            [
                "-" if row.get(key) is None else (fmt.format(row[key]) if fmt else str(row[key]))
                for key, _, fmt in columns
            ]
        )
    if markdown:
        lines = ["| " + " | ".join(line) + " |" for line in cells]
        return "\n".join([lines[0], "|" + "---|" * len(columns), *lines[1:]])
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = [
        "  ".join(c.rjust(w) if n else c.ljust(w) for c, w in zip(line, widths, strict=True))
        for n, line in enumerate(cells)
    ]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


def read_json(path):
    """The JSON value of the file `path`."""
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def write_json(path, value):
    """Writes `value` to `path` as indented JSON (its folder made where missing)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------
# The peer, Joey NMT (docs/benchmarks.md).


def peer_ready():
    return (PEER_WORK / "venv").exists()


# The peer's throughput runs, per model family: the command that trains it for N seconds and
# the log it writes (bench/peer_luong.sh: the Luong model, which run.sh does not time).
PEER_TPUT = {
    "bahdanau": ([str(PEER_DIR / "run.sh"), "tput"], "tput.log"),
    "luong": ([str(REPO_DIR / "bench" / "peer_luong.sh")], "tput_luong.log"),
}


def peer_train_figure(family="bahdanau", run_seconds=None):
    """The peer's measured training tokens/s for `family` ("bahdanau" or "luong"), or None.

    With `run_seconds`, first trains the peer's model for that long (`run.sh tput` or
    `bench/peer_luong.sh`; both need `run.sh setup`); then reads the log of its last run.
    Returns (tokens_per_s, line) or None when there is no usable log.
    """
    if not peer_ready():
        return None
    command, log_name = PEER_TPUT[family]
    log = PEER_WORK / "logs" / log_name
    if run_seconds:
        subprocess.run([*command, str(int(run_seconds))], capture_output=True, check=False)
    figure = peer_log_figure(log)
    if figure is None:
        return None
    value = figure["tokens_per_s"]
    return value, f"joeynmt {family} {value:.0f} tokens/s (from {log})"


def peer_log_figure(log, batch_size=64):
    """Steady-state throughput from a Joey NMT training log, or None (no log, < 3 lines).

    Joey logs "Tokens per Sec" every `logging_freq` steps; the figure weights each logged rate
    by the time since the previous line, from the first logged step to the last (the start-up
    before the first line is left out). Returns a dict: tokens_per_s, pairs_per_s,
    first_step, last_step, seconds.
    """
    import datetime as dt

    log = pathlib.Path(log)
    if not log.exists():
        return None
    pat = re.compile(
        r"^(\S+ \S+) - INFO - joeynmt.training - Epoch\s+\d+, Step:\s+(\d+), "
        r".*Tokens per Sec:\s+(\d+)"
    )
    rows = []
    for text in log.read_text(encoding="utf-8").splitlines():
        m = pat.match(text)
        if m:
            rows.append((dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f"), int(m[2]), int(m[3])))
    if len(rows) < 3:
        return None
    seconds = (rows[-1][0] - rows[0][0]).total_seconds()
    tokens = sum(r[2] * (r[0] - p[0]).total_seconds() for p, r in zip(rows, rows[1:], strict=False))
    return {
        "tokens_per_s": tokens / seconds,
        "pairs_per_s": batch_size * (rows[-1][1] - rows[0][1]) / seconds,
        "first_step": rows[0][1],
        "last_step": rows[-1][1],
        "seconds": seconds,
    }
