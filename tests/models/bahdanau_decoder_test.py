import keras
import numpy as np
import pytest
from model_toy import stepwise_logits

from zoo.models import BahdanauDecoder, build


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _numpy_first_step(decoder, memory, mask, bwd_h_1, prev_ids):
    """Bahdanau et al. 2014 appendix A.2.2 written out in NumPy for the first step."""
    w = {v.path.split("/", 1)[1]: np.asarray(v) for v in decoder.weights}
    E = w["E/embeddings"]
    s_prev = np.tanh(bwd_h_1 @ w["W_s/kernel"] + w["W_s/bias"])  # s_0
    e_y = E[prev_ids]
    scores = (
        np.tanh((s_prev @ w["attention/W_a"])[:, None] + memory @ w["attention/U_a"])
        @ w["attention/v_a"]
    )
    scores = np.where(mask, scores, -np.inf)
    alpha = np.exp(scores - scores.max(-1, keepdims=True))
    alpha /= alpha.sum(-1, keepdims=True)
    c = np.einsum("bs,bsd->bd", alpha, memory)
    t_tilde = s_prev @ w["U_o/kernel"] + w["U_o/bias"] + e_y @ w["V_o/kernel"] + c @ w["C_o/kernel"]
    t = np.maximum(t_tilde[:, 0::2], t_tilde[:, 1::2])
    logits = t @ w["W_o/kernel"] + w["W_o/bias"]
    # GRU with reset_after=False (the paper's), Keras gate order z, r, h
    kernel, recurrent, bias = (
        w["gru_cell/kernel"],
        w["gru_cell/recurrent_kernel"],
        w["gru_cell/bias"],
    )
    n = s_prev.shape[1]
    x = np.concatenate([e_y, c], -1)
    z = _sigmoid(x @ kernel[:, :n] + s_prev @ recurrent[:, :n] + bias[:n])
    r = _sigmoid(x @ kernel[:, n : 2 * n] + s_prev @ recurrent[:, n : 2 * n] + bias[n : 2 * n])
    candidate = np.tanh(
        x @ kernel[:, 2 * n :] + (r * s_prev) @ recurrent[:, 2 * n :] + bias[2 * n :]
    )
    s_new = z * s_prev + (1 - z) * candidate
    return logits, s_new, alpha


def test_step_matches_numpy_equations():
    rng = np.random.default_rng(0)
    decoder = BahdanauDecoder(13, 5, 6, 4, attention_units=7)
    memory = rng.normal(size=(2, 4, 8)).astype("float32")
    mask = np.array([[True, True, True, False], [True] * 4])
    bwd_h_1 = rng.normal(size=(2, 3)).astype("float32")
    decoder(np.ones((2, 1), "int32"), memory, mask, [bwd_h_1])  # builds
    cache = decoder.prepare(memory, mask, [bwd_h_1])
    prev = np.array([1, 7], "int32")
    logits, (s_new,), weights = decoder.step(prev, decoder.initial_state(cache), cache)
    ref_logits, ref_s, ref_alpha = _numpy_first_step(decoder, memory, mask, bwd_h_1, prev)
    np.testing.assert_allclose(logits, ref_logits, atol=1e-5)
    np.testing.assert_allclose(s_new, ref_s, atol=1e-5)
    np.testing.assert_allclose(weights, ref_alpha, atol=1e-6)


def test_step_loop_equals_teacher_forcing(toy_batch):
    source, target = toy_batch
    model = build("bahdanau_rnnsearch", "tiny", 20, 17)
    logits = np.asarray(model({"source_ids": source, "target_ids": target}))
    step_logits, weights = stepwise_logits(model, source, target)
    np.testing.assert_allclose(step_logits, logits, atol=1e-5)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(weights[0, :, 3:], 0.0)  # padding gets no attention


def test_teacher_forcing_works_inside_tf_function(toy_batch):
    import tensorflow as tf

    source, target = toy_batch
    model = build("bahdanau_rnnsearch", "tiny", 20, 17)
    eager = model({"source_ids": source, "target_ids": target})
    graph = tf.function(lambda s, t: model({"source_ids": s, "target_ids": t}))(source, target)
    np.testing.assert_allclose(graph, eager, atol=1e-5)


def test_config_round_trip_and_encoder_state_check():
    decoder = BahdanauDecoder(13, 5, 6, 4, attention_units=7, name="decoder")
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(decoder))
    assert again.get_config() == decoder.get_config()
    memory = np.zeros((1, 2, 8), "float32")
    with pytest.raises(ValueError, match="encoder_states"):
        decoder(np.ones((1, 1), "int32"), memory, np.ones((1, 2), bool), [memory[:, 0]] * 2)


@pytest.mark.parametrize("preset", ["bahdanau_rnnsearch", "bahdanau_rnnencdec"])
def test_dropout_acts_in_training_only(toy_batch, preset):
    """dropout > 0 changes training outputs (every call a new mask) and leaves inference
    exactly equal to the same weights with dropout 0; the step loop still equals teacher
    forcing at inference."""
    source, target = toy_batch
    inputs = {"source_ids": source, "target_ids": target}
    keras.utils.set_random_seed(0)
    plain = build(preset, "tiny", 20, 17)
    dropped = build(preset, "tiny", 20, 17, dropout=0.5)
    dropped.set_weights(plain.get_weights())
    assert dropped.get_layer("encoder").dropout == 0.5
    assert dropped.get_layer("decoder").get_config()["dropout"] == 0.5
    reference = np.asarray(plain(inputs, training=False))
    np.testing.assert_allclose(dropped(inputs, training=False), reference, atol=1e-6)
    first, second = (np.asarray(dropped(inputs, training=True)) for _ in range(2))
    assert np.abs(first - reference).max() > 1e-3
    assert np.abs(first - second).max() > 1e-3
    step_logits, _ = stepwise_logits(dropped, source, target)
    np.testing.assert_allclose(step_logits, reference, atol=1e-5)
    with pytest.raises(ValueError, match="dropout"):
        BahdanauDecoder(13, 5, 6, 4, dropout=1.0)
