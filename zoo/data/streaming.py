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
line: files of different lengths, invalid UTF-8, a TSV line without exactly one tab. It runs
before the first epoch (zoo.data.stream_dataset's counting pass calls it), so a training
stream never meets such a line.

Sharding (`lines(num_shards, index)`): with at least as many files as shards, worker `index`
reads files index, index + num_shards, ...; otherwise every worker reads all lines and keeps
line index, index + num_shards, ... Either way each pair is read by one worker per epoch.
"""

import dataclasses
import gzip
import os
import random

import tensorflow as tf

from zoo.data.errors import MissingDataError
from zoo.data.pipeline import TOKENIZE_BATCH
from zoo.data.readers import tsv_fields
from zoo.data.tfds_corpus import SPLIT_NAMES

KINDS = ("parallel", "tsv", "tfds")
# The readers' control characters (Unicode category Cc without tab, LF and CR), in RE2.
_CONTROL = r"[\x{00}-\x{08}\x{0b}\x{0c}\x{0e}-\x{1f}\x{7f}-\x{9f}]"
_BOM = "\ufeff"


@dataclasses.dataclass(frozen=True)
class StreamedCorpus:
    """One split of a parallel corpus on disk (or in TFDS), read as a stream.

    Attributes:
        name: the corpus name as given (a prefix, a TSV path, "tfds:NAME").
        source_lang, target_lang: language codes.
        split: the split's name.
        kind: "parallel" (line-aligned files), "tsv" or "tfds".
        files: for "parallel", ((source_path, target_path), ...); for "tsv", (path, ...);
            for "tfds", ((dataset name, TFDS split),).
        swap: "tsv" only: the first column is the target side.
        tfds_data_dir: "tfds" only: `data_dir` for `tfds.load`.
    """

    name: str
    source_lang: str
    target_lang: str
    split: str
    kind: str
    files: tuple
    swap: bool = False
    tfds_data_dir: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"StreamedCorpus kind must be one of {KINDS}, got {self.kind!r}.")
        if not self.files:
            raise ValueError(f"StreamedCorpus {self.name!r} ({self.split}) names no files.")
        if self.kind != "tfds":
            for path in self.paths():
                if not os.path.isfile(path):
                    raise MissingDataError(f"Missing corpus file {path}.")

    def paths(self):
        """Every file read, in order (none for TFDS)."""
        if self.kind == "parallel":
            return [p for pair in self.files for p in pair]
        return [] if self.kind == "tfds" else list(self.files)

    def fingerprint(self):
        """What identifies the data: the files with their sizes and modification times."""
        if self.kind == "tfds":
            return {"tfds": [list(f) for f in self.files]}
        return {p: [os.path.getsize(p), int(os.path.getmtime(p))] for p in self.paths()}

    def records(self, num_shards=1, index=0):
        """`tf.data.Dataset` of this worker's raw records (see the module docstring on
        sharding), one per pair: a (source, target) pair of `tf.string` scalars, or the line
        of a TSV file. `pairs_of` turns a batch of them into normalised sentences."""
        num_shards, index = int(num_shards), int(index)
        if not 0 <= index < num_shards:
            raise ValueError(f"Shard index must be in [0, {num_shards}), got {index}.")
        files = list(self.files)
        by_file = self.kind != "tfds" and num_shards > 1 and len(files) >= num_shards
        if by_file:
            files = files[index::num_shards]
        dataset = _concatenate([self._read(f) for f in files])
        if num_shards > 1 and not by_file:
            dataset = dataset.shard(num_shards, index)
        return dataset

    def pairs_of(self, *records):
        """A batch of `records` (as a map function receives them) -> (sources (B,), targets
        (B,)) `tf.string`, normalised as the readers do (empty sentences are kept)."""
        if self.kind != "tsv":
            source, target = records
            return _normalised(source), _normalised(target)
        fields = tf.strings.split(records[0], "\t", maxsplit=2).to_tensor(default_value="")
        first, second = _normalised(fields[:, 0]), _normalised(fields[:, 1])
        return (second, first) if self.swap else (first, second)

    def pair_batches(self, num_shards=1, index=0):
        """`tf.data.Dataset` of (sources (B,), targets (B,)) `tf.string` batches of up to
        TOKENIZE_BATCH pairs: this worker's share, normalised, none with an empty side."""

        def nonempty(*records):
            source, target = self.pairs_of(*records)
            keep = (tf.strings.length(source) > 0) & (tf.strings.length(target) > 0)
            return tf.boolean_mask(source, keep), tf.boolean_mask(target, keep)

        batches = self.records(num_shards, index).batch(TOKENIZE_BATCH)
        return batches.map(nonempty, num_parallel_calls=tf.data.AUTOTUNE)

    def lines(self, num_shards=1, index=0):
        """`pair_batches` one pair at a time: (source, target) `tf.string` scalars."""
        return self.pair_batches(num_shards, index).unbatch()

    def _read(self, entry):
        if self.kind == "tfds":
            import tensorflow_datasets as tfds

            name, split = entry
            dataset = tfds.load(name, split=split, data_dir=self.tfds_data_dir)
            source, target = self.source_lang, self.target_lang
            return dataset.map(lambda example: (example[source], example[target]))
        if self.kind == "parallel":
            source_path, target_path = entry
            return tf.data.Dataset.zip(_text_lines(source_path), _text_lines(target_path))
        return _text_lines(entry)

    def sample(self, count, seed=0):
        """A seeded uniform sample of at most `count` pairs (reservoir sampling over one
        streaming pass, in file order): (sources, targets) lists, for training tokenizers."""
        rng = random.Random(seed)
        sources, targets = [], []
        seen = 0
        for source, target in self.pair_batches().as_numpy_iterator():
            for s, t in zip(source, target, strict=True):
                if seen < count:
                    sources.append(s)
                    targets.append(t)
                else:
                    j = rng.randrange(seen + 1)
                    if j < count:
                        sources[j], targets[j] = s, t
                seen += 1
        decode = lambda items: [x.decode("utf-8") for x in items]  # noqa: E731
        return decode(sources), decode(targets)


def _concatenate(datasets):
    dataset = datasets[0]
    for other in datasets[1:]:
        dataset = dataset.concatenate(other)
    return dataset


def _text_lines(path):
    compression = "GZIP" if path.endswith(".gz") else ""
    return tf.data.TextLineDataset(path, compression_type=compression)


def _normalised(text):
    text = tf.strings.regex_replace(text, "^" + _BOM, "")
    return tf.strings.strip(tf.strings.regex_replace(text, _CONTROL, " "))


def _open_binary(path):
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


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
    problem: files of different lengths, invalid UTF-8, a TSV line without exactly one tab.
    Returns the number of lines (pairs before dropping empty ones); None for TFDS."""
    if corpus.kind == "tfds":
        return None
    total = 0
    if corpus.kind == "parallel":
        for source_path, target_path in corpus.files:
            total += _check_parallel(source_path, target_path)
        return total
    for path in corpus.files:
        with _open_binary(path) as f:
            for number, raw in enumerate(f, start=1):
                tsv_fields(_check_utf8(raw.rstrip(b"\r\n"), path, number), path, number)
                total += 1
    return total


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
    number = 0
    with _open_binary(path) as f:
        for number, raw in enumerate(f, start=1):
            _check_utf8(raw, path, number)
    return number


# Named TFDS corpora: name -> {frozenset(languages): TFDS dataset}. WMT'14 as in the papers
# (Luong et al.: English-German, 4.5M pairs; Bahdanau et al.: English-French, 12M): TFDS's
# validation split is newstest2013 and its test split newstest2014.
NAMED_TFDS = {
    "wmt14": {
        frozenset({"de", "en"}): "wmt14_translate/de-en",
        frozenset({"fr", "en"}): "wmt14_translate/fr-en",
        frozenset({"cs", "en"}): "wmt14_translate/cs-en",
        frozenset({"ru", "en"}): "wmt14_translate/ru-en",
        frozenset({"hi", "en"}): "wmt14_translate/hi-en",
    }
}


def tfds_name(name, source_lang, target_lang):
    """`name` ("tfds:NAME" or a key of NAMED_TFDS) as a TFDS dataset name, else None."""
    if name.startswith("tfds:"):
        return name[len("tfds:") :]
    if name in NAMED_TFDS:
        pairs = NAMED_TFDS[name]
        found = pairs.get(frozenset({source_lang, target_lang}))
        if found is None:
            known = ", ".join("-".join(sorted(p)) for p in pairs)
            raise ValueError(
                f"{name} has the language pairs {known}; received {source_lang!r} -> "
                f"{target_lang!r}."
            )
        return found
    return None


def _existing(path):
    """`path` or `path.gz`, whichever exists (None when neither)."""
    for candidate in (path, path + ".gz"):
        if os.path.isfile(candidate):
            return candidate
    return None


def open_stream(name, source_lang, target_lang, split, tfds_data_dir=None):
    """`split` of corpus `name` as a `StreamedCorpus` (nothing is read yet).

    `name`: "multi30k" (its local files), "wmt14" or "tfds:NAME", a prefix with `{split}` in
    it (files PREFIX.<lang>, or PREFIX.<lang>.gz), or a tab-separated file with `{split}` in
    its name (plain or .gz). A corpus without `{split}` in its name is split by sentence hash
    in memory (`load_corpus`): to stream it, give one file (pair) per split.
    """
    name = os.fspath(name)
    found = tfds_name(name, source_lang, target_lang)
    if found is not None:
        return StreamedCorpus(
            name, source_lang, target_lang, split, "tfds",
            ((found, SPLIT_NAMES.get(split, split)),), tfds_data_dir=tfds_data_dir,
        )  # fmt: skip
    if name == "multi30k":
        from zoo.data import multi30k

        split = multi30k.canonical_split(split)
        paths = tuple(multi30k.multi30k_path(split, lang) for lang in (source_lang, target_lang))
        return StreamedCorpus(name, source_lang, target_lang, split, "parallel", (paths,))
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
    from zoo.data.corpus import Corpus

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
