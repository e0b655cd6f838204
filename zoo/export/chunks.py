"""`in_chunks`: a SavedModel endpoint run over chunks of its batch inside the graph, so that
a call of thousands of sentences searches a few dozen at a time (bounded memory, little
padding) and still returns one output per sentence, in input order."""

import tensorflow as tf

SENTENCES = tf.TensorSpec([None], tf.string, name="sentences")


def _padding_value(dtype):
    return tf.constant("", tf.string) if dtype == tf.string else tf.zeros([], dtype)


def in_chunks(function, sentences, lengths, chunk_size):
    """`function(sentences)` run on chunks of at most `chunk_size` sentences, in the graph.

    Args:
        function: `tf.string (b,) -> dict of (b, ...) tensors`; each row depends on its own
            sentence only (as the translator's graph functions do).
        sentences: `tf.string` (B,).
        lengths: (B,) int: the sentences' lengths (source tokens); the chunks are cut from
            the sentences sorted longest first, so that a chunk pads little.
        chunk_size: a Python int >= 1.
    Returns:
        the dict `function(sentences)` would return: every output's rows in input order,
        its other axes padded ("" or 0) to the longest chunk's, as one call pads them to
        the longest sentence's. A batch of at most `chunk_size` sentences is one chunk;
        a larger one of B into n = ceil(B / chunk_size) chunks of ceil(B / n) sentences
        (the last one smaller). The outputs take the memory one call would (the attention,
        (B, T, Ts), grows with B times the longest output and source): the search takes a
        chunk's.
    """
    # Traced once: its outputs' keys, dtypes and ranks make the loop's arrays, and the loop
    # calls the traced function.
    traced = tf.function(function, autograph=False).get_concrete_function(SENTENCES)
    spec = traced.structured_outputs
    count = tf.size(sentences)
    order = tf.argsort(lengths, direction="DESCENDING", stable=True)
    ordered = tf.gather(sentences, order)
    chunks = tf.maximum((count + chunk_size - 1) // chunk_size, 1)  # an empty batch: 1
    size = (count + chunks - 1) // chunks
    arrays = {key: tf.TensorArray(value.dtype, size=chunks, infer_shape=False)
              for key, value in spec.items()}  # fmt: skip
    widths = {key: tf.zeros([value.shape.rank - 1], tf.int32) for key, value in spec.items()}

    def run_chunk(index, arrays, widths):
        start = index * size
        outputs = traced(ordered[start : tf.minimum(start + size, count)])
        arrays = {key: arrays[key].write(index, outputs[key]) for key in arrays}
        widths = {key: tf.maximum(widths[key], tf.shape(outputs[key])[1:]) for key in widths}
        return index + 1, arrays, widths

    _, arrays, widths = tf.while_loop(
        lambda index, *_: index < chunks, run_chunk, (tf.constant(0), arrays, widths)
    )

    def pad_chunk(index, padded):
        written = {}
        for key, array in padded.items():
            value = arrays[key].read(index)
            missing = widths[key] - tf.shape(value)[1:]
            paddings = tf.stack([tf.zeros_like(missing), missing], axis=1)
            paddings = tf.concat([tf.zeros([1, 2], tf.int32), paddings], axis=0)
            value = tf.pad(value, paddings, constant_values=_padding_value(value.dtype))
            written[key] = array.write(index, value)
        return index + 1, written

    padded = {key: tf.TensorArray(value.dtype, size=chunks, infer_shape=False)
              for key, value in spec.items()}  # fmt: skip
    _, padded = tf.while_loop(lambda index, *_: index < chunks, pad_chunk, (tf.constant(0), padded))
    back = tf.math.invert_permutation(order)
    results = {}
    for key, value in spec.items():
        joined = padded[key].concat()
        joined = tf.reshape(joined, tf.concat([[count], widths[key]], axis=0))
        results[key] = tf.ensure_shape(tf.gather(joined, back), value.shape)
    return results
