"""The corpora read through a loader of their own: TFDS datasets (their prepared files,
loaded or streamed) and the Anki sentence pairs (Multi30k has its module, zoo.data.multi30k).

Parallel corpora from TensorFlow Datasets: `tfds:NAME` (e.g. `tfds:wmt14_translate/de-en`)
and the registry's TFDS corpora (wmt14).

`datasets` below is one TFDS dataset name, or `{frozenset({lang, lang}): dataset name}` for a
corpus with one dataset per language pair. `split` is the TFDS split string, as the registry
resolved it ("validation", "test", "train[:1%]"). Examples are dicts keyed by language code.

The Tatoeba sentence pairs of ManyThings (https://www.manythings.org/anki/), in memory.

A file `$ZOO_DATA_DIR/<corpus>/<file>` holds `English<TAB>other language` lines (an optional
third `CC-BY ...` column is ignored). Its pairs are split into train/val/test by distinct
sentence (`zoo.data.splits.split_pairs`: hash-based, deterministic, whatever the direction).
`load_anki` is the corpus registry's loader (zoo.data.registry).
"""

import tqdm

from zoo.data.files import MissingDataError, data_dir, note_read, prepared_files, read_tsv
from zoo.data.splits import split_pairs
from zoo.data.streamed_corpus import StreamedCorpus


def tfds_dataset_name(corpus, datasets, source_lang, target_lang):
    """The TFDS dataset of the pair `source_lang`-`target_lang`; ValueError for another pair."""
    if isinstance(datasets, str):
        return datasets
    found = datasets.get(frozenset({source_lang, target_lang}))
    if found is None:
        known = ", ".join("-".join(sorted(pair)) for pair in datasets)
        raise ValueError(
            f"{corpus} has the language pairs {known}; received {source_lang!r} -> {target_lang!r}."
        )
    return found


def load_tfds_pairs(name, source_lang, target_lang, split, data_dir=None, download=True):
    """Reads `split` of the TFDS translation dataset `name`; returns (sources, targets) lists."""
    import tensorflow_datasets as tfds

    dataset = tfds.load(name, split=split, data_dir=data_dir, download=download)
    for path in prepared_files(name, split, data_dir):
        note_read(path)
    keys = set(dataset.element_spec)
    for lang in (source_lang, target_lang):
        if lang not in keys:
            raise ValueError(
                f"tfds:{name} has the fields {sorted(keys)}, received the language {lang!r}."
            )
    sources, targets = [], []
    for example in tqdm.tqdm(
        tfds.as_numpy(dataset),
        desc=f"tfds:{name} {split}",
        unit=" pairs",
        leave=False,
        disable=None,
    ):
        sources.append(example[source_lang].decode("utf-8").strip())
        targets.append(example[target_lang].decode("utf-8").strip())
    return sources, targets


def load_tfds(corpus, datasets, source_lang, target_lang, split, options):
    """The registry's loader for a TFDS corpus: (sources, targets) of `split`; of `options`
    (a `LoadOptions`) it reads `download` and `tfds_data_dir`."""
    name = tfds_dataset_name(corpus, datasets, source_lang, target_lang)
    return load_tfds_pairs(
        name, source_lang, target_lang, split, options.tfds_data_dir, options.download
    )


def open_tfds_stream(corpus, datasets, source_lang, target_lang, split, tfds_data_dir=None):
    """The registry's stream opener for a TFDS corpus: `split` as a `StreamedCorpus`."""
    name = tfds_dataset_name(corpus, datasets, source_lang, target_lang)
    return StreamedCorpus(
        corpus, source_lang, target_lang, split, "tfds", ((name, split),),
        tfds_data_dir=tfds_data_dir,
    )  # fmt: skip


ENGLISH = "en"


def load_anki(corpus, file_name, source_lang, target_lang, split, options):
    """(sources, targets) of `split` of `$ZOO_DATA_DIR/<corpus>/<file_name>`, in the direction
    the languages give (one of them English, the file's first column), split as `options`
    (a `LoadOptions`) says."""
    path = data_dir() / corpus / file_name
    if not path.is_file():
        raise MissingDataError(
            f"{corpus}: missing {path}. Set ZOO_DATA_DIR to a folder holding "
            f"{corpus}/{file_name} (the tab-separated file from https://www.manythings.org/anki/)."
        )
    english, other = read_tsv(path)
    english, other = split_pairs(
        english, other, split, options.val_fraction, options.test_fraction, options.seed, corpus
    )
    return (english, other) if source_lang == ENGLISH else (other, english)
