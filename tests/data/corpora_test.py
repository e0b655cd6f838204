"""The corpus registry (zoo.data.registry): every entry is consistent and reads its splits.

Each registry corpus has a small fixture here (`FIXTURES`): files written into a temporary
ZOO_DATA_DIR, or TFDS's mock data. A corpus added to the registry needs one.
"""

import ast
import contextlib
import dataclasses
from pathlib import Path

import pytest

from zoo.data import (
    CORPORA,
    DEFAULT_CORPUS,
    CorpusInfo,
    complete_languages,
    corpora_help,
    corpus_info,
    default_languages,
    default_test_split,
    load_corpus,
    materialise,
    open_stream,
)
from zoo.data.registry import find_corpus, tfds_name

FAMILIES = ("bahdanau", "luong")


@contextlib.contextmanager
def multi30k_files(root):
    for split in ("train", "val", "test2016"):
        for lang in ("de", "en", "fr", "cs"):
            lines = "".join(f"{split} {lang} {i}\n" for i in range(3))
            (root / "multi30k").mkdir(exist_ok=True)
            (root / "multi30k" / f"{split}.{lang}").write_text(lines, encoding="utf-8")
    yield {"train": 3, "val": 3, "test2016": 3}


def anki_file(folder, file_name):
    @contextlib.contextmanager
    def write(root):
        (root / folder).mkdir()
        lines = "".join(f"English {i}.\tOther {i}.\tCC-BY 2.0\n" for i in range(400))
        (root / folder / file_name).write_text(lines, encoding="utf-8")
        yield None  # hash splits: sizes vary, checked in splits_test.py and corpus_test.py

    return write


@contextlib.contextmanager
def tfds_mock(root):
    tfds = pytest.importorskip("tensorflow_datasets")
    with tfds.testing.mock_data(num_examples=4):
        yield {"train": 4, "validation": 4, "test": 4}


FIXTURES = {
    "multi30k": multi30k_files,
    "anki-spa-eng": anki_file("anki-spa-eng", "spa.txt"),
    "anki-fra-eng": anki_file("anki-fra-eng", "fra.txt"),
    "wmt14": tfds_mock,
}


def pairs_of(info):
    """Every default pair of `info` (one per family where the papers differ)."""
    if isinstance(info.default_pair, dict):
        return [tuple(info.default_pair[f]) for f in FAMILIES]
    return [tuple(info.default_pair)]


def test_every_corpus_has_a_fixture_and_the_default_is_one():
    assert set(FIXTURES) == set(CORPORA)
    assert DEFAULT_CORPUS in CORPORA
    assert all(name == info.name for name, info in CORPORA.items())


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_entries_are_consistent(name):
    info = CORPORA[name]
    assert isinstance(info, CorpusInfo) and info.description and "\n" not in info.description
    assert {info.validation_split, info.test_split} <= set(info.splits)
    assert len(set(info.splits)) == len(info.splits) and info.languages
    for source, target in pairs_of(info):
        assert source != target and {source, target} <= set(info.languages)
    for pair in info.pairs:
        assert pair <= set(info.languages) and len(pair) == 2
    assert default_test_split(name) == info.test_split
    assert info.canonical_split("test") == info.test_split
    for alias in ("val", "validation", "dev"):
        assert info.canonical_split(alias) == info.validation_split
    assert [info.canonical_split(s) for s in info.splits] == list(info.splits)


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_every_corpus_loads_its_splits_both_ways(name, data_root):
    info = CORPORA[name]
    with FIXTURES[name](data_root) as sizes:
        for source, target in pairs_of(info):
            loaded = {s: load_corpus(name, source, target, s) for s in info.splits}
            reverse = load_corpus(name, target, source, info.validation_split)
            streams = (
                {s: open_stream(name, source, target, s) for s in info.splits}
                if info.open_stream
                else {}
            )
            if sizes is not None:
                assert {s: len(c) for s, c in loaded.items()} == sizes
            if info.tfds_datasets is None:  # files: the same pairs either way
                assert reverse.pairs() == [(t, s) for s, t in loaded[reverse.split].pairs()]
                for split, stream in streams.items():
                    assert materialise(stream).pairs() == loaded[split].pairs()
            for split, corpus in loaded.items():
                assert corpus.split == split and len(corpus) > 0
                assert (corpus.source_lang, corpus.target_lang) == (source, target)
                assert all(isinstance(x, str) and x for x in corpus.source + corpus.target)
            assert (
                [s.split for s in streams.values()]
                == list(streams)
                == list(info.splits if streams else [])
            )


def test_corpora_read_in_memory_only_refuse_to_stream(data_root):
    in_memory = [name for name, info in CORPORA.items() if info.open_stream is None]
    assert in_memory  # the Anki corpora: split by sentence hash
    for name in in_memory:
        with pytest.raises(ValueError, match=f"{name}' is split by sentence in memory"):
            open_stream(name, *default_languages(name), "train")


def test_the_help_names_every_corpus_its_languages_and_the_other_forms():
    text = corpora_help()
    for name, info in CORPORA.items():
        entry = text.split(f"{name} (", 1)[1].split(")", 1)[0]
        assert all(lang in entry for lang in info.languages), (name, entry)
        for source, target in pairs_of(info):
            assert f"{source}->{target}" in entry
    for form in ("tab-separated file", "file prefix", "tfds:NAME", "{split}"):
        assert form in text
    assert "%" not in text  # argparse formats help strings with %


def test_unknown_names_and_pairs_are_refused_with_what_is_known():
    with pytest.raises(ValueError, match=r"Unknown corpus 'europarl'.*multi30k, anki-spa-eng"):
        corpus_info("europarl")
    with pytest.raises(ValueError, match=r"multi30k has the splits \('train', 'val', 'test2016'\)"):
        corpus_info("multi30k").canonical_split("test2017")
    with pytest.raises(ValueError, match=r"wmt14 has the language pairs .*de-en.*'ja'"):
        load_corpus("wmt14", "en", "ja", "train")
    with pytest.raises(ValueError, match=r"depends on the model family \(luong en->de"):
        default_languages("wmt14")
    with pytest.raises(ValueError, match="no default language pair"):
        default_languages("tfds:ted_hrlr_translate/pt_to_en")


def test_default_languages_by_corpus_and_family():
    assert default_languages("multi30k") == ("de", "en")
    assert default_languages("wmt14", "luong") == ("en", "de")
    assert default_languages("wmt14", family="bahdanau") == ("en", "fr")
    assert complete_languages("multi30k") == ("de", "en")
    assert complete_languages("multi30k", source_lang="en") == ("en", "de")
    assert complete_languages("multi30k", target_lang="de") == ("en", "de")
    assert complete_languages("multi30k", source_lang="fr") == ("fr", "en")
    assert complete_languages("anki-spa-eng", target_lang="en") == ("es", "en")
    assert complete_languages("tfds:x", "pt", "en") == ("pt", "en")  # both given: no lookup


def test_forms_without_an_entry():
    info = find_corpus("tfds:ted_hrlr_translate/pt_to_en")
    assert info.tfds_datasets == "ted_hrlr_translate/pt_to_en" and info.pairs is None
    assert info.canonical_split("train[:10%]") == "train[:10%]"
    assert tfds_name("tfds:ted_hrlr_translate/pt_to_en", "pt", "en") == info.tfds_datasets
    assert tfds_name("wmt14", "fr", "en") == "wmt14_translate/fr-en"
    for name in ("data/{split}", "pairs.tsv", "multi30k/train", "tfds:"):
        assert find_corpus(name) is None and tfds_name(name, "de", "en") is None
        assert default_test_split(name) == "test"


def test_inconsistent_entries_are_refused():
    entry = CORPORA["multi30k"]
    with pytest.raises(ValueError, match="validation_split 'dev' is not one of its splits"):
        dataclasses.replace(entry, validation_split="dev")
    with pytest.raises(ValueError, match=r"multi30k has the language pairs .*'de' -> 'es'"):
        dataclasses.replace(entry, default_pair=("de", "es"))
    with pytest.raises(ValueError, match="must differ"):
        dataclasses.replace(entry, default_pair={"luong": ("de", "de")})


def test_the_modules_of_zoo_data_import_each_other_without_a_cycle():
    package = Path(__file__).resolve().parents[2] / "zoo" / "data"
    graph = {}
    for path in package.glob("*.py"):
        if path.stem == "__init__":
            continue
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "zoo.data":
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("zoo.data."):
                imported.add(node.module.split(".")[2])
        graph[path.stem] = imported & {p.stem for p in package.glob("*.py")}

    def reaches(start, goal, seen=()):
        return any(
            n == goal or (n not in seen and reaches(n, goal, (*seen, n))) for n in graph[start]
        )

    assert [m for m in graph if reaches(m, m)] == []
    assert "files" in graph["batching"] and "registry" in graph["corpus"]
