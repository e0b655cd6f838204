"""zoo.data: parallel corpora and tf.data pipelines.

`CORPORA` (zoo.data.registry): the named corpora, their languages, splits and readers.
`load_corpus(name, source_lang, target_lang, split)` -> `Corpus`; `make_dataset(...)` (or
`corpus.dataset(...)`) -> batches `({"source_ids", "target_ids"}, target_out_ids)`.
Corpora too large for memory: `open_stream(...)` -> `StreamedCorpus`, `count_stream(...)`,
`stream_dataset(...)` -> the same batches, read from disk each epoch (zoo.data.corpus);
`worker_stream(...)` -> each worker's shard of them, for multi-worker training;
`StreamCounter` counts the pairs a stream reads and drops as it trains.
The two kinds of corpus answer one interface: `name`, `source_lang`, `target_lang`,
`split`, `sample(count, seed)` (pairs to train tokenizers on) and
`dataset(source_tokenizer, target_tokenizer, **options)` (their training batches: the
keyword arguments of `make_dataset` for a `Corpus`, of `stream_dataset` for a
`StreamedCorpus`, which share their meanings).
Both pipelines take `subword_regularization=ALPHA`: the training pairs' SentencePiece
segmentations sampled each time they are read (zoo.data.batching). Their defaults
(`DEFAULT_BATCH_SIZE`, `DEFAULT_MAX_LENGTH`, `DEFAULT_BATCHING`, `DEFAULT_POOL_BATCHES`,
`DEFAULT_BUCKET_WIDTH`) are those of both, and of the command line's flags.
Local corpora live in `$ZOO_DATA_DIR` (default: `shared/data` beside the checkout).
"""

from zoo.data.batching import (
    BATCHINGS,
    DEFAULT_BATCH_SIZE,
    DEFAULT_BATCHING,
    DEFAULT_BUCKET_WIDTH,
    DEFAULT_MAX_LENGTH,
    DEFAULT_POOL_BATCHES,
    DEFAULT_SHUFFLE_BUFFER,
    check,
    check_files,
    count_stream,
    encode_source,
    encode_target,
    make_dataset,
    report_drops,
    steps_per_epoch,
    stream_dataset,
    stream_steps,
    token_lengths,
    worker_stream,
)
from zoo.data.corpus import Corpus, load_corpus, materialise, open_stream, total_bytes
from zoo.data.files import MissingDataError, cache_dir, data_dir
from zoo.data.registry import (
    CORPORA,
    DEFAULT_CORPUS,
    NAMED_TFDS,
    CorpusInfo,
    complete_languages,
    corpora_help,
    corpus_info,
    default_languages,
    default_test_split,
)
from zoo.data.splits import assign_splits
from zoo.data.streamed_corpus import DEFAULT_TOKENIZER_SAMPLE, StreamCounter, StreamedCorpus

__all__ = [
    "BATCHINGS",
    "CORPORA",
    "Corpus",
    "CorpusInfo",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_BATCHING",
    "DEFAULT_BUCKET_WIDTH",
    "DEFAULT_CORPUS",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_POOL_BATCHES",
    "complete_languages",
    "corpora_help",
    "corpus_info",
    "default_languages",
    "default_test_split",
    "DEFAULT_SHUFFLE_BUFFER",
    "DEFAULT_TOKENIZER_SAMPLE",
    "NAMED_TFDS",
    "StreamCounter",
    "StreamedCorpus",
    "check",
    "check_files",
    "count_stream",
    "materialise",
    "open_stream",
    "report_drops",
    "stream_dataset",
    "stream_steps",
    "total_bytes",
    "worker_stream",
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
