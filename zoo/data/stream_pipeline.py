"""tf.data pipelines from a `StreamedCorpus`: the batches of `make_dataset`, in bounded memory.

`make_dataset` (zoo.data.pipeline) tokenizes a corpus held in lists, measures every sentence
up front and may shuffle the whole corpus. `stream_dataset` reads the files each epoch and
holds at most a shuffle buffer of sentence pairs and one sorted pool of batches:

    lines (TextLineDataset, this worker's shard)
      -> shuffle in a buffer of `shuffle_buffer` pairs (seeded: the same order every run)
      -> tokenize (in chunks, in parallel) -> drop pairs with an empty side or more than
         `max_length` tokens
      -> batches: sorted pools, length buckets or plain padded batches, as in make_dataset

The number of batches per epoch comes from `count_stream`: one pass that tokenizes every
pair and counts the kept and dropped ones (and the length histogram the buckets need), after
`zoo.data.streaming.check` has read the files for bad lines. A recipe caches its result
beside the vocabulary, so later runs start at once.
"""

import numpy as np
import tensorflow as tf

from zoo.checks import check_int
from zoo.data.pipeline import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_BATCHING,
    DEFAULT_BUCKET_WIDTH,
    DEFAULT_MAX_LENGTH,
    DEFAULT_POOL_BATCHES,
    TOKENIZE_BATCH,
    _batch_sizes,
    _bucket_boundaries,
    _bucketed,
    _check_batching,
    _plain_batches,
    _sorted_pools,
    bucket_counts,
    epoch_steps,
    report_usable,
    target_rows,
    usable,
)
from zoo.data.streaming import check
from zoo.data.subword_sampling import (
    check_subword_regularization,
    sampled_ids,
    sampling_tokenizers,
)

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
        num_shards, index: this worker's shard (zoo.data.streaming).
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
