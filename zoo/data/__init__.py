"""zoo.data: parallel corpora and tf.data pipelines.

`load_corpus(name, source_lang, target_lang, split)` -> `Corpus`; `make_dataset(...)` (or
`corpus.dataset(...)`) -> batches `({"source_ids", "target_ids"}, target_out_ids)`.
Local corpora live in `$ZOO_DATA_DIR` (default: `shared/data` beside the checkout).
"""

from zoo.data.corpus import Corpus, load_corpus
from zoo.data.errors import MissingDataError
from zoo.data.paths import cache_dir, data_dir
from zoo.data.pipeline import (
    BATCHINGS,
    encode_source,
    encode_target,
    make_dataset,
    steps_per_epoch,
    token_lengths,
)
from zoo.data.splits import assign_splits

__all__ = [
    "BATCHINGS",
    "Corpus",
    "MissingDataError",
    "assign_splits",
    "cache_dir",
    "data_dir",
    "encode_source",
    "encode_target",
    "load_corpus",
    "make_dataset",
    "steps_per_epoch",
    "token_lengths",
]
