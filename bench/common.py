"""What the bench/ scripts share: cached Multi30k tokenizers, the peer's figures, tables.

Not a library module: imported only by the scripts next to it (`python bench/<script>.py`).
"""

import os
import pathlib
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
from zoo.data.registry import DEFAULT_CORPUS, complete_languages, find_corpus  # noqa: E402
from zoo.models.presets import SIZES  # noqa: E402
from zoo.training.strategy import MATRIX_FLAGS, PRECISIONS, cpu_flags  # noqa: E402


def cpu_name():
    """The CPU's model name (/proc/cpuinfo), else the platform's machine name."""
    import platform

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


def add_corpus_flags(parser, split=None, data_help="corpus"):
    """`--data`, `--source-lang`, `--target-lang` (and `--split` when `split` is given) as the
    recipes spell them; the languages default to the corpus' own pair (`corpus_pair`)."""
    parser.add_argument(
        "--data", default=DEFAULT_CORPUS, help=f"{data_help} (default: %(default)s)"
    )
    for side in ("source", "target"):
        parser.add_argument(
            f"--{side}-lang", default=None, help=f"{side} language (default: the corpus' pair)"
        )
    if split is not None:
        parser.add_argument("--split", default=split, help="split to read (default: %(default)s)")


def corpus_pair(args):
    """(source, target) of `add_corpus_flags`' flags, completed as the recipes complete them
    (`zoo.data.registry.complete_languages`: the corpus' own pair; `--source-lang en` alone on
    Multi30k gives en->de). Files and TFDS names without both languages exit with a message."""
    try:
        return complete_languages(args.data, args.source_lang, args.target_lang, family="luong")
    except ValueError:  # files, a TFDS name or a corpus without a default pair
        raise SystemExit(
            f"--data {args.data} has no default language pair: give --source-lang and "
            "--target-lang."
        ) from None


def bench_corpus(split):
    """`split` of the benchmarks' corpus: the registry's default corpus in its own pair
    (Multi30k de->en), the corpus every recorded figure of bench/ measures."""
    from zoo.data import load_corpus

    return load_corpus(
        DEFAULT_CORPUS, *find_corpus(DEFAULT_CORPUS).default_languages("luong"), split
    )


def tokenizers(vocab_size=None, source="de", target="en", cache_dir=None, quiet=False):
    """SentencePiece tokenizers trained on Multi30k train (cached under bench/out/), of
    `vocab_size` pieces (default: the recipes', `zoo.text.DEFAULT_VOCAB_SIZE`)."""
    from zoo.data import load_corpus
    from zoo.text import DEFAULT_VOCAB_SIZE, load_tokenizer, train_tokenizer

    vocab_size = DEFAULT_VOCAB_SIZE if vocab_size is None else vocab_size

    cache_dir = pathlib.Path(cache_dir or OUT_DIR / "tokenizers")
    result = []
    corpus = None
    for lang, side in ((source, "source"), (target, "target")):
        directory = cache_dir / f"multi30k-{lang}-sentencepiece-{vocab_size}"
        if (directory / "tokenizer.json").exists():
            result.append(load_tokenizer(str(directory)))
            continue
        if corpus is None:
            corpus = load_corpus("multi30k", source, target, "train")
        start = time.perf_counter()
        sentences = corpus.source if side == "source" else corpus.target
        tokenizer = train_tokenizer("sentencepiece", sentences, vocab_size)
        directory.mkdir(parents=True, exist_ok=True)
        tokenizer.save(str(directory))
        if not quiet:
            print(
                f"trained {lang} SentencePiece {vocab_size} in {time.perf_counter() - start:.1f} s "
                f"-> {directory}"
            )
        result.append(tokenizer)
    return result


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


SUFFIX_HELP = (
    "NAME:nofeed / NAME:feed for input feeding off / on, NAME:unidirectional for the paper's "
    "one-way encoder, NAME:tied / NAME:untied for the output layer tied to the target "
    "embeddings or not (suffixes combine, e.g. NAME:feed:unidirectional)"
)


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


def add_model_arguments(parser):
    """`--size` and `--precision`, shared by the benchmark scripts."""
    parser.add_argument(
        "--size", default="base", choices=SIZES, help="preset size (default: %(default)s)"
    )
    parser.add_argument(
        "--precision",
        default=PRECISIONS[0],
        choices=PRECISIONS,
        help="Keras dtype policy (default: %(default)s)",
    )


BACKEND_HELP = (
    "comma-separated Keras backends, each measured in its own process and shown side by "
    f"side: {', '.join(BACKENDS)} (default: %(default)s, from KERAS_BACKEND, else tensorflow)"
)


def default_backend():
    """The Keras backend this program runs on: KERAS_BACKEND, else tensorflow (as Keras)."""
    return os.environ.get("KERAS_BACKEND", "tensorflow")


def parse_backends(text):
    """ "tensorflow,jax" -> ["tensorflow", "jax"]: known and installed backends, in order,
    each once; a ValueError naming what was given otherwise."""
    backends = list(dict.fromkeys(b.strip() for b in (text or "").split(",") if b.strip()))
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


def table(rows, columns):
    """A plain-text table: rows are dicts, columns (key, header, format)."""
    cells = [[header for _, header, _ in columns]]
    for row in rows:
        line = []
        for key, _, fmt in columns:
            value = row.get(key)
            line.append("-" if value is None else (fmt.format(value) if fmt else str(value)))
        cells.append(line)
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    out = []
    for n, r in enumerate(cells):
        out.append(
            "  ".join(c.rjust(w) if n else c.ljust(w) for c, w in zip(r, widths, strict=True))
        )
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def rss_peak_mib():
    """Peak resident set size of this process (MiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
