"""Corpora read from disk as streams, in bounded memory whatever their size.

`Corpus` (zoo.data.corpus) holds every sentence in Python lists: right for Multi30k's 29,000
pairs, wrong for WMT'14's 4.5 million. A `StreamedCorpus` names files instead and reads them
with `tf.data.TextLineDataset` each epoch:

    line-aligned files   <prefix>.<src> and <prefix>.<tgt>, plain or gzip (".gz")
    tab-separated files  source<TAB>target per line (an optional third "CC-BY ..." column
                         is ignored), plain or gzip; several files read in order
    TFDS                 `tfds:NAME` splits through `tfds.load`, never materialised

Lines get the readers' rules (zoo.data.readers) in the graph: surrounding whitespace
stripped, control characters as spaces, pairs with an empty side dropped.

`check(corpus)` reads the files once in Python and raises the readers' errors, with file and
line: files of different lengths, invalid UTF-8, a TSV line without exactly one tab, a gzip
file cut short, old Mac line endings (CR alone). It runs before the first epoch
(zoo.data.stream_dataset's counting pass calls it), so a training stream never meets such a
line. `check_files(corpus)` is its quick part, for runs that skip the counting pass: the
gzip files read to their end and the line endings of each file's first MiB
(zoo.data.file_checks); `TextLineDataset` would otherwise stop silently at the cut of a
truncated gzip file, and read a CR-only file as one line.

`open_stream` reads the corpus registry (zoo.data.corpora) for named corpora and TFDS; the
`StreamedCorpus` record, its reading and sharding are in zoo.data.streamed_corpus.
"""

import os

from zoo.data.corpora import NAMED_TFDS, find_corpus, language_code, tfds_name
from zoo.data.corpus import Corpus
from zoo.data.errors import MissingDataError
from zoo.data.file_checks import (
    GZIP_ERRORS,
    check_file,
    check_head,
    gzip_error,
    open_binary,
    read_head,
)
from zoo.data.fingerprint import note_read
from zoo.data.readers import tsv_fields
from zoo.data.streamed_corpus import DEFAULT_TOKENIZER_SAMPLE, KINDS, StreamedCorpus
from zoo.data.tfds_corpus import prepared_files

__all__ = [
    "DEFAULT_TOKENIZER_SAMPLE",
    "KINDS",
    "NAMED_TFDS",
    "StreamedCorpus",
    "check",
    "check_files",
    "materialise",
    "open_stream",
    "tfds_name",
    "total_bytes",
]


def _check_utf8(raw, path, number):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}, line {number}: invalid UTF-8 ({error.reason} at byte {error.start} of "
            f"the line: {raw[max(0, error.start - 20) : error.end + 20]!r})."
        ) from None


def check(corpus):
    """Reads `corpus`'s files once and raises ValueError naming the file and line of the first
    problem: files of different lengths, invalid UTF-8, a TSV line without exactly one tab,
    a damaged or truncated gzip file, lines ending in CR alone.
    Returns the number of lines (pairs before dropping empty ones); None for TFDS."""
    if corpus.kind == "tfds":
        return None
    total = 0
    if corpus.kind == "parallel":
        for source_path, target_path in corpus.files:
            total += _check_parallel(source_path, target_path)
        return total
    for path in corpus.files:
        total += _read_lines(
            path, lambda raw, path, number: tsv_fields(_check_utf8(raw, path, number), path, number)
        )
    return total


def check_files(corpus):
    """The quick part of `check`, for a stream that is not counted before training: reads
    each gzip file to its end and checks each file's first MiB for CR-only line ends; raises
    ValueError naming the file. For TFDS, only notes the prepared files read."""
    if corpus.kind == "tfds":
        for name, split in corpus.files:
            for path in prepared_files(name, split, corpus.tfds_data_dir):
                note_read(path)
    for path in corpus.paths():
        note_read(path)
        check_file(path)


def _read_lines(path, check_line):
    """Calls `check_line(raw, path, number)` on each line of `path` (bytes without its line
    end); returns the number of lines. Raises ValueError naming the file when it is a damaged
    gzip file or has CR-only line ends."""
    note_read(path)
    check_head(read_head(path), path)
    number = 0
    try:
        with open_binary(path) as f:
            for number, raw in enumerate(f, start=1):
                check_line(raw.rstrip(b"\r\n"), path, number)
    except GZIP_ERRORS as error:
        raise gzip_error(path, error, f" (after line {number})") from None
    return number


def _check_parallel(source_path, target_path):
    lines = [_check_lines(path) for path in (source_path, target_path)]
    if lines[0] != lines[1]:
        raise ValueError(
            f"Parallel files differ in length: {source_path} has {lines[0]} lines but "
            f"{target_path} has {lines[1]}; line i of one must translate line i of the other."
        )
    return lines[0]


def _check_lines(path):
    """The number of lines of `path`; raises on invalid UTF-8."""
    return _read_lines(path, _check_utf8)


def _existing(path):
    """`path` or `path.gz`, whichever exists (None when neither)."""
    for candidate in (path, path + ".gz"):
        if os.path.isfile(candidate):
            return candidate
    return None


def open_stream(name, source_lang, target_lang, split, tfds_data_dir=None):
    """`split` of corpus `name` as a `StreamedCorpus` (nothing is read yet).

    `name`: a registry corpus that streams ("multi30k" (its local files), "wmt14"; see
    `zoo.data.corpora.CORPORA`) or "tfds:NAME", a prefix with `{split}` in it (files
    PREFIX.<lang>, or PREFIX.<lang>.gz), or a tab-separated file with `{split}` in its name
    (plain or .gz). A corpus without `{split}` in its name is split by sentence hash in
    memory (`load_corpus`): to stream it, give one file (pair) per split.
    """
    name = os.fspath(name)
    info = find_corpus(name)
    if info is not None:
        source_lang, target_lang = language_code(source_lang), language_code(target_lang)
        info.check_languages(source_lang, target_lang)
        if info.open_stream is None:
            raise ValueError(
                f"Corpus {name!r} is split by sentence in memory and is not streamed; read it "
                "in memory (load_corpus, --streaming off)."
            )
        split = info.canonical_split(split)
        return info.open_stream(source_lang, target_lang, split, tfds_data_dir=tfds_data_dir)
    if "{split}" not in name:
        raise ValueError(
            f"Corpus {name!r}: streaming reads one file (or pair of files) per split; put "
            "{split} in the name (e.g. data/{split} for data/train.de, data/train.en, ...) or "
            "read it in memory (--streaming off), where it is split by sentence."
        )
    path = name.replace("{split}", split)
    if path.endswith((".tsv", ".tsv.gz", ".txt", ".txt.gz")):
        return StreamedCorpus(name, source_lang, target_lang, split, "tsv", (path,))
    pair = tuple(_existing(f"{path}.{lang}") for lang in (source_lang, target_lang))
    if None in pair:
        raise MissingDataError(
            f"Corpus {name!r}: missing {path}.{source_lang} or {path}.{target_lang} (plain or "
            f".gz) for the {split!r} split."
        )
    return StreamedCorpus(name, source_lang, target_lang, split, "parallel", (pair,))


def materialise(stream):
    """Reads a (small) `StreamedCorpus` whole into a `zoo.data.Corpus` (validation and test
    splits of a streamed corpus)."""
    check(stream)
    sources, targets = [], []
    for source, target in stream.pair_batches().as_numpy_iterator():
        sources.extend(s.decode("utf-8") for s in source)
        targets.extend(t.decode("utf-8") for t in target)
    if not sources:
        raise ValueError(f"Corpus {stream.name!r}: the {stream.split!r} split has no pairs.")
    return Corpus(
        stream.name, stream.source_lang, stream.target_lang, stream.split, sources, targets
    )


def total_bytes(stream):
    """The size on disk of a stream's files (0 for TFDS)."""
    return sum(os.path.getsize(p) for p in stream.paths())
