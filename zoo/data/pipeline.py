"""tf.data pipelines from sentence pairs to model batches.

Each batch is `({"source_ids": (B, Ts), "target_ids": (B, Tt)}, target_out_ids (B, Tt))`,
int32, right-padded with PAD_ID, where for a target sentence with tokens y:
`target_ids = [START_ID] + y` and `target_out_ids = y + [END_ID]`. Source rows hold the
source tokens only (no START/END); `encode_source` makes the same rows for inference.
"""

import logging
import math

import numpy as np
import tensorflow as tf

from zoo.checks import check_int
from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.data.subword_sampling import (
    check_subword_regularization,
    sampled_chunks,
    sampling_tokenizers,
)
from zoo.text.preprocessor import TOKENIZE_BATCH, encode, token_lengths

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
            ALPHA; zoo.data.subword_sampling), in the tf.data graph. The pairs kept and the
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
