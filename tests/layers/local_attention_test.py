"""LocalAttention (local-m, local-p) against the NumPy version of Luong et al. 2015 §3.2."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from zoo.layers.local_attention import LocalAttention
from zoo.testing import reference_attention as ref
from zoo.testing import run_layer_test, to_numpy

B, TS, DQ, DM, TQ, UNITS, D = 4, 12, 5, 7, 4, 6, 2
LENGTHS = [12, 7, 2, 0]  # ragged, one fully masked row
STEP_POSITIONS = np.array([3, 9, 5, 1])  # t for a 2-D query; clipped to S - 1 by local-m
MODES = ["monotonic", "predictive"]
SCORES = ["dot", "general", "concat"]
CASES = [(mode, score) for mode in MODES for score in SCORES]


def kwargs_for(mode, score, window=D):
    kwargs = {"window": window, "mode": mode, "score": score}
    if mode == "predictive" or score == "concat":
        kwargs["units"] = UNITS
    return kwargs


def inputs(score, seed, tq=None, lengths=LENGTHS, ts=TS):
    dm = DQ if score == "dot" else DM
    return ref.random_inputs(seed, B, ts, DQ, dm, tq=tq, lengths=lengths)


def positions_for(mode, tq):
    return STEP_POSITIONS if (mode == "monotonic" and tq is None) else None


def built_layer(mode, score, q, m, mask, seed=1, window=D):
    layer = LocalAttention(**kwargs_for(mode, score, window))
    layer(q, m, mask=mask, positions=positions_for(mode, None if q.ndim == 2 else q.shape[1]))
    ref.randomize_weights(layer, seed, scale=1.0)
    return layer


def call(layer, q, m, mask, mode, **kw):
    tq = None if q.ndim == 2 else q.shape[1]
    kw.setdefault("positions", positions_for(mode, tq))
    return tuple(to_numpy(x) for x in layer(q, m, mask=mask, **kw))


@pytest.mark.parametrize("mode,score", CASES)
@pytest.mark.parametrize("tq", [None, TQ])
def test_matches_numpy_reference(mode, score, tq):
    q, m, mask = inputs(score, 0, tq)
    layer = built_layer(mode, score, q, m, mask)
    context, weights = call(layer, q, m, mask, mode)
    exp_c, exp_w, _ = ref.local_attention(
        q, m, mask, ref.weights_by_name(layer), D, mode, score, positions_for(mode, tq)
    )
    assert context.shape == exp_c.shape and weights.shape == exp_w.shape
    np.testing.assert_allclose(weights, exp_w, atol=1e-5)
    np.testing.assert_allclose(context, exp_c, atol=1e-5)


@pytest.mark.parametrize("score", SCORES)
def test_monotonic_explicit_positions_3d(score):
    q, m, mask = inputs(score, 1, TQ)
    layer = built_layer("monotonic", score, q, m, mask)
    positions = np.array([[0, 2, 4, 6], [1, 1, 8, 11], [5, 0, 3, 2], [0, 1, 2, 3]])
    context, weights = call(layer, q, m, mask, "monotonic", positions=positions)
    exp_c, exp_w, _ = ref.local_attention(
        q, m, mask, ref.weights_by_name(layer), D, "monotonic", score, positions
    )
    np.testing.assert_allclose(weights, exp_w, atol=1e-5)
    np.testing.assert_allclose(context, exp_c, atol=1e-5)
    # The default for a 3-D query is t = 0..Tq-1.
    default = call(layer, q, m, mask, "monotonic")
    explicit = call(layer, q, m, mask, "monotonic", positions=np.tile(np.arange(TQ), (B, 1)))
    for x, y in zip(default, explicit, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-6)


@pytest.mark.parametrize("mode,score", [("predictive", "concat"), ("monotonic", "general")])
def test_weight_names_and_shapes(mode, score):
    q, m, mask = inputs(score, 0)
    layer = built_layer(mode, score, q, m, mask)
    shapes = {v.name: tuple(v.shape) for v in layer.weights}
    expected = {"general": {"W_a": (DQ, DM)}, "concat": {"W_a": (DQ + DM, UNITS), "v_a": (UNITS,)}}[
        score
    ]
    if mode == "predictive":
        expected = {**expected, "W_p": (DQ, UNITS), "v_p": (UNITS,)}
    assert shapes == expected


@pytest.mark.parametrize("tq", [None, TQ])
@pytest.mark.parametrize("score", SCORES)
def test_monotonic_window_invariants(score, tq):
    q, m, mask = inputs(score, 2, tq)
    layer = built_layer("monotonic", score, q, m, mask)
    context, weights = call(layer, q, m, mask, "monotonic")
    weights = weights if tq else weights[:, None]
    context = context if tq else context[:, None]
    t = STEP_POSITIONS[:, None] if tq is None else np.tile(np.arange(tq), (B, 1))
    lengths = np.array(LENGTHS)
    p = np.minimum(t, lengths[:, None] - 1)
    s = np.arange(TS)[None, None, :]
    inside = (np.abs(s - p[:, :, None]) <= D) & mask[:, None, :]
    assert np.all(weights[~inside] == 0.0), "weight outside [p_t - D, p_t + D] or masked"
    np.testing.assert_allclose(weights.sum(-1)[:3], 1.0, atol=1e-6)
    assert np.all(weights[3] == 0.0) and np.all(context[3] == 0.0)
    assert np.all(np.isfinite(context))


@pytest.mark.parametrize("tq", [None, TQ])
@pytest.mark.parametrize("score", SCORES)
def test_predictive_weights_are_window_softmax_times_gaussian(score, tq):
    q, m, mask = inputs(score, 3, tq)
    layer = built_layer("predictive", score, q, m, mask)
    context, weights = call(layer, q, m, mask, "predictive")
    weights = weights if tq else weights[:, None]
    q3 = q if tq else q[:, None]
    w = ref.weights_by_name(layer)
    lengths = mask.sum(1).astype(np.float64)
    p = lengths[:, None] / (1 + np.exp(-(np.tanh(q3 @ w["W_p"]) @ w["v_p"])))  # S sigmoid(.)
    s = np.arange(TS)[None, None, :]
    inside = (np.abs(s - p[:, :, None]) <= D) & mask[:, None, :]
    assert np.all(weights[~inside] == 0.0)
    gauss = np.exp(-((s - p[:, :, None]) ** 2) / (2 * (D / 2) ** 2))
    softmax = np.where(inside, weights / gauss, 0.0)
    np.testing.assert_allclose(softmax.sum(-1)[:3], 1.0, atol=1e-5)
    # Not a distribution: the Gaussian makes the weights sum to less than one.
    assert np.all(weights.sum(-1)[:3] < 1.0)
    scores = ref.luong_scores(score, q3.astype(np.float64), m.astype(np.float64), w)
    np.testing.assert_allclose(softmax, ref.masked_softmax(scores, inside), atol=1e-5)
    assert np.all(weights[3] == 0.0) and np.all(np.asarray(context)[3] == 0.0)


@pytest.mark.parametrize("mode,score", CASES)
def test_single_steps_equal_all_steps(mode, score):
    q, m, mask = inputs(score, 4, TQ)
    layer = built_layer(mode, score, q, m, mask)
    context, weights = call(layer, q, m, mask, mode)
    keys = layer.compute_keys(m)
    for t in range(TQ):
        positions = np.full((B,), t) if mode == "monotonic" else None
        c_t, w_t = call(layer, q[:, t], m, mask, mode, keys=keys, positions=positions)
        np.testing.assert_allclose(c_t, context[:, t], atol=1e-6)
        np.testing.assert_allclose(w_t, weights[:, t], atol=1e-6)


@pytest.mark.parametrize("mode,score", CASES)
@pytest.mark.parametrize("tq", [None, TQ])
def test_precomputed_keys_give_the_same_output(mode, score, tq):
    q, m, mask = inputs(score, 5, tq)
    layer = built_layer(mode, score, q, m, mask)
    plain = call(layer, q, m, mask, mode)
    with_keys = call(layer, q, m, mask, mode, keys=layer.compute_keys(m))
    for x, y in zip(plain, with_keys, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-5)


def test_predictive_ignores_positions():
    q, m, mask = inputs("general", 6, TQ)
    layer = built_layer("predictive", "general", q, m, mask)
    a = call(layer, q, m, mask, "predictive")
    b = call(layer, q, m, mask, "predictive", positions=np.full((B, TQ), 7))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("mode,score", [c for c in CASES if c != ("monotonic", "dot")])
def test_gradients_reach_every_weight(mode, score):
    q, m, mask = inputs(score, 7, TQ)
    layer = built_layer(mode, score, q, m, mask)
    r = np.random.default_rng(0).standard_normal((B, TQ, m.shape[-1])).astype("float32")
    with tf.GradientTape() as tape:
        context, _ = layer(q, m, mask=mask)
        loss = tf.reduce_sum(context * r)
    grads = tape.gradient(loss, layer.trainable_variables)
    names = sorted(v.name for v in layer.trainable_variables)
    expected = {"dot": [], "general": ["W_a"], "concat": ["W_a", "v_a"]}[score]
    if mode == "predictive":
        expected = expected + ["W_p", "v_p"]
    assert names == sorted(expected)
    for v, g in zip(layer.trainable_variables, grads, strict=True):
        assert g is not None, v.name
        assert np.all(np.isfinite(g.numpy())) and np.any(g.numpy() != 0), v.name


@pytest.mark.parametrize("mode,score", CASES)
@pytest.mark.parametrize("tq", [None, TQ])
def test_harness(mode, score, tq):
    q, m, mask = inputs(score, 8, tq)
    data = {"query": q, "memory": m, "mask": mask}
    if mode == "monotonic" and tq is None:
        data["positions"] = STEP_POSITIONS.astype("int32")
    lead = (B,) if tq is None else (B, tq)
    trainable = not (mode == "monotonic" and score == "dot")
    run_layer_test(
        LocalAttention,
        kwargs_for(mode, score),
        data,
        expected_output_shape=(lead + (m.shape[-1],), lead + (TS,)),
        run_training_check=trainable,
        run_gradient_check=trainable,
    )


def test_unknown_mode_raises():
    with pytest.raises(ValueError, match="sideways"):
        LocalAttention(mode="sideways")


@pytest.mark.parametrize("score", ["location", "bilinear"])
def test_unsupported_score_raises(score):
    with pytest.raises(ValueError, match=score):
        LocalAttention(score=score)


@pytest.mark.parametrize("window", [0, -1, 2.5, True])
def test_bad_window_raises(window):
    with pytest.raises(ValueError, match=r"window \(D\) must be an int >= 1; received"):
        LocalAttention(window=window)


@pytest.mark.parametrize("units", [0, 2.5, True])
def test_bad_units_raise(units):
    with pytest.raises(ValueError, match="units must be an int >= 1 or None; received"):
        LocalAttention(units=units)


def test_dot_with_unequal_dims_raises():
    q, m, mask = ref.random_inputs(0, B, TS, DQ, DQ + 1)
    with pytest.raises(ValueError, match="dot"):
        LocalAttention(mode="predictive", score="dot", units=UNITS)(q, m, mask=mask)


@pytest.mark.parametrize("bad_shape", [(B,), (B, 2, 3, DQ)])
def test_wrong_rank_query_raises(bad_shape):
    _, m, mask = inputs("general", 0)
    with pytest.raises(ValueError, match="query"):
        LocalAttention(mode="predictive")(np.zeros(bad_shape, "float32"), m, mask=mask)


def test_monotonic_single_step_without_positions_raises():
    q, m, mask = inputs("general", 0)
    with pytest.raises(ValueError, match="positions"):
        LocalAttention(mode="monotonic")(q, m, mask=mask)


@settings(max_examples=15, deadline=None)
@given(
    batch=st.integers(1, 3),
    ts=st.integers(1, 9),
    tq=st.one_of(st.none(), st.integers(1, 3)),
    dq=st.integers(1, 4),
    dm=st.integers(1, 4),
    window=st.integers(1, 4),
    mode=st.sampled_from(MODES),
    score=st.sampled_from(SCORES),
    data=st.data(),
)
def test_property_shapes_finite_and_reference(batch, ts, tq, dq, dm, window, mode, score, data):
    lengths = data.draw(st.lists(st.integers(0, ts), min_size=batch, max_size=batch))
    dm = dq if score == "dot" else dm
    q, m, mask = ref.random_inputs(9, batch, ts, dq, dm, tq=tq, lengths=lengths)
    positions = None
    if mode == "monotonic":
        shape = (batch,) if tq is None else (batch, tq)
        positions = np.asarray(data.draw(st.lists(st.integers(0, 12), min_size=1)))
        positions = np.resize(positions, shape).astype("int32")
    layer = LocalAttention(
        window=window, mode=mode, score=score, units=data.draw(st.integers(1, 4))
    )
    context, weights = layer(q, m, mask=mask, positions=positions)
    lead = (batch,) if tq is None else (batch, tq)
    assert tuple(context.shape) == lead + (dm,) and tuple(weights.shape) == lead + (ts,)
    context, weights = to_numpy(context), to_numpy(weights)
    assert np.all(np.isfinite(context)) and np.all(np.isfinite(weights))
    exp_c, exp_w, _ = ref.local_attention(
        q, m, mask, ref.weights_by_name(layer), window, mode, score, positions
    )
    np.testing.assert_allclose(weights, exp_w, atol=1e-5)
    np.testing.assert_allclose(context, exp_c, atol=1e-5)


def test_registered_for_safe_loading():
    assert keras.saving.get_registered_object("zoo>LocalAttention") is LocalAttention


def test_wrong_mask_length_raises():
    q, m, _ = inputs("general", 0)
    with pytest.raises(ValueError, match="mask"):
        LocalAttention(mode="predictive")(q, m, mask=np.ones((B, TS + 1), bool))


@pytest.mark.parametrize("score", SCORES)
def test_init_scale_draws_every_weight_uniformly_within_it(score):
    q, m, mask = inputs(score, 8)
    kwargs = kwargs_for("predictive", score)
    layer = LocalAttention(**kwargs, init_scale=0.05)
    layer(q, m, mask=mask)
    weights = ref.weights_by_name(layer)
    assert set(weights) >= {"W_p", "v_p"}
    for name, value in weights.items():
        assert np.abs(value).max() <= 0.05, name
    # Glorot at the default: W_p (5, 6) draws from [-0.74, 0.74], far past 0.05.
    default = LocalAttention(**kwargs)
    default(q, m, mask=mask)
    assert np.abs(ref.weights_by_name(default)["W_p"]).max() > 0.1
    assert LocalAttention.from_config(layer.get_config()).scorer.init_scale == 0.05
    with pytest.raises(ValueError, match="init_scale must be >= 0"):
        LocalAttention(**kwargs, init_scale=-0.1)
