"""Opening a corpus by name: `load_corpus` reads it into memory (a `Corpus`), `open_stream`
names its files to stream them (a `StreamedCorpus`).

Names understood by `load_corpus(name, source_lang, target_lang, split)`:

- the registry's corpora (`zoo.data.registry.CORPORA`, e.g. "multi30k") and "tfds:NAME"
  (e.g. `tfds:ted_hrlr_translate/pt_to_en`), each with its languages, splits and loader;
- a path to a tab-separated file (`path/to/pairs.tsv`): column 0 is the source, column 1 the
  target (the language arguments are labels only); split into train/val/test by
  `zoo.data.splits.split_pairs` (by distinct sentence, hash-based, deterministic);
- a path prefix to line-aligned files with `{split}` in it: `path/{split}` reads
  `path/train.{source_lang}` and `path/train.{target_lang}` for the train split,
  `path/val.*` for val, and so on (each file plain, or gzip-compressed as `<file>.gz`);
- a path prefix without `{split}`: `path/corpus` reads `path/corpus.{source_lang}` and
  `path/corpus.{target_lang}` and splits their pairs into train/val/test like a TSV file
  (logged once), so that validation and test pairs are never training pairs.

`$ZOO_DATA_DIR` defaults to the `shared/data` folder beside the checkout (`zoo.data.files`).

Streams: corpora read from disk in bounded memory whatever their size. `Corpus` holds
every sentence in Python lists: right for Multi30k's 29,000 pairs, wrong for WMT'14's 4.5
million. A `StreamedCorpus` names files instead and reads them
with `tf.data.TextLineDataset` each epoch:

    line-aligned files   <prefix>.<src> and <prefix>.<tgt>, plain or gzip (".gz")
    tab-separated files  source<TAB>target per line (an optional third "CC-BY ..." column
                         is ignored), plain or gzip; several files read in order
    TFDS                 `tfds:NAME` splits through `tfds.load`, never materialised

Lines get the readers' rules (zoo.data.files) in the graph: surrounding whitespace
stripped, control characters as spaces, pairs with an empty side dropped.

A stream's files are checked before its first epoch (`zoo.data.batching.check`).

`open_stream` reads the corpus registry (zoo.data.registry) for named corpora and TFDS; the
`StreamedCorpus` record, its reading and sharding are in zoo.data.streamed_corpus.
"""

import dataclasses
import logging
import os
import random

from zoo.data.batching import check, make_dataset
from zoo.data.files import MissingDataError, read_parallel, read_tsv
from zoo.data.registry import CORPORA, find_corpus, language_code
from zoo.data.splits import TEST_FRACTION, VAL_FRACTION, LoadOptions, split_pairs
from zoo.data.streamed_corpus import DEFAULT_TOKENIZER_SAMPLE, StreamedCorpus

logger = logging.getLogger("zoo.data")


@dataclasses.dataclass(frozen=True)
class Corpus:
    """A parallel corpus split: line i of `target` translates line i of `source`.

    Attributes:
        name: the name given to `load_corpus`.
        source_lang, target_lang: language codes (labels).
        split: "train", "val", "test", "test2016", ... as requested.
        source, target: lists of `str` of equal length (no empty sentences).

    Example:
        >>> corpus = load_corpus("multi30k", "de", "en", "train")
        >>> len(corpus), corpus.source[0]
        (29000, 'Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.')
        >>> dataset = corpus.dataset(source_tokenizer, target_tokenizer, batch_size=64)
    """

    name: str
    source_lang: str
    target_lang: str
    split: str
    source: list
    target: list

    def __post_init__(self):
        if len(self.source) != len(self.target):
            raise ValueError(
                f"Corpus {self.name!r} ({self.split}): {len(self.source)} source sentences but "
                f"{len(self.target)} target sentences."
            )

    def __len__(self):
        return len(self.source)

    def pairs(self):
        """List of `(source, target)` tuples."""
        return list(zip(self.source, self.target, strict=True))

    def take(self, count):
        """The first `count` pairs as a new Corpus (for quick experiments and tests)."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"Corpus.take needs an int count >= 0, received {count!r}.")
        return dataclasses.replace(self, source=self.source[:count], target=self.target[:count])

    def sample(self, count=DEFAULT_TOKENIZER_SAMPLE, seed=0):
        """At most `count` pairs, for training tokenizers: every pair when the corpus holds
        no more, else a seeded sample in corpus order; (sources, targets) lists."""
        if len(self) <= count:
            return self.source, self.target
        chosen = sorted(random.Random(seed).sample(range(len(self)), count))
        return [self.source[i] for i in chosen], [self.target[i] for i in chosen]

    def dataset(self, source_tokenizer, target_tokenizer, **kwargs):
        """`zoo.data.make_dataset(self.source, self.target, ...)`; same keyword arguments."""
        return make_dataset(self.source, self.target, source_tokenizer, target_tokenizer, **kwargs)


def load_corpus(
    name,
    source_lang,
    target_lang,
    split="train",
    val_fraction=VAL_FRACTION,
    test_fraction=TEST_FRACTION,
    seed=0,
    download=True,
    tfds_data_dir=None,
):
    """Loads one split of a parallel corpus as a `Corpus` (see the module doc for names).

    Args:
        name: a registry name (`zoo.data.registry.CORPORA`, e.g. "multi30k"), "tfds:NAME",
            a .tsv path or a prefix.
        source_lang, target_lang: language codes, e.g. "de", "en".
        split: "train", "val" (or "validation", "dev") or "test"; a registry corpus takes
            its own split names as well ("test2016" for Multi30k).
        val_fraction, test_fraction, seed: how TSV / Anki pairs are split (by distinct sentence).
        download: allow downloading Multi30k / TFDS data when no local copy exists.
        tfds_data_dir: `data_dir` passed to `tfds.load`.

    Raises:
        MissingDataError (a ValueError) when files are missing, ValueError on bad data.
    """
    name = os.fspath(name)
    source_lang, target_lang = language_code(source_lang), language_code(target_lang)
    if source_lang == target_lang:
        raise ValueError(f"source_lang and target_lang must differ, both are {source_lang!r}.")
    info = find_corpus(name)
    if info is not None:
        info.check_languages(source_lang, target_lang)
        split = info.canonical_split(split)
        options = LoadOptions(val_fraction, test_fraction, seed, download, tfds_data_dir)
        sources, targets = info.load(source_lang, target_lang, split, options)
    elif os.path.isdir(name):
        raise ValueError(
            f"Corpus {name!r} is a directory; expected {', '.join(map(repr, CORPORA))}, "
            f"'tfds:NAME', a tab-separated file or a file prefix such as "
            f"{os.path.join(name, '{split}')} (reading {os.path.join(name, 'train')}."
            f"{source_lang} and .{target_lang})."
        )
    elif os.path.isfile(name) or name.endswith((".tsv", ".txt")):
        column0, column1 = read_tsv(name)
        sources, targets = split_pairs(
            column0, column1, split, val_fraction, test_fraction, seed, name
        )
    else:
        sources, targets = _read_prefix(
            name, source_lang, target_lang, split, val_fraction, test_fraction, seed
        )
    if not sources:
        raise ValueError(_empty_split_message(name, split, source_lang, target_lang))
    return Corpus(name, source_lang, target_lang, split, sources, targets)


def _read_prefix(name, source_lang, target_lang, split, val_fraction, test_fraction, seed):
    """Line-aligned files `<prefix>.<lang>`; without `{split}` in the prefix, one pair of
    files split by hash (train/val/test) like a TSV file."""
    prefix = name.replace("{split}", split)
    source_path, target_path = (
        _plain_or_gzip(f"{prefix}.{lang}") for lang in (source_lang, target_lang)
    )
    if not (os.path.exists(source_path) or os.path.exists(target_path)):
        raise MissingDataError(
            f"Unknown corpus {name!r}: it is not one of {', '.join(CORPORA)} or 'tfds:NAME', "
            f"not a tab-separated file, and neither {source_path} nor {target_path} exists."
        )
    sources, targets = read_parallel(source_path, target_path)
    if "{split}" in name:
        return sources, targets
    logger.info(
        "%s has no {split} in it: %s and %s are split by sentence into train / val / test "
        "(%.0f%% / %.0f%% / %.0f%%, hash-based, seed %d).",
        name,
        source_path,
        target_path,
        100 * (1 - val_fraction - test_fraction),
        100 * val_fraction,
        100 * test_fraction,
        seed,
    )
    where = f"{source_path} / {target_path}"
    return split_pairs(sources, targets, split, val_fraction, test_fraction, seed, where)


def _plain_or_gzip(path):
    """`path`, or `path.gz` when only that one exists."""
    return path + ".gz" if not os.path.exists(path) and os.path.isfile(path + ".gz") else path


def _empty_split_message(name, split, source_lang, target_lang):
    """For corpora whose splits are files of their own (hash splits raise in split_pairs)."""
    where = name
    if "{split}" in name:
        prefix = name.replace("{split}", split)
        where = f"{prefix}.{source_lang} and {prefix}.{target_lang}"
    return (
        f"Corpus {name!r}: the {split!r} split has no sentence pairs ({where}: 0 non-empty lines)."
    )


def _existing(path):
    """`path` or `path.gz`, whichever exists (None when neither)."""
    for candidate in (path, path + ".gz"):
        if os.path.isfile(candidate):
            return candidate
    return None


def open_stream(name, source_lang, target_lang, split, tfds_data_dir=None):
    """`split` of corpus `name` as a `StreamedCorpus` (nothing is read yet).

    `name`: a registry corpus that streams ("multi30k" (its local files), "wmt14"; see
    `zoo.data.registry.CORPORA`) or "tfds:NAME", a prefix with `{split}` in it (files
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
