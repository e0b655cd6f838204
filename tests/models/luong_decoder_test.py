import keras
import numpy as np
import pytest
from model_toy import stepwise_logits

from zoo.layers import LocalAttention, LuongAttention
from zoo.models import LuongDecoder, attention_presets, build, family

LUONG_ATTENTION_PRESETS = [name for name in attention_presets() if family(name) == "luong"]


@pytest.mark.parametrize("input_feeding", [True, False])
@pytest.mark.parametrize(
    "name", ["luong_global_general", "luong_local_m_dot", "luong_local_p_general"]
)
def test_step_loop_equals_teacher_forcing(toy_batch, name, input_feeding):
    source, target = toy_batch
    model = build(name, "tiny", 20, 17, input_feeding=input_feeding)
    logits = np.asarray(model({"source_ids": source, "target_ids": target}))
    step_logits, weights = stepwise_logits(model, source, target)
    np.testing.assert_allclose(step_logits, logits, atol=1e-5)
    if "local_p" in name:  # the Gaussian (eq. 10) scales the window's softmax down
        assert np.all(weights.sum(-1) <= 1.0 + 1e-6) and np.all(weights.sum(-1) > 0)
    else:
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(weights[0, :, 3:], 0.0)


def test_base_system_without_attention(toy_batch):
    source, target = toy_batch
    model = build("luong_base", "tiny", 20, 17)
    decoder = model.get_layer("decoder")
    assert decoder.attention is None and not decoder.input_feeding
    logits = np.asarray(model({"source_ids": source, "target_ids": target}))
    step_logits, weights = stepwise_logits(model, source, target)
    np.testing.assert_allclose(step_logits, logits, atol=1e-5)
    np.testing.assert_array_equal(weights, 0.0)


@pytest.mark.parametrize("name", LUONG_ATTENTION_PRESETS + ["luong_base"])
def test_fast_path_equals_stepwise_path(toy_batch, name):
    source, target = toy_batch
    model = build(name, "tiny", 20, 17, input_feeding=False)
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    memory, mask, states = encoder(source)
    fast = decoder(target, memory, mask, states)  # LSTM layers over the sequence
    cache = decoder.prepare(memory, mask, states)
    stepwise, _ = decoder._stepwise_logits(target, cache, False)  # scan of decoder steps
    np.testing.assert_allclose(stepwise, fast, atol=1e-5)


@pytest.mark.parametrize("name", ["luong_global_general", "luong_local_p_dot", "luong_base"])
def test_fused_keras_layer_path_equals_stepwise_path(toy_batch, name, monkeypatch):
    """The whole-sequence path through the Keras LSTM layers (taken where cuDNN runs them)."""
    import zoo.models.luong_decoder as luong_decoder

    monkeypatch.setattr(luong_decoder, "fused_rnn_available", lambda: True)
    source, target = toy_batch
    model = build(name, "tiny", 20, 17, input_feeding=False)
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    memory, mask, states = encoder(source)
    fused = decoder(target, memory, mask, states)
    cache = decoder.prepare(memory, mask, states)
    stepwise, _ = decoder._stepwise_logits(target, cache, False)
    np.testing.assert_allclose(stepwise, fused, atol=1e-5)


def test_attentional_state_and_input_feeding_match_numpy():
    """h~_t = tanh(W_c [c_t; h_t]) (eq. 5); logits = W_s h~_t (eq. 6); the next step's first
    layer input is [E y; h~_t] (§3.3)."""
    rng = np.random.default_rng(1)
    decoder = LuongDecoder(11, 4, 6, attention=LuongAttention("dot"), input_feeding=True)
    memory = rng.normal(size=(2, 3, 6)).astype("float32")
    mask = np.array([[True, True, False], [True] * 3])
    states = [rng.normal(size=(2, 6)).astype("float32") for _ in range(2)]
    decoder(np.ones((2, 1), "int32"), memory, mask, states)
    cache = decoder.prepare(memory, mask, states)
    state = decoder.initial_state(cache)
    logits, state, weights = decoder.step(np.array([1, 5]), state, cache)
    h_t, h_tilde, steps = np.asarray(state[0]), np.asarray(state[2]), np.asarray(state[3])
    scores = np.where(mask, np.einsum("bd,bsd->bs", h_t, memory), -np.inf)
    alpha = np.exp(scores - scores.max(-1, keepdims=True))
    alpha /= alpha.sum(-1, keepdims=True)
    context = np.einsum("bs,bsd->bd", alpha, memory)
    W_c = np.asarray(decoder.W_c.kernel)
    np.testing.assert_allclose(weights, alpha, atol=1e-5)
    np.testing.assert_allclose(
        h_tilde, np.tanh(np.concatenate([context, h_t], -1) @ W_c), atol=1e-5
    )
    W_s, b_s = (np.asarray(w) for w in decoder.W_s.weights)
    np.testing.assert_allclose(logits, h_tilde @ W_s + b_s, atol=1e-5)
    np.testing.assert_array_equal(steps, [1, 1])
    # input feeding: the first LSTM layer reads [E y_t; h~_t]
    x = np.concatenate([np.asarray(decoder.embedding(np.array([3, 4]))), h_tilde], -1)
    expected_h, _ = decoder.lstms[0].cell(x, [state[0], state[1]])
    _, next_state, _ = decoder.step(np.array([3, 4]), state, cache)
    np.testing.assert_allclose(next_state[0], expected_h, atol=1e-6)


def test_config_round_trip_with_attention_object():
    decoder = LuongDecoder(
        11, 4, 6, num_layers=2, dropout=0.1, init_scale=0.1,
        attention=LocalAttention(window=3, mode="monotonic", score="general"),
        name="decoder",
    )  # fmt: skip
    config = decoder.get_config()
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(decoder))
    assert isinstance(again.attention, LocalAttention)
    assert again.attention.window == 3 and again.attention.mode == "monotonic"
    assert again.get_config() == config


def test_errors():
    with pytest.raises(ValueError, match="input_feeding"):
        LuongDecoder(11, 4, 6, attention=None, input_feeding=True)
    with pytest.raises(ValueError, match="attention"):
        LuongDecoder(11, 4, 6, attention="general")
    decoder = LuongDecoder(11, 4, 6, num_layers=2, attention=LuongAttention("general"))
    states = [np.zeros((1, 6), "float32")] * 2  # one layer's states for a 2-layer decoder
    with pytest.raises(ValueError, match="encoder_states"):
        decoder(
            np.ones((1, 2), "int32"), np.zeros((1, 3, 6), "float32"), np.ones((1, 3), bool), states
        )
    with pytest.raises(ValueError, match="prev_ids"):
        decoder.step(np.ones((1, 1), "int32"), (), {})


@pytest.mark.parametrize("input_feeding", [True, False])
def test_one_layer_dropout_reaches_embeddings_and_the_attentional_vector(toy_batch, input_feeding):
    # With one LSTM layer there is no between-layer connection: dropout still acts (on E y
    # and on h~ before W_s, Zaremba et al.) in training, and never at inference.
    source, target = toy_batch
    model = build("luong_global_general", "tiny", 20, 17, num_layers=1, dropout=0.5,
                  input_feeding=input_feeding)  # fmt: skip
    inputs = {"source_ids": source, "target_ids": target}
    inference = np.asarray(model(inputs, training=False))
    np.testing.assert_array_equal(inference, np.asarray(model(inputs, training=False)))
    assert np.abs(np.asarray(model(inputs, training=True)) - inference).max() > 1e-4
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    assert [d.name for d in encoder.dropouts] == ["dropout_0"]
    assert [d.name for d in decoder.dropouts] == ["dropout_0"]
    assert decoder.output_dropout.rate == 0.5


def test_location_model_trains_on_sources_past_its_reach():
    # max_length 32 at tiny: a 40-token source trains (finite loss and gradients) and its
    # positions past 32 get no attention, by teacher forcing and by the step loop alike.
    rng = np.random.default_rng(3)
    source = rng.integers(4, 20, size=(2, 40)).astype("int32")
    target = np.concatenate([np.ones((2, 1), "int32"), source[:, :5]], axis=1) % 17
    model = build("luong_global_location", "tiny", 20, 17)
    _, weights = stepwise_logits(model, source, target)
    np.testing.assert_array_equal(weights[..., 32:], 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(True))
    loss = model.train_on_batch({"source_ids": source, "target_ids": target}, target)
    assert np.isfinite(loss)
