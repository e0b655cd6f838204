"""Turning a corpus into batches: the in-memory pipeline (`make_dataset`) and the streamed one
(`stream_dataset`), with subword sampling and the streamed files' checks.

Subword regularisation (Kudo 2018) in the training pipelines: each time a pair is read,
its segmentation is sampled by the SentencePiece unigram model (`nbest_size=-1`, smoothing
`alpha`), inside the tf.data graph.

The pairs that train are those the exact (best) segmentation keeps, as without sampling, so
an epoch has the same number of batches; a sampled side longer than `max_length` tokens
takes its exact segmentation instead (which fits), so the length filter and the sorted
pools see the lengths of what is batched. Validation, test and translation use the exact
segmentation.

tf.data pipelines from sentence pairs to model batches.

Each batch is `({"source_ids": (B, Ts), "target_ids": (B, Tt)}, target_out_ids (B, Tt))`,
int32, right-padded with PAD_ID, where for a target sentence with tokens y:
`target_ids = [START_ID] + y` and `target_out_ids = y + [END_ID]`. Source rows hold the
source tokens only (no START/END); `encode_source` makes the same rows for inference.

`check(corpus)` reads a streamed corpus's files once in Python and raises the readers'
errors, with file and line: files of different lengths, invalid UTF-8, a TSV line without
exactly one tab, a gzip file cut short, old Mac line endings (CR alone). It runs before the
first epoch (`count_stream` calls it), so a training stream never meets such a line.
`check_files(corpus)` is its quick part, for runs that skip the counting pass: the gzip
files read to their end and the line endings of each file's first MiB; `TextLineDataset`
would otherwise stop silently at the cut of a truncated gzip file, and read a CR-only file
as one line.

tf.data pipelines from a `StreamedCorpus`: the batches of `make_dataset`, in bounded memory.

`make_dataset` tokenizes a corpus held in lists, measures every sentence
up front and may shuffle the whole corpus. `stream_dataset` reads the files each epoch and
holds at most a shuffle buffer of sentence pairs and one sorted pool of batches:

    lines (TextLineDataset, this worker's shard)
      -> shuffle in a buffer of `shuffle_buffer` pairs (seeded: the same order every run)
      -> tokenize (in chunks, in parallel) -> drop pairs with an empty side or more than
         `max_length` tokens
      -> batches: sorted pools, length buckets or plain padded batches, as in make_dataset

The number of batches per epoch comes from `count_stream`: one pass that tokenizes every
pair and counts the kept and dropped ones (and the length histogram the buckets need), after
`check` has read the files for bad lines. A recipe caches its result
beside the vocabulary, so later runs start at once.
"""

import logging
import math

import numpy as np
import tensorflow as tf

from zoo.checks import check_int, check_non_negative_float
from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.data.files import (
    GZIP_ERRORS,
    check_file,
    check_head,
    gzip_error,
    note_read,
    open_binary,
    prepared_files,
    read_head,
    tsv_fields,
)
from zoo.text.preprocessor import TOKENIZE_BATCH, encode, token_lengths


def check_subword_regularization(owner, alpha, batching):
    """`alpha` as a float >= 0 (0: off); ValueError for a negative one, or with
    batching="buckets" (the buckets' batch counts would change with each epoch's samples)."""
    alpha = check_non_negative_float(owner, "subword_regularization", alpha)
    if alpha > 0 and batching == "buckets":
        raise ValueError(
            f"{owner}: subword_regularization={alpha:g} samples new lengths each epoch, which "
            "would change the number of batches of length buckets (received "
            "batching='buckets'); use batching='pools' (the default) or 'plain', or "
            "subword_regularization=0."
        )
    return alpha


def sampling_tokenizers(source_tokenizer, target_tokenizer, alpha):
    """(source, target) tokenizers that sample their segmentations with `alpha`, or None when
    `alpha` is 0. ValueError (naming the tokenizer) unless both are SentencePiece unigram."""
    if alpha == 0:
        return None
    return source_tokenizer.sampling_tokenizer(alpha), target_tokenizer.sampling_tokenizer(alpha)


def sampled_ids(strings, tokenizer, sampler, max_length, exact=None):
    """Strings `(B,)` -> ragged `(B, None)` int32 ids sampled by `sampler`; a row of more than
    `max_length` ids takes `tokenizer`'s exact segmentation (never with max_length=None),
    `exact` when given (the same strings' `tokenizer.tokenize`)."""
    sampled = sampler.tokenize(strings)
    if max_length is None:
        return sampled
    if exact is None:
        exact = tokenizer.tokenize(strings)
    rows = tf.shape(sampled.row_lengths(), out_type=tf.int64)[0]
    too_long = sampled.row_lengths() > max_length
    take = tf.where(too_long, tf.range(rows) + rows, tf.range(rows))
    return tf.gather(tf.concat([sampled, exact], axis=0), take)


def sampled_chunks(sources, targets, tokenizers, samplers, max_length, deterministic,
                   shuffle_buffer, seed):  # fmt: skip
    """The pairs (lists of `str`), shuffled as strings in a buffer of `shuffle_buffer` from
    `seed` (None: not shuffled), as chunks `(x, y)` (ragged batches of up to TOKENIZE_BATCH
    rows) of source and target ids sampled anew each time they are read (`sampled_ids`)."""
    options = tf.data.Options()
    options.deterministic = bool(deterministic)
    dataset = tf.data.Dataset.from_tensor_slices(
        (tf.constant(sources, tf.string), tf.constant(targets, tf.string))
    ).with_options(options)
    if seed is not None:
        dataset = dataset.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)

    def tokenize(source, target):
        return (
            sampled_ids(source, tokenizers[0], samplers[0], max_length),
            sampled_ids(target, tokenizers[1], samplers[1], max_length),
        )

    return dataset.batch(TOKENIZE_BATCH).map(
        tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic
    )


logger = logging.getLogger("zoo.data")

BATCHINGS = ("pools", "buckets", "plain")
# The defaults of both pipelines (make_dataset, stream_dataset) and of the flags rendering them
DEFAULT_BATCH_SIZE, DEFAULT_MAX_LENGTH = 64, 50
DEFAULT_BATCHING, DEFAULT_POOL_BATCHES, DEFAULT_BUCKET_WIDTH = "pools", 1024, 2


def encode_source(tokenizer, strings):
    """Source strings `(B,)` -> `source_ids` `(B, Ts)` int32 right-padded with PAD_ID.

    The rows are exactly those `make_dataset` gives the model, made as the translator makes
    them (`zoo.text.preprocessor.encode`); use it at inference time.
    """
    return encode(tokenizer, strings)[0]


def _target_rows(tokenizer, strings):
    """Target strings `(B,)` -> ragged `([START] + y, y + [END])`, int32."""
    return target_rows(tokenizer.tokenize(strings))


def target_rows(y):
    """Target ids, ragged `(B, None)` -> ragged `([START] + y, y + [END])`, int32."""
    rows = y.nrows()
    start = tf.fill([rows, 1], tf.constant(START_ID, tf.int32))
    end = tf.fill([rows, 1], tf.constant(END_ID, tf.int32))
    return tf.concat([start, y], axis=1), tf.concat([y, end], axis=1)


def encode_target(tokenizer, strings):
    """Target strings `(B,)` -> `(target_ids, target_out_ids)`, each `(B, Tt)` int32, padded."""
    target_ids, target_out_ids = _target_rows(tokenizer, strings)
    return target_ids.to_tensor(default_value=PAD_ID), target_out_ids.to_tensor(PAD_ID)


def _bucket_boundaries(longest, bucket_width):
    return list(range(bucket_width + 1, longest + 1, bucket_width))


def _batch_sizes(boundaries, longest, batch_size, token_budget):
    uppers = [b - 1 for b in boundaries] + [longest]
    if token_budget is None:
        return [batch_size] * len(uppers)
    return [max(1, token_budget // max(upper, 1)) for upper in uppers]


def make_dataset(
    source_sentences,
    target_sentences,
    source_tokenizer,
    target_tokenizer,
    batch_size=DEFAULT_BATCH_SIZE,
    max_length=DEFAULT_MAX_LENGTH,
    shuffle=True,
    seed=0,
    batching=DEFAULT_BATCHING,
    pool_batches=DEFAULT_POOL_BATCHES,
    bucket_width=DEFAULT_BUCKET_WIDTH,
    token_budget=None,
    deterministic=True,
    cache=True,
    drop_remainder=False,
    shuffle_buffer=None,
    log_drops=True,
    subword_regularization=0.0,
):
    """A `tf.data.Dataset` of training batches from parallel sentences.

    Pairs whose source or target has more than `max_length` tokens (START/END not counted)
    or no tokens at all are dropped, and the counts are logged (logger "zoo.data", WARNING).
    The dataset knows its length: `len(dataset)` is the exact number of batches per epoch.

    Args:
        source_sentences, target_sentences: equal-length sequences of `str`.
        source_tokenizer, target_tokenizer: `zoo.text` tokenizers (tokenisation runs in the
            tf.data graph).
        batch_size: pairs per batch (each bucket's batch size with `batching="buckets"`).
        max_length: longest kept sentence in tokens; None keeps every length.
        shuffle: shuffle pairs, anew each epoch, from `seed` (and, with "pools", the order of
            the batches).
        seed: shuffling seed; the same seed gives the same batches.
        batching: how pairs are grouped into batches, to cut padding:
            - "pools" (default): the shuffled pairs are taken `pool_batches` batches at a
              time, each pool sorted by target length, then source length, and cut into
              batches, whose order is shuffled (fairseq sorts the whole corpus; OpenNMT-py's
              `pool_factor` does this). Only the epoch's last batch may be smaller.
            - "buckets": `bucket_by_sequence_length` on max(|x|, |y| + 1), `bucket_width`
              tokens per bucket (each bucket's last batch may be smaller), with
              `token_budget` if given.
            - "plain": padded batches in the (shuffled) order of the pairs.
            Real (non-padding) share of the positions in the first 80 Multi30k de-en
            batches of 64 (8k pieces; bench/RESULTS.md): pools of 1024 batches (the whole
            corpus), target 99.5% and source 92.5%; of 256, 99.6% and 90.7%; buckets of
            width 2, 92.5% and 88%; width 5, 84% and 80.5%; plain batches, 53% and 48%.
        pool_batches: batches per sorted pool with "pools" (a pool holds
            `pool_batches * batch_size` pairs); larger pools pad less and vary the batches'
            composition less between epochs (pairs of equal lengths are still shuffled).
        bucket_width: length range of a bucket, in tokens, with "buckets".
        token_budget: with "buckets", instead of `batch_size` pairs, batches of at most about
            this many padded tokens per side (bucket batch size = token_budget // bucket's
            longest length).
        deterministic: deterministic element order in parallel maps (set False for speed).
        cache: cache the tokenized pairs in memory after the first epoch.
        drop_remainder: drop the smaller batches (each bucket's last one with "buckets",
            the epoch's last one otherwise).
        shuffle_buffer: shuffle buffer size; None shuffles the whole corpus.
        log_drops: log the pairs the length filter dropped (False when the same pairs were
            logged before, e.g. for a later epoch's dataset built with another seed).
        subword_regularization: 0 (default): the exact segmentation, tokenized once. ALPHA > 0:
            subword regularisation (Kudo 2018): each time a pair is read, its segmentation
            is sampled by the SentencePiece unigram models (`nbest_size=-1`, smoothing
            ALPHA; zoo.data.batching), in the tf.data graph. The pairs kept and the
            batches per epoch are those of the exact segmentation; a sampled side longer
            than `max_length` takes its exact segmentation. SentencePiece's sampler takes no
            seed, so the segmentations differ between runs. Needs SentencePiece unigram
            tokenizers and batching "pools" or "plain"; use it for training data only.

    Returns:
        `tf.data.Dataset` of `({"source_ids": (B, Ts), "target_ids": (B, Tt)},
        target_out_ids (B, Tt))`, int32, PAD_ID-padded.

    Example:
        >>> ds = make_dataset(corpus.source, corpus.target, src_tok, tgt_tok, batch_size=32)
        >>> features, labels = next(iter(ds))
    """
    sources, targets = list(source_sentences), list(target_sentences)
    if len(sources) != len(targets):
        raise ValueError(
            f"source_sentences has {len(sources)} items but target_sentences has {len(targets)}."
        )
    batch_size = check_int("make_dataset", "batch_size", batch_size)
    max_length = check_int("make_dataset", "max_length", max_length, allow_none=True)
    pool_batches = check_int("make_dataset", "pool_batches", pool_batches)
    bucket_width = check_int("make_dataset", "bucket_width", bucket_width)
    token_budget = check_int("make_dataset", "token_budget", token_budget, allow_none=True)
    shuffle_buffer = check_int("make_dataset", "shuffle_buffer", shuffle_buffer, allow_none=True)
    _check_batching(batching, token_budget)
    alpha = check_subword_regularization("make_dataset", subword_regularization, batching)
    samplers = sampling_tokenizers(source_tokenizer, target_tokenizer, alpha)
    indices, lengths = _usable_pairs(
        sources, targets, source_tokenizer, target_tokenizer, max_length, log_drops
    )
    if samplers is not None:
        dataset = sampled_chunks(
            [sources[i] for i in indices], [targets[i] for i in indices],
            (source_tokenizer, target_tokenizer), samplers, max_length, deterministic,
            len(indices) if shuffle_buffer is None else shuffle_buffer, seed if shuffle else None,
        ).map(lambda x, y: _features(x, *target_rows(y)))  # fmt: skip
        longest = None if max_length is None else max_length + 1
        if batching == "pools":
            dataset = _sorted_pools(dataset, batch_size, pool_batches, longest, drop_remainder,
                                    shuffle, seed, chunked=True)  # fmt: skip
        else:
            dataset = _plain_batches(_rows(dataset), batch_size, drop_remainder)
        steps = epoch_steps([len(indices)], [batch_size], drop_remainder)
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(steps))
        return dataset.prefetch(tf.data.AUTOTUNE)
    dataset = _tokenized(
        [sources[i] for i in indices],
        [targets[i] for i in indices],
        source_tokenizer,
        target_tokenizer,
        deterministic,
    )
    if cache:
        dataset = dataset.cache()
    if shuffle:
        buffer = len(indices) if shuffle_buffer is None else shuffle_buffer
        dataset = dataset.shuffle(buffer, seed=seed, reshuffle_each_iteration=True)
    longest = int(lengths.max())
    if batching == "pools":
        dataset = _sorted_pools(
            dataset, batch_size, pool_batches, longest, drop_remainder, shuffle, seed
        )
        counts, sizes = [len(indices)], [batch_size]
    elif batching == "buckets":
        dataset, boundaries, sizes = _bucketed(
            dataset, longest, batch_size, bucket_width, token_budget, drop_remainder
        )
        counts = bucket_counts(np.bincount(lengths), boundaries, len(sizes))
    else:
        dataset = _plain_batches(dataset, batch_size, drop_remainder)
        counts, sizes = [len(indices)], [batch_size]
    steps = epoch_steps(counts, sizes, drop_remainder)
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(steps))
    return dataset.prefetch(tf.data.AUTOTUNE)


_PADDED_SHAPES = ({"source_ids": [None], "target_ids": [None]}, [None])


def _padding_values():
    pad = tf.constant(PAD_ID, tf.int32)
    return {"source_ids": pad, "target_ids": pad}, pad


def _check_batching(batching, token_budget):
    if batching not in BATCHINGS:
        raise ValueError(
            f"make_dataset: batching must be one of {', '.join(map(repr, BATCHINGS))}; "
            f"received {batching!r}."
        )
    if token_budget is not None and batching != "buckets":
        raise ValueError(
            "make_dataset: token_budget sizes the batches of length buckets; it needs "
            f"batching='buckets' (received batching={batching!r})."
        )


def usable(source_lengths, target_lengths, max_length):
    """The rule of which pairs train, on their token counts (NumPy arrays): returns boolean
    arrays (keep, empty, too_long); empty: no token on a side; too_long: more than
    `max_length` tokens on a side (never with max_length=None)."""
    empty = (source_lengths == 0) | (target_lengths == 0)
    too_long = np.zeros_like(empty)
    if max_length is not None:
        too_long = ~empty & ((source_lengths > max_length) | (target_lengths > max_length))
    return ~(empty | too_long), empty, too_long


def report_usable(what, pairs, kept, too_long, empty, max_length, log=True):
    """Logs (WARNING, logger "zoo.data", unless `log` is False) what `usable` dropped; raises
    ValueError when no pair of `pairs` is left."""
    if log and kept < pairs:
        logger.warning(
            "%s: kept %d of %d pairs; dropped %d with more than max_length=%s tokens and %d "
            "with no tokens.",
            what,
            kept,
            pairs,
            too_long,
            max_length,
            empty,
        )
    if pairs and kept == 0:
        raise ValueError(
            f"{what}: none of the {pairs} pairs is usable: {too_long} have more than "
            f"max_length={max_length} tokens on a side and {empty} have no tokens on a side."
        )


def _usable_pairs(sources, targets, source_tokenizer, target_tokenizer, max_length, log_drops):
    """The indices of the pairs kept (no empty side, none longer than `max_length` tokens)
    and their lengths max(|x|, |y| + 1); logs what was dropped (with `log_drops`), raises
    when nothing is left."""
    source_lengths = token_lengths(source_tokenizer, sources)
    target_lengths = token_lengths(target_tokenizer, targets)
    keep, empty, too_long = usable(source_lengths, target_lengths, max_length)
    what = "make_dataset"
    report_usable(what, len(sources), int(keep.sum()), int(too_long.sum()), int(empty.sum()),
                  max_length, log=log_drops)  # fmt: skip
    if not sources:
        raise ValueError("make_dataset received no sentence pairs (empty lists).")
    indices = np.flatnonzero(keep)
    return indices, np.maximum(source_lengths[indices], target_lengths[indices] + 1)


def _tokenized(sources, targets, source_tokenizer, target_tokenizer, deterministic):
    """The pairs as `({"source_ids", "target_ids"}, target_out_ids)` rows (unpadded)."""
    options = tf.data.Options()
    options.deterministic = bool(deterministic)
    dataset = tf.data.Dataset.from_tensor_slices(
        (tf.constant(sources, tf.string), tf.constant(targets, tf.string))
    ).with_options(options)

    def tokenize(source, target):
        return (source_tokenizer.tokenize(source), *_target_rows(target_tokenizer, target))

    dataset = dataset.batch(TOKENIZE_BATCH).map(
        tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic
    )
    return dataset.unbatch().map(_features)


def _features(x, y_in, y_out):
    return {"source_ids": x, "target_ids": y_in}, y_out


def _rows(chunks):
    """Chunks of ragged rows -> single dense rows (what padded_batch takes)."""
    return chunks.unbatch().map(lambda *pair: tf.nest.map_structure(tf.identity, pair))


def _bucketed(dataset, longest, batch_size, bucket_width, token_budget, drop_remainder):
    """Length buckets of `bucket_width` tokens for pairs whose length key max(|x|, |y| + 1)
    is at most `longest`; returns (dataset, boundaries, batch size per bucket)."""
    boundaries = _bucket_boundaries(longest, bucket_width)
    sizes = _batch_sizes(boundaries, longest, batch_size, token_budget)
    dataset = dataset.bucket_by_sequence_length(
        lambda features, _: tf.maximum(
            tf.shape(features["source_ids"])[0], tf.shape(features["target_ids"])[0]
        ),
        bucket_boundaries=boundaries,
        bucket_batch_sizes=sizes,
        padded_shapes=_PADDED_SHAPES,
        padding_values=_padding_values(),
        drop_remainder=drop_remainder,
    )
    return dataset, boundaries, sizes


def bucket_counts(histogram, boundaries, buckets):
    """Pairs per bucket, from `histogram` (pairs per length key)."""
    bucket_of = np.searchsorted(np.asarray(boundaries, np.int64), np.arange(len(histogram)),
                                side="right")  # fmt: skip
    return np.bincount(bucket_of, weights=histogram, minlength=buckets).astype(np.int64)


def epoch_steps(counts, sizes, drop_remainder):
    """Batches per epoch for `counts[i]` pairs cut in batches of `sizes[i]`."""
    rounding = math.floor if drop_remainder else math.ceil
    return sum(rounding(int(c) / s) for c, s in zip(counts, sizes, strict=True))


def _plain_batches(dataset, batch_size, drop_remainder):
    return dataset.padded_batch(
        batch_size, padded_shapes=_PADDED_SHAPES, padding_values=_padding_values(),
        drop_remainder=drop_remainder,
    )  # fmt: skip


def _sorted_pools(
    dataset, batch_size, pool_batches, longest, drop_remainder, shuffle, seed, chunked=False
):
    """Batches cut from pools of `pool_batches * batch_size` pairs sorted by (target length,
    source length); a stable sort, so pairs of equal lengths keep their shuffled order. A
    pool is a whole number of batches, so only the epoch's last batch can be smaller. The
    pool is sorted and cut into padded batches in one map: no per-pair step after it.
    `chunked`: `dataset` yields chunks of rows (ragged batches) rather than single rows;
    `rebatch` joins them into pools without a step per pair."""

    def sorted_batches(features, target_out_ids):
        target_lengths = tf.cast(features["target_ids"].row_lengths(), tf.int32)
        source_lengths = tf.cast(features["source_ids"].row_lengths(), tf.int32)
        if longest is None:  # lengths not bounded: by source, then (stable) by target
            by_source = tf.argsort(source_lengths, stable=True)
            order = tf.gather(by_source, tf.argsort(tf.gather(target_lengths, by_source),
                                                    stable=True))  # fmt: skip
        else:
            order = tf.argsort(target_lengths * (longest + 2) + source_lengths, stable=True)
        pairs = tf.shape(order, out_type=tf.int64)[0]
        full = pairs // batch_size
        sizes = tf.concat(
            [tf.fill([full], tf.constant(batch_size, tf.int64)), [pairs - full * batch_size]], 0
        )
        sizes = tf.boolean_mask(sizes, sizes > 0)

        def cut(rows):
            return tf.RaggedTensor.from_row_lengths(tf.gather(rows, order), sizes)

        return {name: cut(rows) for name, rows in features.items()}, cut(target_out_ids)

    def padded(features, target_out_ids):
        pad = tf.constant(PAD_ID, tf.int32)
        return (
            {name: rows.to_tensor(default_value=pad) for name, rows in features.items()},
            target_out_ids.to_tensor(default_value=pad),
        )

    pool = pool_batches * batch_size
    dataset = dataset.rebatch(pool) if chunked else dataset.ragged_batch(pool)
    dataset = dataset.map(sorted_batches).unbatch()
    if drop_remainder:
        dataset = dataset.filter(lambda _, y: y.nrows() == batch_size)
    dataset = dataset.map(padded)
    if shuffle:  # else the batches of a pool come shortest first
        dataset = dataset.shuffle(pool_batches, seed=seed, reshuffle_each_iteration=True)
    return dataset


def steps_per_epoch(dataset):
    """Batches per epoch of a dataset from `make_dataset` (`len(dataset)`)."""
    return int(dataset.cardinality())


def _check_utf8(raw, path, number):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}, line {number}: invalid UTF-8 ({error.reason} at byte {error.start} of "
            f"the line: {raw[max(0, error.start - 20) : error.end + 20]!r})."
        ) from None


def check(corpus):
    """Reads `corpus`'s files once and raises ValueError naming the file and line of the first
    problem: files of different lengths, invalid UTF-8, a TSV line without exactly one tab,
    a damaged or truncated gzip file, lines ending in CR alone.
    Returns the number of lines (pairs before dropping empty ones); None for TFDS."""
    if corpus.kind == "tfds":
        return None
    total = 0
    if corpus.kind == "parallel":
        for source_path, target_path in corpus.files:
            total += _check_parallel(source_path, target_path)
        return total
    for path in corpus.files:
        total += _read_lines(
            path, lambda raw, path, number: tsv_fields(_check_utf8(raw, path, number), path, number)
        )
    return total


def check_files(corpus):
    """The quick part of `check`, for a stream that is not counted before training: reads
    each gzip file to its end and checks each file's first MiB for CR-only line ends; raises
    ValueError naming the file. For TFDS, only notes the prepared files read."""
    if corpus.kind == "tfds":
        for name, split in corpus.files:
            for path in prepared_files(name, split, corpus.tfds_data_dir):
                note_read(path)
    for path in corpus.paths():
        note_read(path)
        check_file(path)


def _read_lines(path, check_line):
    """Calls `check_line(raw, path, number)` on each line of `path` (bytes without its line
    end); returns the number of lines. Raises ValueError naming the file when it is a damaged
    gzip file or has CR-only line ends."""
    note_read(path)
    check_head(read_head(path), path)
    number = 0
    try:
        with open_binary(path) as f:
            for number, raw in enumerate(f, start=1):
                check_line(raw.rstrip(b"\r\n"), path, number)
    except GZIP_ERRORS as error:
        raise gzip_error(path, error, f" (after line {number})") from None
    return number


def _check_parallel(source_path, target_path):
    lines = [_check_lines(path) for path in (source_path, target_path)]
    if lines[0] != lines[1]:
        raise ValueError(
            f"Parallel files differ in length: {source_path} has {lines[0]} lines but "
            f"{target_path} has {lines[1]}; line i of one must translate line i of the other."
        )
    return lines[0]


def _check_lines(path):
    """The number of lines of `path`; raises on invalid UTF-8."""
    return _read_lines(path, _check_utf8)


DEFAULT_SHUFFLE_BUFFER = 100_000
_UNBOUNDED = 1024  # the pools' sort key for max_length=None: lengths below this


def count_stream(corpus, source_tokenizer, target_tokenizer, max_length, num_shards=1, index=0):
    """One pass over this worker's shard of `corpus`: checks the files (bad lines raise
    ValueError with file and line), then tokenizes every pair.

    Returns a dict (JSON-serialisable): "pairs" (non-empty pairs read), "kept", "too_long",
    "empty" (no tokens on a side), "max_length", and "histogram" (list: how many kept pairs
    have max(|x|, |y| + 1) = i).
    """
    max_length = check_int("count_stream", "max_length", max_length, allow_none=True)
    check(corpus)
    lengths = corpus.pair_batches(num_shards, index).map(
        lambda s, t: (
            source_tokenizer.tokenize(s).row_lengths(),
            target_tokenizer.tokenize(t).row_lengths(),
        ),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=False,
    )
    counts = {"pairs": 0, "kept": 0, "too_long": 0, "empty": 0}
    histogram = np.zeros([0], np.int64)
    for source_lengths, target_lengths in lengths.as_numpy_iterator():
        keep, empty, too_long = usable(source_lengths, target_lengths, max_length)
        key = np.maximum(source_lengths[keep], target_lengths[keep] + 1)
        chunk = np.bincount(key, minlength=len(histogram))
        if len(chunk) > len(histogram):
            histogram = np.pad(histogram, (0, len(chunk) - len(histogram)))
        histogram += chunk
        counts["pairs"] += len(empty)
        counts["kept"] += int(keep.sum())
        counts["too_long"] += int(too_long.sum())
        counts["empty"] += int(empty.sum())
    counts["max_length"] = max_length
    counts["histogram"] = histogram.tolist()
    return counts


def report_drops(counts, what):
    """Logs (WARNING, logger "zoo.data") what the length filter dropped, as make_dataset does;
    raises ValueError when nothing is left."""
    if counts["pairs"] == 0:
        raise ValueError(f"{what}: the stream holds no sentence pairs.")
    report_usable(what, counts["pairs"], counts["kept"], counts["too_long"], counts["empty"],
                  counts["max_length"])  # fmt: skip


def stream_steps(
    counts,
    batch_size,
    batching=DEFAULT_BATCHING,
    bucket_width=DEFAULT_BUCKET_WIDTH,
    drop_remainder=False,
):
    """Batches per epoch of `stream_dataset` for the `counts` of `count_stream`."""
    if batching != "buckets":
        return epoch_steps([counts["kept"]], [batch_size], drop_remainder)
    longest = _longest(counts)
    boundaries = _bucket_boundaries(longest, bucket_width)
    sizes = _batch_sizes(boundaries, longest, batch_size, None)
    histogram = np.asarray(counts["histogram"], np.int64)
    return epoch_steps(bucket_counts(histogram, boundaries, len(sizes)), sizes, drop_remainder)


def _longest(counts):
    """The longest length key the kept pairs can have (max(|x|, |y| + 1))."""
    if counts.get("max_length") is not None:
        return counts["max_length"] + 1
    return max(len(counts["histogram"]) - 1, 1)


def stream_dataset(
    corpus,
    source_tokenizer,
    target_tokenizer,
    batch_size=DEFAULT_BATCH_SIZE,
    max_length=DEFAULT_MAX_LENGTH,
    shuffle=True,
    seed=0,
    batching=DEFAULT_BATCHING,
    pool_batches=DEFAULT_POOL_BATCHES,
    bucket_width=DEFAULT_BUCKET_WIDTH,
    shuffle_buffer=DEFAULT_SHUFFLE_BUFFER,
    counts=None,
    num_shards=1,
    index=0,
    drop_remainder=False,
    deterministic=True,
    steps=None,
    counter=None,
    subword_regularization=0.0,
):
    """A `tf.data.Dataset` of training batches read from `corpus` (a `StreamedCorpus`).

    The batches have `make_dataset`'s structure and rules (see its docstring for `batching`,
    `pool_batches`, `bucket_width`, `drop_remainder`); memory is bounded by the shuffle
    buffer and one pool, whatever the corpus' size.

    Args:
        corpus: a `zoo.data.StreamedCorpus`.
        shuffle_buffer: pairs held for shuffling (default 100,000): the pairs of an epoch
            are shuffled within this window, not across the whole corpus.
        counts: `count_stream(...)` of the same corpus, tokenizers, `max_length` and shard:
            gives the dataset its exact length (`len(dataset)`); None leaves it unknown.
            Needed with batching="buckets" and max_length=None (the bucket boundaries come
            from the longest pair).
        num_shards, index: this worker's shard (zoo.data.corpus).
        steps: yield exactly this many batches: the shard is read again (reshuffled) when it
            runs out first, and the rest of the pass is left out when it has more. Workers
            that train together need it: each step's all-reduce waits for every worker, so
            they must all run the same number of steps although their shards hold slightly
            different numbers of batches. None (default): one pass.
        counter: a `zoo.data.StreamCounter` for the same `max_length`: counts the pairs the
            pipeline reads, keeps and drops as it reads them (None: not counted).
        subword_regularization: 0 (default): the exact segmentation. ALPHA > 0: each pair's
            segmentation sampled as it is read (as `make_dataset`'s; the length filter and
            `counts` follow the exact segmentation, so the batches per epoch are the same).
        Other arguments: as `make_dataset`.

    Returns:
        `tf.data.Dataset` of `({"source_ids": (B, Ts), "target_ids": (B, Tt)},
        target_out_ids (B, Tt))`, int32, PAD_ID-padded.
    """
    batch_size = check_int("stream_dataset", "batch_size", batch_size)
    max_length = check_int("stream_dataset", "max_length", max_length, allow_none=True)
    pool_batches = check_int("stream_dataset", "pool_batches", pool_batches)
    shuffle_buffer = check_int("stream_dataset", "shuffle_buffer", shuffle_buffer)
    _check_batching(batching, None)
    alpha = check_subword_regularization("stream_dataset", subword_regularization, batching)
    samplers = sampling_tokenizers(source_tokenizer, target_tokenizer, alpha)
    if counter is not None and counter.max_length != max_length:
        raise ValueError(
            f"stream_dataset: the counter counts for max_length={counter.max_length}, "
            f"received max_length={max_length}."
        )
    if counts is not None and counts.get("max_length") != max_length:
        raise ValueError(
            f"stream_dataset: counts were made with max_length={counts.get('max_length')}, "
            f"received max_length={max_length}; count the stream again."
        )
    if batching == "buckets" and counts is None and max_length is None:
        raise ValueError(
            "stream_dataset: batching='buckets' with max_length=None needs the counts of "
            "count_stream (the longest pair sets the bucket boundaries)."
        )
    options = tf.data.Options()
    options.deterministic = bool(deterministic)
    # Each worker reads its own shard: tf.distribute must not shard it again.
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    dataset = corpus.records(num_shards, index).with_options(options)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
    dataset = _tokenized_stream(
        corpus, dataset, (source_tokenizer, target_tokenizer), max_length, deterministic,
        counter, samplers,
    )  # fmt: skip
    longest = _longest(counts) if counts is not None else (max_length or _UNBOUNDED) + 1
    if samplers is not None and max_length is None:
        longest = None  # sampled lengths are not bounded by the counts
    if batching == "pools":  # from the chunks: no step per pair (12k -> 34k pairs/s here)
        dataset = _sorted_pools(
            dataset, batch_size, pool_batches, longest, drop_remainder, shuffle, seed, chunked=True
        )
    else:  # unbatched ragged rows are rank-0 ragged tensors; padded_batch takes dense ones
        dataset = dataset.unbatch().map(lambda *pair: tf.nest.map_structure(tf.identity, pair))
    if batching == "buckets":
        dataset, _, _ = _bucketed(dataset, longest, batch_size, bucket_width, None, drop_remainder)
    elif batching == "plain":
        dataset = _plain_batches(dataset, batch_size, drop_remainder)
    if steps is not None:
        steps = check_int("stream_dataset", "steps", steps)
        dataset = dataset.repeat().take(steps)
    elif counts is not None:
        length = stream_steps(counts, batch_size, batching, bucket_width, drop_remainder)
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(length))
    return dataset.prefetch(tf.data.AUTOTUNE)


def worker_stream(corpus, source_tokenizer, target_tokenizer, *, batch_size, steps, **kwargs):
    """`stream_dataset` for multi-worker training: a function `input_context -> dataset`
    for `tf.distribute.Strategy.distribute_datasets_from_function` (or
    `zoo.training.PerWorkerDataset`).

    Worker `input_context.input_pipeline_id` of `input_context.num_input_pipelines` reads its
    own shard (by file when there are enough files, else every n-th line) in batches of
    `input_context.get_per_replica_batch_size(batch_size)` pairs, `steps` of them per epoch
    on every worker (see `stream_dataset`'s `steps`). `batch_size` is the global batch;
    `steps` is the epoch's number of global batches (`stream_steps` of the whole corpus'
    counts), so that an epoch reads each pair about once. The other keyword arguments are
    `stream_dataset`'s (`counts` excepted: a worker's shard has counts of its own).

    Example:
        make = worker_stream(corpus, src_tok, tgt_tok, batch_size=64, steps=454, seed=0)
        batches = strategy.distribute_datasets_from_function(make)
    """
    if "counts" in kwargs or "num_shards" in kwargs or "index" in kwargs:
        raise ValueError(
            "worker_stream: counts, num_shards and index come from the input context; "
            f"received {sorted({'counts', 'num_shards', 'index'} & set(kwargs))}."
        )
    batch_size = check_int("worker_stream", "batch_size", batch_size)
    steps = check_int("worker_stream", "steps", steps)

    def make(input_context):
        per_replica = input_context.get_per_replica_batch_size(batch_size)
        return stream_dataset(
            corpus,
            source_tokenizer,
            target_tokenizer,
            batch_size=per_replica,
            num_shards=input_context.num_input_pipelines,
            index=input_context.input_pipeline_id,
            steps=steps,
            **kwargs,
        )

    return make


def _tokenized_stream(corpus, records, tokenizers, max_length, deterministic, counter, samplers):
    """Raw records -> chunks (ragged batches of up to TOKENIZE_BATCH rows) of the usable pairs
    as `({"source_ids", "target_ids"}, target_out_ids)`: normalised, tokenized and filtered
    by length a chunk at a time (and counted, when `counter` is a `StreamCounter`); with
    `samplers`, the kept pairs take sampled segmentations (`sampled_ids`)."""

    def tokenize(*batch):
        sources, targets = corpus.pairs_of(*batch)
        x, y = tokenizers[0].tokenize(sources), tokenizers[1].tokenize(targets)
        source_lengths, target_lengths = x.row_lengths(), y.row_lengths()
        empty = (source_lengths == 0) | (target_lengths == 0)  # `usable`'s rule, in the graph
        too_long = tf.zeros_like(empty)
        if max_length is not None:
            too_long = ~empty & ((source_lengths > max_length) | (target_lengths > max_length))
        keep = ~(empty | too_long)
        if counter is not None:
            counter.add(empty, too_long)
        if samplers is not None:
            x = sampled_ids(sources, tokenizers[0], samplers[0], max_length, exact=x)
            y = sampled_ids(targets, tokenizers[1], samplers[1], max_length, exact=y)
        y_in, y_out = target_rows(y)
        x, y_in, y_out = (tf.ragged.boolean_mask(rows, keep) for rows in (x, y_in, y_out))
        return {"source_ids": x, "target_ids": y_in}, y_out

    return records.batch(TOKENIZE_BATCH).map(
        tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic
    )
