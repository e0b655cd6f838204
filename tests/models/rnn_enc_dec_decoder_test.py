import keras
import numpy as np
from model_toy import stepwise_logits

from zoo.models import RNNEncDecDecoder, build


def test_step_loop_equals_teacher_forcing_and_weights_are_zero(toy_batch):
    source, target = toy_batch
    model = build("bahdanau_rnnencdec", "tiny", 20, 17)
    logits = np.asarray(model({"source_ids": source, "target_ids": target}))
    step_logits, weights = stepwise_logits(model, source, target)
    np.testing.assert_allclose(step_logits, logits, atol=1e-5)
    assert weights.shape == (3, 6, 5)
    np.testing.assert_array_equal(weights, 0.0)


def test_fixed_context_is_tanh_v_h_last_and_memory_is_ignored():
    rng = np.random.default_rng(0)
    decoder = RNNEncDecDecoder(11, 4, 6, 3, context_units=5)
    h_last = rng.normal(size=(2, 7)).astype("float32")
    memory = rng.normal(size=(2, 3, 7)).astype("float32")
    mask = np.ones((2, 3), bool)
    target = np.array([[1, 5, 6], [1, 7, 8]], "int32")
    out = decoder(target, memory, mask, [h_last])
    cache = decoder.prepare(memory, mask, [h_last])
    kernel, bias = (np.asarray(w) for w in decoder.V.weights)
    np.testing.assert_allclose(cache["context"], np.tanh(h_last @ kernel + bias), atol=1e-6)
    np.testing.assert_allclose(decoder(target, memory * 0 + 3, mask, [h_last]), out, atol=1e-6)
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(decoder))
    assert again.get_config() == decoder.get_config()
