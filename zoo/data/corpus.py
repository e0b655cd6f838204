"""`Corpus` and `load_corpus`: one way to name a parallel corpus.

Names understood by `load_corpus(name, source_lang, target_lang, split)`:

- `"multi30k"`: Multi30k task 1; languages de/en/fr/cs; splits train/val/test2016 (aliases
  validation, test). Read from `$ZOO_DATA_DIR/multi30k/{split}.{lang}`, else downloaded once
  into `$ZOO_CACHE_DIR` (see `zoo.data.multi30k`).
- `"anki-spa-eng"`, `"anki-fra-eng"`: the Tatoeba/ManyThings files
  `$ZOO_DATA_DIR/anki-spa-eng/spa.txt` (`English<TAB>Spanish`), `anki-fra-eng/fra.txt`;
  languages en/es or en/fr in either direction; splits train/val/test made by
  `zoo.data.splits.assign_splits` (by distinct sentence, hash-based, deterministic).
- a path to a tab-separated file (`path/to/pairs.tsv`): column 0 is the source, column 1 the
  target (the language arguments are labels only); split like the Anki files.
- a path prefix to line-aligned files with `{split}` in it: `path/{split}` reads
  `path/train.{source_lang}` and `path/train.{target_lang}` for the train split,
  `path/val.*` for val, and so on.
- a path prefix without `{split}`: `path/corpus` reads `path/corpus.{source_lang}` and
  `path/corpus.{target_lang}` and splits their pairs into train/val/test like a TSV file
  (logged once), so that validation and test pairs are never training pairs.
- `"tfds:NAME"` (e.g. `tfds:wmt14_translate/de-en`, `tfds:ted_hrlr_translate/pt_to_en`):
  `tfds.load`, splits val -> validation, test2016 -> test.
- `"wmt14"`: the papers' WMT'14 through TFDS (`wmt14_translate/de-en`, `fr-en`, ... by the
  languages); validation is newstest2013, test newstest2014. Large: recipes stream it
  (`zoo.data.streaming`).

`$ZOO_DATA_DIR` defaults to the `shared/data` folder beside the checkout (`zoo.data.paths`).
"""

import dataclasses
import logging
import os

from zoo.data import multi30k, splits
from zoo.data.errors import MissingDataError
from zoo.data.paths import data_dir
from zoo.data.readers import read_parallel, read_tsv
from zoo.data.streaming import tfds_name

ANKI = {
    "anki-spa-eng": ("spa.txt", ("en", "es")),
    "anki-fra-eng": ("fra.txt", ("en", "fr")),
}
logger = logging.getLogger("zoo.data")
_LANG_ALIASES = {"eng": "en", "spa": "es", "fra": "fr", "fre": "fr", "deu": "de", "ces": "cs"}


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
        from zoo.data.pipeline import make_dataset

        return make_dataset(self.source, self.target, source_tokenizer, target_tokenizer, **kwargs)


def _lang(code):
    return _LANG_ALIASES.get(code, code)


def _split_pairs(column0, column1, split, val_fraction, test_fraction, seed, where):
    if split in ("validation", "dev"):
        split = "val"
    if split not in splits.SPLITS:
        raise ValueError(f"{where} has the splits {splits.SPLITS}, received {split!r}.")
    assignment = splits.assign_splits(column0, column1, val_fraction, test_fraction, seed)
    keep = [i for i, s in enumerate(assignment) if s == split]
    if not keep:
        counts = ", ".join(f"{assignment.count(name)} {name}" for name in splits.SPLITS)
        raise ValueError(
            f"{where}: the {split!r} split has no sentence pairs. Its {len(assignment)} pairs "
            f"split by distinct sentence into {counts} (val_fraction {val_fraction}, "
            f"test_fraction {test_fraction}). Give a larger corpus, or files of your own for "
            "each split (a prefix with {split} in it)."
        )
    return [column0[i] for i in keep], [column1[i] for i in keep]


def load_corpus(
    name,
    source_lang,
    target_lang,
    split="train",
    val_fraction=0.05,
    test_fraction=0.05,
    seed=0,
    download=True,
    tfds_data_dir=None,
):
    """Loads one split of a parallel corpus as a `Corpus` (see the module doc for names).

    Args:
        name: "multi30k", "anki-spa-eng", "anki-fra-eng", "wmt14" (TFDS wmt14_translate, the
            pair given by the languages), "tfds:NAME", a .tsv path or a prefix.
        source_lang, target_lang: language codes, e.g. "de", "en".
        split: "train", "val" or a test split ("test2016" for Multi30k, "test" otherwise).
        val_fraction, test_fraction, seed: how TSV / Anki pairs are split (by distinct sentence).
        download: allow downloading Multi30k / TFDS data when no local copy exists.
        tfds_data_dir: `data_dir` passed to `tfds.load`.

    Raises:
        MissingDataError (a ValueError) when files are missing, ValueError on bad data.
    """
    name = os.fspath(name)
    source_lang, target_lang = _lang(source_lang), _lang(target_lang)
    if source_lang == target_lang:
        raise ValueError(f"source_lang and target_lang must differ, both are {source_lang!r}.")
    if name == "multi30k":
        split = multi30k.canonical_split(split)
        source_path = multi30k.multi30k_path(split, source_lang, download=download)
        target_path = multi30k.multi30k_path(split, target_lang, download=download)
        sources, targets = read_parallel(source_path, target_path)
    elif name in ANKI:
        file_name, langs = ANKI[name]
        if {source_lang, target_lang} != set(langs):
            raise ValueError(
                f"{name} pairs the languages {langs}, received {source_lang!r} -> {target_lang!r}."
            )
        path = data_dir() / name / file_name
        if not path.is_file():
            raise MissingDataError(
                f"{name}: missing {path}. Set ZOO_DATA_DIR to a folder holding "
                f"{name}/{file_name} (the tab-separated file from https://www.manythings.org/anki/)."
            )
        english, other = read_tsv(path)
        english, other = _split_pairs(
            english, other, split, val_fraction, test_fraction, seed, name
        )
        sources, targets = (english, other) if source_lang == "en" else (other, english)
    elif tfds_name(name, source_lang, target_lang) is not None:  # tfds:NAME, wmt14
        from zoo.data.tfds_corpus import load_tfds_pairs

        sources, targets = load_tfds_pairs(
            tfds_name(name, source_lang, target_lang),
            source_lang,
            target_lang,
            split,
            tfds_data_dir,
            download,
        )
    elif os.path.isdir(name):
        raise ValueError(
            f"Corpus {name!r} is a directory; expected 'multi30k', {sorted(ANKI)}, 'tfds:NAME', "
            f"a tab-separated file or a file prefix such as {os.path.join(name, '{split}')} "
            f"(reading {os.path.join(name, 'train')}.{source_lang} and .{target_lang})."
        )
    elif os.path.isfile(name) or name.endswith((".tsv", ".txt")):
        column0, column1 = read_tsv(name)
        sources, targets = _split_pairs(
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
    source_path, target_path = f"{prefix}.{source_lang}", f"{prefix}.{target_lang}"
    if not (os.path.exists(source_path) or os.path.exists(target_path)):
        raise MissingDataError(
            f"Unknown corpus {name!r}: it is not 'multi30k', {sorted(ANKI)} or 'tfds:NAME', "
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
    return _split_pairs(sources, targets, split, val_fraction, test_fraction, seed, where)


def _empty_split_message(name, split, source_lang, target_lang):
    """For corpora whose splits are files of their own (hash splits raise in _split_pairs)."""
    where = name
    if "{split}" in name:
        prefix = name.replace("{split}", split)
        where = f"{prefix}.{source_lang} and {prefix}.{target_lang}"
    return (
        f"Corpus {name!r}: the {split!r} split has no sentence pairs ({where}: 0 non-empty lines)."
    )
