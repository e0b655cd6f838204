"""`Corpus` and `load_corpus`: one way to name a parallel corpus, read in memory.

Names understood by `load_corpus(name, source_lang, target_lang, split)`:

- the registry's corpora (`zoo.data.corpora.CORPORA`, e.g. "multi30k") and "tfds:NAME"
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

`$ZOO_DATA_DIR` defaults to the `shared/data` folder beside the checkout (`zoo.data.paths`).
"""

import dataclasses
import logging
import os

from zoo.data.corpora import CORPORA, find_corpus, language_code
from zoo.data.errors import MissingDataError
from zoo.data.load_options import LoadOptions
from zoo.data.pipeline import make_dataset
from zoo.data.readers import read_parallel, read_tsv
from zoo.data.splits import TEST_FRACTION, VAL_FRACTION, split_pairs

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
        name: a registry name (`zoo.data.corpora.CORPORA`, e.g. "multi30k"), "tfds:NAME",
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
