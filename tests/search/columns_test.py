"""Tests of zoo/search/columns.py (column buffers written in constant time per step) and
of the searches built on them: no step copies a whole buffer."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops
from search_toy import toy_model

from zoo.search import sample, search, search_function
from zoo.search.columns import new_columns, stacked, write_column


def _fill(columns, order, values):
    for t in order:
        columns = write_column(columns, t, values[:, t])
    return stacked(columns)


@pytest.mark.parametrize("traced", [False, True])
def test_columns_equal_a_buffer_filled_by_slices(traced):
    """Columns written in any order, some never: the buffer a slice update would give, with
    zeros where nothing was written; inside a while loop too."""
    values = np.arange(3 * 6 * 2, dtype="float32").reshape(3, 6, 2) + 1
    expected = np.zeros_like(values)
    order = [4, 0, 1, 2]
    for t in order:
        expected[:, t] = values[:, t]

    def run():
        columns = write_column(new_columns(6, "float32", 3, (2,)), order[0], values[:, order[0]])

        def body(i, columns):
            return i + 1, write_column(columns, order_t[i], tf.gather(values_t, order_t[i], axis=1))

        order_t, values_t = tf.constant(order[1:]), tf.constant(values)
        _, columns = tf.while_loop(lambda i, c: i < len(order) - 1, body, (0, columns))
        return stacked(columns)

    got = tf.function(run)() if traced else run()
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(
        _fill(new_columns(6, "float32", 3, (2,)), order, values), expected
    )


def _loop_op_types(function):
    """The op types inside the while loops of a traced function's graph."""
    graph = function.get_concrete_function().graph
    library = {f.signature.name: f for f in graph.as_graph_def().library.function}
    bodies = [
        op.get_attr("body").name
        for op in graph.get_operations()
        if op.type in ("While", "StatelessWhile")
    ]
    seen, types = set(), set()
    while bodies:
        name = bodies.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in library[name].node_def:
            types.add(node.op)
            if node.op in ("While", "StatelessWhile"):
                bodies.append(node.attr["body"].func.name)
    return types


@pytest.mark.parametrize("beam_size", [1, 3])
def test_no_search_step_copies_a_whole_buffer(beam_size):
    """Before, every step rewrote the (rows, T_max, Ts) attention buffer and the token and
    back-pointer buffers with a dynamic update slice: O(T^2) for T steps."""
    model = toy_model(seed=1)
    run = search_function(model, beam_size=beam_size, return_attention=True)
    types = _loop_op_types(run)
    assert "TensorListSetItem" in types  # the columns are written...
    assert "XlaDynamicUpdateSlice" not in types  # ...never copied whole (ops.slice_update)
    source = np.array([[4, 5, 6], [6, 0, 0]], "int32")
    assert np.asarray(run(source).ids).shape[0] == 2

    generator = keras.random.SeedGenerator(1)  # a variable: made outside the traced function
    sampler = tf.function(
        lambda ids: sample(model, ids, seed=generator).ids,
        input_signature=[tf.TensorSpec((None, None), tf.int32)],
    )
    sampler_types = _loop_op_types(sampler)
    assert "TensorListSetItem" in sampler_types
    assert "XlaDynamicUpdateSlice" not in sampler_types


def test_an_empty_batch_searches_and_samples_eagerly():
    """B = 0, eagerly (before: ops.max of an empty tensor raised)."""
    model = toy_model(seed=1)
    empty = ops.zeros((0, 4), "int32")
    for beam_size in (1, 2):
        result = search(model, empty, beam_size=beam_size)
        assert tuple(result.ids.shape)[0] == 0 and tuple(result.attention.shape)[0] == 0
    assert tuple(sample(model, empty, seed=0).ids.shape)[0] == 0
