"""The Tatoeba sentence pairs of ManyThings (https://www.manythings.org/anki/), in memory.

A file `$ZOO_DATA_DIR/<corpus>/<file>` holds `English<TAB>other language` lines (an optional
third `CC-BY ...` column is ignored). Its pairs are split into train/val/test by distinct
sentence (`zoo.data.splits.split_pairs`: hash-based, deterministic, whatever the direction).
`load` is the corpus registry's loader (zoo.data.corpora).
"""

from zoo.data.errors import MissingDataError
from zoo.data.paths import data_dir
from zoo.data.readers import read_tsv
from zoo.data.splits import split_pairs

ENGLISH = "en"


def load(corpus, file_name, source_lang, target_lang, split, options):
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
