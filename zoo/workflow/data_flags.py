"""The recipes' data flags: the corpus and how it is streamed, the languages and tokenizers,
the length filter and the batching."""

from zoo.checks import argparse_number, positive_int
from zoo.constants import RESERVED_TOKENS
from zoo.data import (
    BATCHINGS,
    DEFAULT_BUCKET_WIDTH,
    DEFAULT_SHUFFLE_BUFFER,
    DEFAULT_TOKENIZER_SAMPLE,
    make_dataset,
)
from zoo.data.corpora import CORPORA, DEFAULT_CORPUS, corpora_help
from zoo.models.presets import DEFAULT_VOCAB_SIZES
from zoo.text import DEFAULT_KIND, DEFAULT_VOCAB_SIZE, KINDS
from zoo.workflow.defaults import test_split_help
from zoo.workflow.flag_types import library_default

STREAM_ABOVE_MIB = 100  # --streaming auto streams {split} file sets larger than this
# --vocab-size: more than the reserved ids (<pad>, <s>, </s>, <unk>)
VOCABULARY_SIZE = argparse_number(
    int, len(RESERVED_TOKENS), True, f"an integer > {len(RESERVED_TOKENS)} (the reserved ids)"
)


def streaming_help():
    """--streaming's help: which corpora 'auto' streams, from the corpus registry."""
    tfds = [name for name, info in CORPORA.items() if info.tfds_datasets is not None]
    in_memory = [name for name in CORPORA if name not in tfds]
    return (
        "read the training split from disk each epoch in bounded memory ('on'), or hold it in "
        "memory, tokenized once and shuffled whole ('off'). 'auto' (default) streams the TFDS "
        f"corpora ({', '.join([*tfds, 'tfds:NAME'])}) and {{split}} file sets that are "
        f"gzip-compressed or larger than {STREAM_ABOVE_MIB} MiB; {', '.join(in_memory)} stay in "
        "memory. A streamed corpus needs {split} in its name (one file or pair of files per "
        "split)"
    )


def add_data_flags(parser):
    data = parser.add_argument_group("data")
    add_corpus_flags(data)
    add_text_flags(data)
    add_batching_flags(data)
    return data


def add_corpus_flags(data):
    """--data and how a large corpus is streamed."""
    data.add_argument(
        "--data", default=DEFAULT_CORPUS, help=f"{corpora_help()} (default: %(default)s)"
    )
    data.add_argument(
        "--streaming",
        choices=("auto", "on", "off"),
        default="auto",
        help=streaming_help(),
    )
    data.add_argument(
        "--shuffle-buffer",
        type=positive_int,
        default=DEFAULT_SHUFFLE_BUFFER,
        help="streamed training pairs are shuffled within a window of this many pairs "
        f"(default: {DEFAULT_SHUFFLE_BUFFER:,}); in memory the whole split is shuffled",
    )
    data.add_argument(
        "--steps-per-epoch",
        type=positive_int,
        default=None,
        help="streamed corpora: batches per epoch for the progress bar and the learning-rate "
        "schedule, instead of counting them in one pass before training (the count is "
        "cached in --out beside the vocabulary; an epoch still ends where the data ends, and "
        "the pairs the length filter dropped are then reported after the first epoch)",
    )
    data.add_argument(
        "--allow-corpus-change",
        action="store_true",
        help="resume a run although its training or validation files changed since it began "
        "(run.json holds their fingerprints; without this flag such a rerun is refused, naming "
        "the file and what changed)",
    )
    data.add_argument(
        "--tokenizer-sample",
        type=positive_int,
        default=DEFAULT_TOKENIZER_SAMPLE,
        help="train the tokenizers on a seeded sample of at most this many training pairs "
        f"(default: {DEFAULT_TOKENIZER_SAMPLE:,}; Multi30k's 29,000 are all used): the "
        "memory of tokenizer training grows with it (measured: docs/corpora.md)",
    )


def add_text_flags(data):
    """Languages, the test split and the tokenizers."""
    data.add_argument(
        "--source-lang",
        default=None,
        help="source language (default: the corpus' default pair, see --data; required for "
        "corpora without one)",
    )
    data.add_argument(
        "--target-lang",
        default=None,
        help="target language (default: the corpus' default pair, see --data; required for "
        "corpora without one)",
    )
    data.add_argument(
        "--test-split",
        default=None,
        help=f"split scored at the end (default: {test_split_help()})",
    )
    data.add_argument(
        "--tokenizer",
        choices=KINDS,
        default=DEFAULT_KIND,
        help="subword model trained on the training split, one per language (default: %(default)s)",
    )
    data.add_argument(
        "--shared-vocabulary",
        action="store_true",
        help="one subword model trained on both languages' training text (both sides of the "
        "--tokenizer-sample pairs), saved as source_tokenizer/ and target_tokenizer/, of "
        "--vocab-size pieces; what three-way tied embeddings need (Press and Wolf 2017; "
        "default: one model per language; see docs/training.md)",
    )
    bahdanau, luong = DEFAULT_VOCAB_SIZES["bahdanau"], DEFAULT_VOCAB_SIZES["luong"]
    data.add_argument(
        "--vocab-size",
        type=VOCABULARY_SIZE,
        default=DEFAULT_VOCAB_SIZE,
        help=f"vocabulary size per language, {len(RESERVED_TOKENS)} reserved ids included "
        "(default: %(default)s; "
        f"the papers used {bahdanau:,} (Bahdanau) and {luong:,} (Luong) words on WMT)",
    )
    data.add_argument("--lowercase", action="store_true", help="lowercase text before tokenizing")


def add_batching_flags(data):
    """The length filter, the batching and the quick-run slices."""
    data.add_argument(
        "--max-length",
        type=positive_int,
        default=library_default(make_dataset, "max_length"),
        help="drop training pairs with more tokens than this on either side (default: "
        "%(default)s, as in Luong et al.)",
    )
    data.add_argument(
        "--batching",
        choices=BATCHINGS,
        default=library_default(make_dataset, "batching"),
        help="how training pairs are grouped into batches to cut padding: pools of "
        "--pool-batches batches sorted by (target, source) length, their batches shuffled "
        f"(as fairseq, OpenNMT-py); length buckets of width {DEFAULT_BUCKET_WIDTH}; or plain "
        "shuffled batches (default: %(default)s)",
    )
    data.add_argument(
        "--pool-batches",
        type=positive_int,
        default=library_default(make_dataset, "pool_batches"),
        help="batches per sorted pool with --batching pools; larger pools pad less "
        "(default: %(default)s)",
    )
    data.add_argument(
        "--train-limit",
        type=positive_int,
        default=None,
        help="use only the first N training pairs (quick runs, CI)",
    )
    data.add_argument(
        "--eval-limit",
        type=positive_int,
        default=None,
        help="use only the first N validation and test pairs (quick runs, CI)",
    )
