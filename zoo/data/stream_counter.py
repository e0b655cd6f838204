"""Counts of the pairs a training stream read, kept and dropped, taken while it streams."""

import tensorflow as tf

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
