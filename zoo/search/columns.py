"""Buffers that a search loop fills one column per step, in constant time per step.

The search keeps, for every row (hypothesis) and step, its token, its back-pointer and its
attention weights: (rows, T, ...) buffers. Written with `ops.slice_update`, such a buffer
is copied whole at every step on the TensorFlow backend, so T steps cost O(T^2) (a
10,000-character input through the SavedModel took 389 s with greedy search, most of it
copying the attention buffer). Here, on the TensorFlow backend, the columns go into a
`tf.TensorArray` (one write of one column per step, stacked once after the loop, as
`keras.src.backend.tensorflow.rnn` keeps its outputs); other backends keep the buffer and
`ops.slice_update`.

    columns = new_columns(length, dtype, rows, tail)  # before the loop
    columns = write_column(columns, t, value)         # value (rows, *tail): column t, once
    buffer = stacked(columns)                         # after: (rows, length, *tail)

Every column is written at most once; columns never written are zeros (PAD_ID is 0). At
least one column must be written before `stacked` (the searches run their first step
before their loop), so that the TensorArray knows the rows' number.
"""

import keras
from keras import ops


def _tensorflow():
    return keras.backend.backend() == "tensorflow"


def new_columns(length, dtype, rows=None, tail=()):
    """An empty buffer of `length` columns of `dtype`: a TensorArray on TensorFlow, else
    zeros of shape (rows, length, *tail) (`rows` and `tail` are needed there only)."""
    if _tensorflow():
        import tensorflow as tf

        # What is known statically (always, under XLA) becomes the element shape.
        shape = [d if isinstance(d, int) else None for d in (rows, *tail)]
        return tf.TensorArray(
            dtype, size=length, element_shape=tf.TensorShape(shape), clear_after_read=False
        )
    return ops.zeros((rows, length, *tail), dtype=dtype)


def write_column(columns, t, value):
    """`columns` with column `t` set to `value` (rows, *tail)."""
    if _tensorflow():
        return columns.write(t, ops.cast(value, columns.dtype))
    start = [0, t] + [0] * (len(value.shape) - 1)
    return ops.slice_update(columns, start, ops.cast(value, columns.dtype)[:, None])


def stacked(columns):
    """The buffer as one tensor (rows, length, *tail); unwritten columns are zeros."""
    if _tensorflow():
        values = columns.stack()  # (length, rows, *tail)
        return ops.moveaxis(values, 0, 1)
    return columns
