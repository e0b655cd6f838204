"""LuongAttention against the NumPy version of Luong et al. 2015 eq. (7)-(9)."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from zoo.layers.luong_attention import LuongAttention
from zoo.testing import reference_attention as ref
from zoo.testing import run_layer_test, to_numpy

B, TS, DQ, DM, TQ, UNITS, MAX_LEN = 4, 6, 5, 7, 3, 8, 9
LENGTHS = [6, 3, 1, 0]  # ragged, one fully masked row
SCORES = ["dot", "general", "concat", "location"]


def kwargs_for(score):
    return {
        "dot": {"score": "dot"},
        "general": {"score": "general"},
        "concat": {"score": "concat", "units": UNITS},
        "location": {"score": "location", "max_length": MAX_LEN},
    }[score]


def inputs(score, seed, tq=None, lengths=LENGTHS):
    dm = DQ if score == "dot" else DM
    return ref.random_inputs(seed, B, TS, DQ, dm, tq=tq, lengths=lengths)


def built_layer(score, q, m, mask, seed=1):
    layer = LuongAttention(**kwargs_for(score))
    layer(q, m, mask=mask)
    ref.randomize_weights(layer, seed)
    return layer


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("tq", [None, TQ])
@pytest.mark.parametrize("use_mask", [True, False])
def test_matches_numpy_reference(score, tq, use_mask):
    q, m, mask = inputs(score, 0, tq)
    mask = mask if use_mask else None
    layer = built_layer(score, q, m, mask)
    context, weights = layer(q, m, mask=mask)
    exp_c, exp_w = ref.luong_attention(q, m, mask, ref.weights_by_name(layer), score)
    assert tuple(context.shape) == exp_c.shape and tuple(weights.shape) == exp_w.shape
    np.testing.assert_allclose(to_numpy(weights), exp_w, atol=1e-5)
    np.testing.assert_allclose(to_numpy(context), exp_c, atol=1e-5)


@pytest.mark.parametrize("score", SCORES)
def test_weight_names_and_shapes(score):
    q, m, mask = inputs(score, 0)
    layer = built_layer(score, q, m, mask)
    shapes = {v.name: tuple(v.shape) for v in layer.weights}
    assert (
        shapes
        == {
            "dot": {},
            "general": {"W_a": (DQ, DM)},
            "concat": {"W_a": (DQ + DM, UNITS), "v_a": (UNITS,)},
            "location": {"W_a": (DQ, MAX_LEN)},
        }[score]
    )


def test_concat_units_default_to_query_size():
    q, m, mask = inputs("concat", 0)
    layer = LuongAttention(score="concat")
    layer(q, m, mask=mask)
    assert {v.name: tuple(v.shape) for v in layer.weights} == {
        "W_a": (DQ + DM, DQ),
        "v_a": (DQ,),
    }


@pytest.mark.parametrize("score", SCORES)
def test_single_steps_equal_all_steps(score):
    q, m, mask = inputs(score, 2, TQ)
    layer = built_layer(score, q, m, mask)
    context, weights = layer(q, m, mask=mask)
    keys = layer.compute_keys(m)
    for t in range(TQ):
        c_t, w_t = layer(q[:, t], m, mask=mask, keys=keys)
        np.testing.assert_allclose(to_numpy(c_t), to_numpy(context)[:, t], atol=1e-6)
        np.testing.assert_allclose(to_numpy(w_t), to_numpy(weights)[:, t], atol=1e-6)


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("tq", [None, TQ])
def test_precomputed_keys_give_the_same_output(score, tq):
    q, m, mask = inputs(score, 3, tq)
    layer = built_layer(score, q, m, mask)
    plain = layer(q, m, mask=mask)
    with_keys = layer(q, m, mask=mask, keys=layer.compute_keys(m))
    for x, y in zip(plain, with_keys, strict=True):
        np.testing.assert_allclose(to_numpy(x), to_numpy(y), atol=1e-5)


@pytest.mark.parametrize("score", SCORES)
def test_mask_invariants(score):
    q, m, mask = inputs(score, 4, TQ)
    layer = built_layer(score, q, m, mask)
    context, weights = (to_numpy(x) for x in layer(q, m, mask=mask))
    assert np.all(np.isfinite(context)) and np.all(np.isfinite(weights))
    assert np.all(weights[~np.broadcast_to(mask[:, None, :], weights.shape)] == 0.0)
    np.testing.assert_allclose(weights.sum(-1)[:3], 1.0, atol=1e-6)
    assert np.all(weights[3] == 0.0) and np.all(context[3] == 0.0)
    m2 = np.where(mask[:, :, None], m, 100.0).astype("float32")
    context2, weights2 = (to_numpy(x) for x in layer(q, m2, mask=mask))
    np.testing.assert_allclose(weights2, weights, atol=1e-6)
    np.testing.assert_allclose(context2, context, atol=1e-5)


def test_large_scores_stay_finite():
    # Dot scores of ~1e4 would overflow a naive exp; the masked softmax must stay exact.
    q, m, mask = inputs("dot", 5, TQ)
    q, m = q * 30.0, m * 30.0
    context, weights = (to_numpy(x) for x in LuongAttention(score="dot")(q, m, mask=mask))
    exp_c, exp_w = ref.luong_attention(q, m, mask, {}, "dot")
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(context))
    np.testing.assert_allclose(weights, exp_w, atol=1e-5)


@pytest.mark.parametrize("score", ["general", "concat", "location"])
def test_gradients_reach_every_weight(score):
    q, m, mask = inputs(score, 5, TQ)
    layer = built_layer(score, q, m, mask)
    r = np.random.default_rng(0).standard_normal((B, TQ, DM)).astype("float32")
    with tf.GradientTape() as tape:
        context, _ = layer(q, m, mask=mask)
        loss = tf.reduce_sum(context * r)
    grads = tape.gradient(loss, layer.trainable_variables)
    assert grads
    for v, g in zip(layer.trainable_variables, grads, strict=True):
        assert g is not None, v.name
        assert np.all(np.isfinite(g.numpy())) and np.any(g.numpy() != 0), v.name
    if score == "location":
        # Only the first Ts columns of W_a are used.
        g = next(g for v, g in zip(layer.trainable_variables, grads, strict=True))
        assert np.all(g.numpy()[:, TS:] == 0)


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("tq", [None, TQ])
def test_harness(score, tq):
    q, m, mask = inputs(score, 6, tq)
    lead = (B,) if tq is None else (B, tq)
    dm = m.shape[-1]
    run_layer_test(
        LuongAttention,
        kwargs_for(score),
        {"query": q, "memory": m, "mask": mask},
        expected_output_shape=(lead + (dm,), lead + (TS,)),
        expected_num_trainable_weights={"dot": 0, "general": 1, "concat": 2, "location": 1}[score],
        run_training_check=score != "dot",
        run_gradient_check=score != "dot",
    )


def test_unknown_score_raises():
    with pytest.raises(ValueError, match="bilinear"):
        LuongAttention(score="bilinear")


@pytest.mark.parametrize(
    "kwargs",
    [{"score": "general", "units": 8}, {"score": "dot", "max_length": 5},
     {"score": "concat", "max_length": 5}],
)  # fmt: skip
def test_options_the_score_does_not_use_are_refused(kwargs):
    with pytest.raises(ValueError, match="only"):
        LuongAttention(**kwargs)


def test_location_without_max_length_raises():
    with pytest.raises(ValueError, match="max_length"):
        LuongAttention(score="location")


def test_location_gives_no_weight_past_max_length():
    # A source longer than max_length: the positions past it get zero weight, the others
    # the NumPy reference's (softmax over the addressable positions only).
    q, m, mask = inputs("location", 0)
    mask = np.ones_like(mask)
    layer = LuongAttention(score="location", max_length=TS - 2)
    context, weights = layer(q, m, mask=mask)
    w = {"W_a": keras.ops.convert_to_numpy(layer.W_a)}
    ref_context, ref_weights = ref.luong_attention(q, m, mask, w, "location")
    np.testing.assert_array_equal(np.asarray(weights)[..., TS - 2 :], 0.0)
    np.testing.assert_allclose(np.asarray(weights), ref_weights, atol=1e-6)
    np.testing.assert_allclose(np.asarray(context), ref_context, atol=1e-5)
    np.testing.assert_allclose(np.asarray(weights).sum(-1), 1.0, atol=1e-6)


def test_dot_with_unequal_dims_raises():
    q, m, mask = ref.random_inputs(0, B, TS, DQ, DQ + 1)
    with pytest.raises(ValueError, match="dot"):
        LuongAttention(score="dot")(q, m, mask=mask)


@pytest.mark.parametrize("bad_shape", [(B,), (B, 2, 3, DQ)])
def test_wrong_rank_query_raises(bad_shape):
    _, m, mask = inputs("general", 0)
    with pytest.raises(ValueError, match="query"):
        LuongAttention(score="general")(np.zeros(bad_shape, "float32"), m, mask=mask)


def test_wrong_mask_shape_raises():
    q, m, _ = inputs("general", 0)
    with pytest.raises(ValueError, match="mask"):
        LuongAttention(score="general")(q, m, mask=np.ones((B, TS + 1), bool))


@settings(max_examples=15, deadline=None)
@given(
    batch=st.integers(1, 3),
    ts=st.integers(1, 6),
    tq=st.one_of(st.none(), st.integers(1, 3)),
    dq=st.integers(1, 4),
    dm=st.integers(1, 4),
    score=st.sampled_from(SCORES),
    data=st.data(),
)
def test_property_shapes_finite_and_reference(batch, ts, tq, dq, dm, score, data):
    lengths = data.draw(st.lists(st.integers(0, ts), min_size=batch, max_size=batch))
    dm = dq if score == "dot" else dm
    q, m, mask = ref.random_inputs(7, batch, ts, dq, dm, tq=tq, lengths=lengths)
    kwargs = {"score": score}
    if score == "location":
        kwargs["max_length"] = data.draw(st.integers(ts, ts + 3))
    if score == "concat":
        kwargs["units"] = data.draw(st.integers(1, 4))
    layer = LuongAttention(**kwargs)
    context, weights = layer(q, m, mask=mask)
    lead = (batch,) if tq is None else (batch, tq)
    assert tuple(context.shape) == lead + (dm,) and tuple(weights.shape) == lead + (ts,)
    context, weights = to_numpy(context), to_numpy(weights)
    assert np.all(np.isfinite(context)) and np.all(np.isfinite(weights))
    exp_c, exp_w = ref.luong_attention(q, m, mask, ref.weights_by_name(layer), score)
    np.testing.assert_allclose(weights, exp_w, atol=1e-5)
    np.testing.assert_allclose(context, exp_c, atol=1e-5)


def test_registered_for_safe_loading():
    assert keras.saving.get_registered_object("zoo>LuongAttention") is LuongAttention


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"score": "concat", "units": 0}, "units must be an int >= 1 or None"),
        ({"score": "concat", "units": True}, "units must be an int >= 1 or None"),
        ({"score": "location", "max_length": True}, "max_length"),
        ({"score": "location", "max_length": 4.0}, "max_length"),
    ],
)
def test_bad_sizes_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LuongAttention(**kwargs)
