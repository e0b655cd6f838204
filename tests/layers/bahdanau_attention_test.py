"""BahdanauAttention against the NumPy version of Bahdanau et al. 2014 eq. (5)-(6)."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from zoo.layers.bahdanau_attention import BahdanauAttention
from zoo.testing import reference_attention as ref
from zoo.testing import run_layer_test, to_numpy

B, TS, DQ, DM, TQ, UNITS = 4, 6, 5, 7, 3, 8
LENGTHS = [6, 3, 1, 0]  # ragged, one fully masked row


def built_layer(normalize, query, memory, mask, seed=1):
    layer = BahdanauAttention(units=UNITS, normalize=normalize)
    layer(query, memory, mask=mask)
    ref.randomize_weights(layer, seed)
    return layer


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("tq", [None, TQ])
@pytest.mark.parametrize("use_mask", [True, False])
def test_matches_numpy_reference(normalize, tq, use_mask):
    q, m, mask = ref.random_inputs(0, B, TS, DQ, DM, tq=tq, lengths=LENGTHS)
    mask = mask if use_mask else None
    layer = built_layer(normalize, q, m, mask)
    context, weights = layer(q, m, mask=mask)
    exp_c, exp_w = ref.bahdanau_attention(q, m, mask, ref.weights_by_name(layer), normalize)
    assert tuple(context.shape) == exp_c.shape and tuple(weights.shape) == exp_w.shape
    np.testing.assert_allclose(to_numpy(weights), exp_w, atol=1e-5)
    np.testing.assert_allclose(to_numpy(context), exp_c, atol=1e-5)


@pytest.mark.parametrize("normalize", [False, True])
def test_weight_names_and_shapes(normalize):
    q, m, mask = ref.random_inputs(0, B, TS, DQ, DM, lengths=LENGTHS)
    layer = built_layer(normalize, q, m, mask)
    shapes = {v.name: tuple(v.shape) for v in layer.weights}
    expected = {"W_a": (DQ, UNITS), "U_a": (DM, UNITS), "v_a": (UNITS,)}
    if normalize:
        expected.update({"g": (), "b": (UNITS,)})
    assert shapes == expected


def test_normalized_score_is_invariant_to_the_scale_of_v_a():
    # Weight normalisation: only the direction of v_a matters, its length is g.
    q, m, mask = ref.random_inputs(0, B, TS, DQ, DM, tq=TQ, lengths=LENGTHS)
    layer = built_layer(True, q, m, mask)
    before = [to_numpy(x) for x in layer(q, m, mask=mask)]
    v_a = next(v for v in layer.weights if v.name == "v_a")
    v_a.assign(to_numpy(v_a) * 3.0)
    after = [to_numpy(x) for x in layer(q, m, mask=mask)]
    for x, y in zip(before, after, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-5)


@pytest.mark.parametrize("normalize", [False, True])
def test_single_steps_equal_all_steps(normalize):
    q, m, mask = ref.random_inputs(2, B, TS, DQ, DM, tq=TQ, lengths=LENGTHS)
    layer = built_layer(normalize, q, m, mask)
    context, weights = layer(q, m, mask=mask)
    keys = layer.compute_keys(m)
    for t in range(TQ):
        c_t, w_t = layer(q[:, t], m, mask=mask, keys=keys)
        np.testing.assert_allclose(to_numpy(c_t), to_numpy(context)[:, t], atol=1e-6)
        np.testing.assert_allclose(to_numpy(w_t), to_numpy(weights)[:, t], atol=1e-6)


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("tq", [None, TQ])
def test_precomputed_keys_give_the_same_output(normalize, tq):
    q, m, mask = ref.random_inputs(3, B, TS, DQ, DM, tq=tq, lengths=LENGTHS)
    layer = built_layer(normalize, q, m, mask)
    plain = layer(q, m, mask=mask)
    with_keys = layer(q, m, mask=mask, keys=layer.compute_keys(m))
    for x, y in zip(plain, with_keys, strict=True):
        np.testing.assert_allclose(to_numpy(x), to_numpy(y), atol=1e-6)


@pytest.mark.parametrize("normalize", [False, True])
def test_mask_invariants(normalize):
    q, m, mask = ref.random_inputs(4, B, TS, DQ, DM, tq=TQ, lengths=LENGTHS)
    layer = built_layer(normalize, q, m, mask)
    context, weights = (to_numpy(x) for x in layer(q, m, mask=mask))
    assert np.all(np.isfinite(context)) and np.all(np.isfinite(weights))
    assert np.all(weights[~np.broadcast_to(mask[:, None, :], weights.shape)] == 0.0)
    sums = weights.sum(-1)
    np.testing.assert_allclose(sums[:3], 1.0, atol=1e-6)
    # Row 3 has no unmasked position: zero weights and zero context, no NaN.
    assert np.all(weights[3] == 0.0) and np.all(context[3] == 0.0)
    # Changing masked memory does not change anything.
    m2 = np.where(mask[:, :, None], m, 100.0).astype("float32")
    context2, weights2 = (to_numpy(x) for x in layer(q, m2, mask=mask))
    np.testing.assert_allclose(weights2, weights, atol=1e-6)
    np.testing.assert_allclose(context2, context, atol=1e-5)


@pytest.mark.parametrize("normalize", [False, True])
def test_gradients_reach_every_weight(normalize):
    q, m, mask = ref.random_inputs(5, B, TS, DQ, DM, tq=TQ, lengths=LENGTHS)
    layer = built_layer(normalize, q, m, mask)
    r = np.random.default_rng(0).standard_normal((B, TQ, DM)).astype("float32")
    with tf.GradientTape() as tape:
        context, _ = layer(q, m, mask=mask)
        loss = tf.reduce_sum(context * r)
    grads = tape.gradient(loss, layer.trainable_variables)
    assert len(grads) == (5 if normalize else 3)
    for v, g in zip(layer.trainable_variables, grads, strict=True):
        assert g is not None, v.name
        assert np.all(np.isfinite(g.numpy())) and np.any(g.numpy() != 0), v.name


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("tq", [None, TQ])
def test_harness(normalize, tq):
    q, m, mask = ref.random_inputs(6, B, TS, DQ, DM, tq=tq, lengths=LENGTHS)
    lead = (B,) if tq is None else (B, tq)
    run_layer_test(
        BahdanauAttention,
        {"units": UNITS, "normalize": normalize},
        {"query": q, "memory": m, "mask": mask},
        expected_output_shape=(lead + (DM,), lead + (TS,)),
        expected_num_trainable_weights=5 if normalize else 3,
    )


def test_harness_with_precomputed_keys_argument():
    q, m, mask = ref.random_inputs(6, B, TS, DQ, DM, tq=TQ, lengths=LENGTHS)
    layer = built_layer(False, q, m, mask)
    keys = to_numpy(layer.compute_keys(m))
    assert keys.shape == (B, TS, UNITS)
    run_layer_test(
        BahdanauAttention,
        {"units": UNITS},
        {"query": q, "memory": m, "mask": mask, "keys": keys},
        expected_output_shape=((B, TQ, DM), (B, TQ, TS)),
        run_training_check=False,
        run_gradient_check=False,  # U_a gets no gradient when the keys are given
        run_saving_check=False,
    )


@pytest.mark.parametrize("bad_shape", [(B,), (B, 2, 3, DQ)])
def test_wrong_rank_query_raises(bad_shape):
    _, m, mask = ref.random_inputs(0, B, TS, DQ, DM, lengths=LENGTHS)
    with pytest.raises(ValueError, match="query"):
        BahdanauAttention(units=UNITS)(np.zeros(bad_shape, "float32"), m, mask=mask)


def test_wrong_rank_memory_raises():
    with pytest.raises(ValueError, match="memory"):
        BahdanauAttention(units=UNITS)(np.zeros((B, DQ), "float32"), np.zeros((B, DM), "float32"))


@pytest.mark.parametrize("units", [0, -3])
def test_bad_units_raise(units):
    with pytest.raises(ValueError, match="units"):
        BahdanauAttention(units=units)


@settings(max_examples=15, deadline=None)
@given(
    batch=st.integers(1, 3),
    ts=st.integers(1, 6),
    tq=st.one_of(st.none(), st.integers(1, 3)),
    dq=st.integers(1, 4),
    dm=st.integers(1, 4),
    units=st.integers(1, 4),
    normalize=st.booleans(),
    data=st.data(),
)
def test_property_shapes_finite_and_reference(batch, ts, tq, dq, dm, units, normalize, data):
    lengths = data.draw(st.lists(st.integers(0, ts), min_size=batch, max_size=batch))
    q, m, mask = ref.random_inputs(7, batch, ts, dq, dm, tq=tq, lengths=lengths)
    layer = BahdanauAttention(units=units, normalize=normalize)
    context, weights = layer(q, m, mask=mask)
    lead = (batch,) if tq is None else (batch, tq)
    assert tuple(context.shape) == lead + (dm,) and tuple(weights.shape) == lead + (ts,)
    context, weights = to_numpy(context), to_numpy(weights)
    assert np.all(np.isfinite(context)) and np.all(np.isfinite(weights))
    exp_c, exp_w = ref.bahdanau_attention(q, m, mask, ref.weights_by_name(layer), normalize)
    np.testing.assert_allclose(weights, exp_w, atol=1e-5)
    np.testing.assert_allclose(context, exp_c, atol=1e-5)


def test_registered_for_safe_loading():
    assert keras.saving.get_registered_object("zoo>BahdanauAttention") is BahdanauAttention


def test_wrong_mask_length_raises():
    q, m, _ = ref.random_inputs(0, B, TS, DQ, DM)
    with pytest.raises(ValueError, match="mask"):
        BahdanauAttention(units=UNITS)(q, m, mask=np.ones((B, TS + 1), bool))


def test_keys_of_an_unbuilt_layer_are_a_clear_error():
    from zoo.layers import LocalAttention, LuongAttention

    memory = np.zeros((1, 3, 4), "float32")
    for layer in (BahdanauAttention(units=5), LuongAttention("general"), LocalAttention()):
        with pytest.raises(ValueError, match=r"compute_keys needs the layer's weights.*unbuilt"):
            layer.compute_keys(memory)
    layer = BahdanauAttention(units=5)
    layer(np.zeros((1, 2), "float32"), memory)
    assert tuple(layer.compute_keys(memory).shape) == (1, 3, 5)
