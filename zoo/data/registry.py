"""The corpus registry: the named corpora with their languages, splits and readers, one table.

Everything that knows a corpus by name reads `CORPORA`: `load_corpus` (in memory),
`open_stream` (streamed), the command line's language and split defaults
(`default_languages`, `complete_languages`, `default_test_split`) and its help text
(`corpora_help`). Besides the names, corpora come in forms that need no entry: `tfds:NAME`
(any TFDS translation dataset; `find_corpus` makes an entry for it), a tab-separated file and
a file prefix (read by `zoo.data.corpus` and `zoo.data.corpus`).

Split names: an entry lists its own `splits`; "val", "validation" and "dev" name its
validation split and "test" its test split (`CorpusInfo.canonical_split`).

Adding a corpus: docs/design.md, "Adding a corpus".
"""

import dataclasses
import functools
import itertools
from collections.abc import Callable, Mapping

from zoo.data import multi30k, sources
from zoo.data.splits import SPLITS as HASH_SPLITS
from zoo.data.splits import VALIDATION_NAMES

DEFAULT_CORPUS = "multi30k"
LANGUAGE_ALIASES = {"eng": "en", "spa": "es", "fra": "fr", "fre": "fr", "deu": "de", "ces": "cs"}
TFDS_PREFIX = "tfds:"
TFDS_SPLITS = ("train", "validation", "test")
# Multi30k's test split name also names the test split of TFDS corpora.
TFDS_SPLIT_ALIASES = {"test2016": "test"}


@dataclasses.dataclass(frozen=True)
class CorpusInfo:
    """One corpus of the registry.

    Attributes:
        name: what `load_corpus`, `open_stream` and `--data` take.
        description: one line for help texts.
        languages: its language codes; () for any (a `tfds:NAME` corpus).
        default_pair: (source, target), or {family: (source, target)} where the papers
            differ; None when there is none.
        splits: its split names; `validation_split` and `test_split` are two of them.
        load: `load(source_lang, target_lang, split, options) -> (sources, targets)`, two
            lists of str. Called with checked languages, a split of `splits` and a
            `zoo.data.splits.LoadOptions`, of which a loader reads what concerns it.
        open_stream: `open_stream(source_lang, target_lang, split, tfds_data_dir=None) ->
            StreamedCorpus`, called as `load` is; None for a corpus read in memory only.
        tfds_datasets: for a TFDS corpus, its dataset name, or {frozenset({lang, lang}):
            dataset name} with one dataset per pair (which then are its only pairs).
        split_aliases: more names of its splits, {alias: split}.
        any_split: other split strings pass to the loader as given (TFDS: "train[:1%]").
    """

    name: str
    description: str
    languages: tuple
    default_pair: tuple | Mapping | None
    splits: tuple
    validation_split: str
    test_split: str
    load: Callable
    open_stream: Callable | None
    tfds_datasets: str | Mapping | None = None
    split_aliases: Mapping = dataclasses.field(default_factory=dict)
    any_split: bool = False

    def __post_init__(self):
        for role in ("validation_split", "test_split"):
            if getattr(self, role) not in self.splits:
                raise ValueError(
                    f"Corpus {self.name!r}: {role} {getattr(self, role)!r} is not one of its "
                    f"splits {self.splits}."
                )
        if isinstance(self.default_pair, Mapping):
            defaults = list(self.default_pair.values())
        else:
            defaults = [self.default_pair] if self.default_pair is not None else []
        for pair in defaults:
            self.check_languages(*pair)

    @property
    def pairs(self):
        """The language pairs it holds (frozensets); None for any pair."""
        if isinstance(self.tfds_datasets, Mapping):
            return tuple(self.tfds_datasets)
        if not self.languages:
            return None
        return tuple(frozenset(p) for p in itertools.combinations(self.languages, 2))

    def check_languages(self, source_lang, target_lang):
        """ValueError unless `source_lang` -> `target_lang` is one of its pairs."""
        if source_lang == target_lang:
            raise ValueError(f"source_lang and target_lang must differ, both are {source_lang!r}.")
        pairs = self.pairs
        if pairs is not None and frozenset({source_lang, target_lang}) not in pairs:
            known = ", ".join("-".join(sorted(pair)) for pair in pairs)
            raise ValueError(
                f"{self.name} has the language pairs {known}; received {source_lang!r} -> "
                f"{target_lang!r}."
            )

    def canonical_split(self, split):
        """`split` as one of `splits` ("val", "validation", "dev": the validation split;
        "test": the test split); ValueError for a split it does not have."""
        split = self.split_aliases.get(split, split)
        if split in self.splits:
            return split
        if split in VALIDATION_NAMES:
            return self.validation_split
        if split == "test":
            return self.test_split
        if self.any_split:
            return split
        raise ValueError(f"{self.name} has the splits {self.splits}, received {split!r}.")

    def default_languages(self, family=None):
        """(source, target) by default; `family` ("bahdanau", "luong") where papers differ."""
        if self.default_pair is None:
            raise ValueError(
                f"{self.name} has no default language pair; give the source and target languages."
            )
        if not isinstance(self.default_pair, Mapping):
            return tuple(self.default_pair)
        if family not in self.default_pair:
            known = ", ".join(f"{f} {s}->{t}" for f, (s, t) in self.default_pair.items())
            raise ValueError(
                f"{self.name}'s default language pair depends on the model family ({known}); "
                f"received family {family!r}. Give the family or the languages."
            )
        return tuple(self.default_pair[family])


def _tfds(name, dataset, description):
    return dict(
        description=description,
        splits=TFDS_SPLITS,
        validation_split="validation",
        test_split="test",
        load=functools.partial(sources.load_tfds, name, dataset),
        open_stream=functools.partial(sources.open_tfds_stream, name, dataset),
        tfds_datasets=dataset,
        split_aliases=TFDS_SPLIT_ALIASES,
        any_split=True,
    )


def _anki(name, file_name, other, language):
    return CorpusInfo(
        name=name,
        description=f"Tatoeba English-{language} pairs from manythings.org/anki "
        f"($ZOO_DATA_DIR/{name}/{file_name}), split by sentence into train/val/test",
        languages=("en", other),
        default_pair=("en", other),
        splits=HASH_SPLITS,
        validation_split="val",
        test_split="test",
        load=functools.partial(sources.load_anki, name, file_name),
        open_stream=None,
    )


# WMT'14 as in the papers (Luong et al.: English-German, 4.5M pairs; Bahdanau et al.:
# English-French, 12M): TFDS's validation split is newstest2013, its test split newstest2014.
_WMT14 = {
    frozenset({"de", "en"}): "wmt14_translate/de-en",
    frozenset({"fr", "en"}): "wmt14_translate/fr-en",
    frozenset({"cs", "en"}): "wmt14_translate/cs-en",
    frozenset({"ru", "en"}): "wmt14_translate/ru-en",
    frozenset({"hi", "en"}): "wmt14_translate/hi-en",
}

CORPORA = {
    info.name: info
    for info in (
        CorpusInfo(
            name="multi30k",
            description="Multi30k task 1 (Elliott et al. 2016): image captions, 29,000 "
            "training pairs; a local copy, else downloaded once",
            languages=multi30k.LANGUAGES,
            default_pair=("de", "en"),
            splits=multi30k.SPLITS,
            validation_split="val",
            test_split="test2016",
            load=multi30k.load,
            open_stream=multi30k.open_stream,
        ),
        _anki("anki-spa-eng", "spa.txt", "es", "Spanish"),
        _anki("anki-fra-eng", "fra.txt", "fr", "French"),
        CorpusInfo(
            name="wmt14",
            languages=("en", "de", "fr", "cs", "ru", "hi"),
            default_pair={"luong": ("en", "de"), "bahdanau": ("en", "fr")},
            **_tfds(
                "wmt14",
                _WMT14,
                "the papers' WMT'14 through TFDS (validation newstest2013, test "
                "newstest2014); large, streamed",
            ),
        ),
    )
}
"""The named corpora: name -> `CorpusInfo`."""

NAMED_TFDS = {
    name: dict(info.tfds_datasets)
    for name, info in CORPORA.items()
    if isinstance(info.tfds_datasets, Mapping)
}
"""The named TFDS corpora with one dataset per pair: name -> {frozenset(pair): dataset}."""


def find_corpus(name):
    """The `CorpusInfo` of a corpus name or of `tfds:NAME`; None for anything else (files)."""
    if name in CORPORA:
        return CORPORA[name]
    if isinstance(name, str) and name.startswith(TFDS_PREFIX) and len(name) > len(TFDS_PREFIX):
        dataset = name[len(TFDS_PREFIX) :]
        return CorpusInfo(
            name=name, languages=(), default_pair=None,
            **_tfds(name, dataset, f"the TFDS dataset {dataset}"),
        )  # fmt: skip
    return None


def corpus_info(name):
    """The `CorpusInfo` of `name` (a registry name or `tfds:NAME`); ValueError otherwise."""
    info = find_corpus(name)
    if info is None:
        raise ValueError(
            f"Unknown corpus {name!r}; the named corpora are {', '.join(CORPORA)} (besides "
            "'tfds:NAME', tab-separated files and file prefixes, which have no entry)."
        )
    return info


def default_languages(name, family=None):
    """(source, target) by default for corpus `name`; `family` ("bahdanau", "luong") where
    the papers differ (wmt14). ValueError for a corpus without defaults."""
    return corpus_info(name).default_languages(family)


def complete_languages(name, source_lang=None, target_lang=None, family=None):
    """(source, target) with the missing one(s) taken from the default pair: given only the
    default target as the source, the other is the default source (de->en gives en->de)."""
    if source_lang is not None and target_lang is not None:
        return source_lang, target_lang
    source, target = default_languages(name, family)
    if source_lang is None:
        source_lang = target if target_lang == source else source
    if target_lang is None:
        target_lang = source if source_lang == target else target
    return source_lang, target_lang


def default_test_split(name):
    """The test split of corpus `name`; "test" for files (their hash split or own files)."""
    info = find_corpus(name)
    return info.test_split if info is not None else "test"


def language_code(code):
    """`code` as a two-letter code where it is a known three-letter one ("eng" -> "en")."""
    return LANGUAGE_ALIASES.get(code, code)


def tfds_name(name, source_lang, target_lang):
    """The TFDS dataset that corpus `name` reads for this pair; None for a corpus of files.
    ValueError for a pair a TFDS corpus does not have."""
    info = find_corpus(name)
    if info is None or info.tfds_datasets is None:
        return None
    return sources.tfds_dataset_name(info.name, info.tfds_datasets, source_lang, target_lang)


def _languages_text(info):
    pairs = info.pairs
    if isinstance(info.tfds_datasets, Mapping):
        languages = "pairs " + ", ".join("-".join(sorted(p)) for p in pairs)
    else:
        languages = ", ".join(info.languages)
    if isinstance(info.default_pair, Mapping):
        default = ", ".join(f"{s}->{t} for {f}" for f, (s, t) in info.default_pair.items())
    else:
        default = "->".join(info.default_pair)
    return f"{info.name} ({languages}; default {default})"


def corpora_help():
    """The sentence that `--data` help texts show: the corpus names with their languages and
    default pairs, and the other forms a corpus may take (the caller adds the default)."""
    names = ", ".join(_languages_text(info) for info in CORPORA.values())
    return (
        f"corpus: {names}; or a tab-separated file (source<TAB>target), a file prefix "
        "(PREFIX{split}.{lang} or PREFIX.{lang}; .gz files too when streamed) or "
        "'tfds:NAME' (e.g. tfds:wmt14_translate/de-en); see docs/corpora.md"
    )
