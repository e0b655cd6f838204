"""`StreamedCorpus`: one split of a parallel corpus named by its files (or a TFDS split),
read with `tf.data.TextLineDataset` each epoch instead of held in memory.

Lines get the readers' rules (zoo.data.files) in the graph: surrounding whitespace
stripped, control characters as spaces, pairs with an empty side dropped.

Sharding (`lines(num_shards, index)`): with at least as many files as shards, worker `index`
reads files index, index + num_shards, ...; otherwise every worker reads all lines and keeps
line index, index + num_shards, ... Either way each pair is read by one worker per epoch.

`StreamCounter`: counts of the pairs a training stream read, kept and dropped, taken while
it streams.
"""

import dataclasses
import os
import random

import tensorflow as tf

from zoo.data.batching import stream_dataset
from zoo.data.files import MissingDataError
from zoo.text.preprocessor import TOKENIZE_BATCH

COUNTED = ("pairs", "too_long", "empty")  # kept: the pairs neither too long nor empty


class StreamCounter:
    """The pairs `stream_dataset(..., counter=counter)` has read so far, and how many of them
    the length filter kept or dropped, counted inside the pipeline as it reads.

    `count_stream` counts a whole pass before training and gives the batches per epoch;
    a run with a given number of steps per epoch (`--steps-per-epoch`) skips that pass, and
    this counter reports the drops instead, after the first epoch. The counts include what
    the pipeline has read ahead (the shuffle buffer, the pool being sorted, prefetched
    batches), so they cover at least the pairs trained on.

    The counts are int64 `tf.Variable`s made outside any function or distribution scope;
    the pipeline adds to them from its parallel map (atomic updates).

    Args:
        max_length: the length limit of the stream it counts (for the report; None: none).

    Example:
        counter = StreamCounter(max_length=50)
        batches = stream_dataset(corpus, src, tgt, max_length=50, counter=counter)
        for batch in batches.take(100): ...
        counter.counts()  # {"pairs": ..., "kept": ..., "too_long": ..., "empty": ..., ...}
    """

    def __init__(self, max_length):
        self.max_length = max_length
        with tf.init_scope():
            self._variables = {
                name: tf.Variable(0, dtype=tf.int64, trainable=False, name=f"stream_{name}")
                for name in COUNTED
            }

    def add(self, empty, too_long):
        """Graph op: counts one chunk; `empty` and `too_long` are boolean vectors, one entry
        a pair read, never both true (`usable`'s rule). Returns the update ops."""

        def total(flags):
            return tf.reduce_sum(tf.cast(flags, tf.int64))

        return [
            self._variables["pairs"].assign_add(tf.size(empty, out_type=tf.int64)),
            self._variables["too_long"].assign_add(total(too_long)),
            self._variables["empty"].assign_add(total(empty)),
        ]

    def counts(self):
        """The counts so far: a dict with `count_stream`'s keys "pairs", "kept", "too_long",
        "empty" and "max_length" (no histogram)."""
        counts = {name: int(variable.numpy()) for name, variable in self._variables.items()}
        counts["kept"] = counts["pairs"] - counts["too_long"] - counts["empty"]
        counts["max_length"] = self.max_length
        return counts


KINDS = ("parallel", "tsv", "tfds")
# The most training pairs the tokenizers train on (a seeded sample of a larger split; the
# recipes' --tokenizer-sample). It bounds the memory of tokenizer training, which grows with
# the text sampled (SentencePiece's trainer; measured figures in docs/corpora.md), and stays
# above Multi30k's 29,000 training pairs, which are all used.
DEFAULT_TOKENIZER_SAMPLE = 200_000
# The readers' control characters (Unicode category Cc without tab, LF and CR), in RE2.
_CONTROL = r"[\x{00}-\x{08}\x{0b}\x{0c}\x{0e}-\x{1f}\x{7f}-\x{9f}]"
_BOM = "\ufeff"


@dataclasses.dataclass(frozen=True)
class StreamedCorpus:
    """One split of a parallel corpus on disk (or in TFDS), read as a stream.

    Attributes:
        name: the corpus name as given (a prefix, a TSV path, "tfds:NAME").
        source_lang, target_lang: language codes.
        split: the split's name.
        kind: "parallel" (line-aligned files), "tsv" or "tfds".
        files: for "parallel", ((source_path, target_path), ...); for "tsv", (path, ...);
            for "tfds", ((dataset name, TFDS split),).
        swap: "tsv" only: the first column is the target side.
        tfds_data_dir: "tfds" only: `data_dir` for `tfds.load`.
    """

    name: str
    source_lang: str
    target_lang: str
    split: str
    kind: str
    files: tuple
    swap: bool = False
    tfds_data_dir: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"StreamedCorpus kind must be one of {KINDS}, got {self.kind!r}.")
        if not self.files:
            raise ValueError(f"StreamedCorpus {self.name!r} ({self.split}) names no files.")
        if self.kind != "tfds":
            for path in self.paths():
                if not os.path.isfile(path):
                    raise MissingDataError(f"Missing corpus file {path}.")

    def paths(self):
        """Every file read, in order (none for TFDS)."""
        if self.kind == "parallel":
            return [p for pair in self.files for p in pair]
        return [] if self.kind == "tfds" else list(self.files)

    def fingerprint(self):
        """What identifies the data: the files with their sizes and modification times."""
        if self.kind == "tfds":
            return {"tfds": [list(f) for f in self.files]}
        return {p: [os.path.getsize(p), int(os.path.getmtime(p))] for p in self.paths()}

    def records(self, num_shards=1, index=0):
        """`tf.data.Dataset` of this worker's raw records (see the module docstring on
        sharding), one per pair: a (source, target) pair of `tf.string` scalars, or the line
        of a TSV file. `pairs_of` turns a batch of them into normalised sentences."""
        num_shards, index = int(num_shards), int(index)
        if not 0 <= index < num_shards:
            raise ValueError(f"Shard index must be in [0, {num_shards}), got {index}.")
        files = list(self.files)
        by_file = self.kind != "tfds" and num_shards > 1 and len(files) >= num_shards
        if by_file:
            files = files[index::num_shards]
        dataset = _concatenate([self._read(f) for f in files])
        if num_shards > 1 and not by_file:
            dataset = dataset.shard(num_shards, index)
        return dataset

    def pairs_of(self, *records):
        """A batch of `records` (as a map function receives them) -> (sources (B,), targets
        (B,)) `tf.string`, normalised as the readers do (empty sentences are kept)."""
        if self.kind != "tsv":
            source, target = records
            return _normalised(source), _normalised(target)
        fields = tf.strings.split(records[0], "\t", maxsplit=2).to_tensor(default_value="")
        first, second = _normalised(fields[:, 0]), _normalised(fields[:, 1])
        return (second, first) if self.swap else (first, second)

    def pair_batches(self, num_shards=1, index=0):
        """`tf.data.Dataset` of (sources (B,), targets (B,)) `tf.string` batches of up to
        TOKENIZE_BATCH pairs: this worker's share, normalised, none with an empty side."""

        def nonempty(*records):
            source, target = self.pairs_of(*records)
            keep = (tf.strings.length(source) > 0) & (tf.strings.length(target) > 0)
            return tf.boolean_mask(source, keep), tf.boolean_mask(target, keep)

        batches = self.records(num_shards, index).batch(TOKENIZE_BATCH)
        return batches.map(nonempty, num_parallel_calls=tf.data.AUTOTUNE)

    def lines(self, num_shards=1, index=0):
        """`pair_batches` one pair at a time: (source, target) `tf.string` scalars."""
        return self.pair_batches(num_shards, index).unbatch()

    def _read(self, entry):
        if self.kind == "tfds":
            import tensorflow_datasets as tfds

            name, split = entry
            dataset = tfds.load(name, split=split, data_dir=self.tfds_data_dir)
            source, target = self.source_lang, self.target_lang
            return dataset.map(lambda example: (example[source], example[target]))
        if self.kind == "parallel":
            source_path, target_path = entry
            return tf.data.Dataset.zip(_text_lines(source_path), _text_lines(target_path))
        return _text_lines(entry)

    def dataset(self, source_tokenizer, target_tokenizer, **options):
        """`zoo.data.stream_dataset(self, source_tokenizer, target_tokenizer, ...)`: the
        training batches read from disk; the same keyword arguments."""
        return stream_dataset(self, source_tokenizer, target_tokenizer, **options)

    def sample(self, count=DEFAULT_TOKENIZER_SAMPLE, seed=0):
        """A seeded uniform sample of at most `count` pairs (reservoir sampling over one
        streaming pass, in file order): (sources, targets) lists, for training tokenizers.
        Memory: the sample alone, whatever the corpus' size."""
        rng = random.Random(seed)
        sources, targets = [], []
        seen = 0
        for source, target in self.pair_batches().as_numpy_iterator():
            for s, t in zip(source, target, strict=True):
                if seen < count:
                    sources.append(s)
                    targets.append(t)
                else:
                    j = rng.randrange(seen + 1)
                    if j < count:
                        sources[j], targets[j] = s, t
                seen += 1
        decode = lambda items: [x.decode("utf-8") for x in items]  # noqa: E731
        return decode(sources), decode(targets)


def _concatenate(datasets):
    dataset = datasets[0]
    for other in datasets[1:]:
        dataset = dataset.concatenate(other)
    return dataset


def _text_lines(path):
    compression = "GZIP" if path.endswith(".gz") else ""
    return tf.data.TextLineDataset(path, compression_type=compression)


def _normalised(text):
    text = tf.strings.regex_replace(text, "^" + _BOM, "")
    return tf.strings.strip(tf.strings.regex_replace(text, _CONTROL, " "))
