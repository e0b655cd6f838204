"""Subword regularisation (Kudo 2018) in the training pipelines: each time a pair is read,
its segmentation is sampled by the SentencePiece unigram model (`nbest_size=-1`, smoothing
`alpha`), inside the tf.data graph.

The pairs that train are those the exact (best) segmentation keeps, as without sampling, so
an epoch has the same number of batches; a sampled side longer than `max_length` tokens
takes its exact segmentation instead (which fits), so the length filter and the sorted
pools see the lengths of what is batched. Validation, test and translation use the exact
segmentation.
"""

import tensorflow as tf

from zoo.checks import check_non_negative_float
from zoo.text.preprocessor import TOKENIZE_BATCH


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
