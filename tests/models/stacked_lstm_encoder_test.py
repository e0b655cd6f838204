import keras
import numpy as np
import pytest

from zoo.models import StackedLSTMEncoder


def _twin(encoder, **changes):
    """A copy of `encoder` with config changes and the same weights."""
    twin = StackedLSTMEncoder.from_config({**encoder.get_config(), **changes})
    twin.build((None, None))
    twin.set_weights(encoder.get_weights())
    return twin


def test_reversed_source_memory_is_aligned_with_source_positions():
    source = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]], "int32")
    reversed_ids = np.array([[7, 6, 5, 0, 0], [12, 11, 10, 9, 8]], "int32")
    encoder = StackedLSTMEncoder(20, 4, 3, num_layers=2, reverse_source=True)
    memory, mask, states = encoder(source)
    plain = _twin(encoder, reverse_source=False)
    memory_plain, _, states_plain = plain(reversed_ids)  # reading the reversed ids forwards
    for b, n in enumerate([3, 5]):
        np.testing.assert_allclose(memory[b, :n], memory_plain[b, :n][::-1], atol=1e-6)
    for s, s_plain in zip(states, states_plain, strict=True):
        np.testing.assert_allclose(s, s_plain, atol=1e-6)
    assert len(states) == 4 and all(s.shape == (2, 3) for s in states)
    np.testing.assert_array_equal(memory[0, 3:], 0.0)


def test_final_states_ignore_padding_and_dropout_only_in_training():
    encoder = StackedLSTMEncoder(20, 4, 3, num_layers=3, dropout=0.5)
    m1, _, s1 = encoder(np.array([[5, 6, 7]], "int32"))
    m2, _, s2 = encoder(np.array([[5, 6, 7, 0, 0]], "int32"))
    np.testing.assert_allclose(m1, m2[:, :3], atol=1e-6)
    for a, b in zip(s1, s2, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)
    # top-layer h of the last real word equals h_L
    np.testing.assert_allclose(m2[0, 2], s2[-2][0], atol=1e-6)
    m3, _, _ = encoder(np.array([[5, 6, 7]], "int32"), training=True)
    assert not np.allclose(m1, m3)


def test_uniform_init_and_config_and_errors():
    encoder = StackedLSTMEncoder(20, 4, 3, num_layers=2, init_scale=0.1)
    encoder.build((None, None))
    for weight in encoder.weights:
        if "bias" not in weight.path:
            assert np.abs(np.asarray(weight)).max() <= 0.1
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(encoder))
    assert again.get_config() == encoder.get_config()
    with pytest.raises(ValueError, match="num_layers"):
        StackedLSTMEncoder(20, 4, 3, num_layers=5)
    with pytest.raises(ValueError, match="dropout"):
        StackedLSTMEncoder(20, 4, 3, dropout=1.5)
    with pytest.raises(ValueError, match="init_scale"):
        StackedLSTMEncoder(20, 4, 3, init_scale=-1.0)


def test_bidirectional_first_layer_equals_two_lstms_read_each_way():
    """Layer 1 = [LSTM forwards; LSTM backwards over each sentence alone], layer 2 reads it;
    with a reversed source the memory is still aligned with source positions."""
    source = np.array([[5, 6, 7, 8], [9, 10, 0, 0]], "int32")
    for reverse_source in (False, True):
        encoder = StackedLSTMEncoder(
            20, 6, 8, num_layers=2, bidirectional=True, reverse_source=reverse_source
        )
        memory, _, states = encoder(source)
        assert memory.shape == (2, 4, 8) and [s.shape for s in states] == [(2, 8)] * 4
        forward, backward, top = encoder.lstms
        for b, n in enumerate([4, 2]):
            ids = source[b : b + 1, :n][:, ::-1] if reverse_source else source[b : b + 1, :n]
            embedded = encoder.embedding(ids)
            fwd, fwd_h, fwd_c = forward(embedded)
            bwd, bwd_h, bwd_c = backward(embedded[:, ::-1])
            layer_1 = np.concatenate([fwd[0], np.asarray(bwd[0])[::-1]], axis=-1)
            expected, h_2, c_2 = top(layer_1[None])
            expected = np.asarray(expected[0])
            np.testing.assert_allclose(
                memory[b, :n], expected[::-1] if reverse_source else expected, atol=1e-5
            )
            np.testing.assert_allclose(
                states[0][b], np.concatenate([fwd_h[0], bwd_h[0]]), atol=1e-5
            )
            np.testing.assert_allclose(
                states[1][b], np.concatenate([fwd_c[0], bwd_c[0]]), atol=1e-5
            )
            np.testing.assert_allclose(states[2][b], h_2[0], atol=1e-5)
            np.testing.assert_allclose(states[3][b], c_2[0], atol=1e-5)
            np.testing.assert_array_equal(memory[b, n:], 0.0)
    assert [w.path.split("/")[1] for w in encoder.weights[1:4]] == ["lstm_1_forward"] * 3
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(encoder))
    assert again.get_config() == encoder.get_config() and again.bidirectional
    with pytest.raises(ValueError, match="units must be even; got units=7"):
        StackedLSTMEncoder(20, 4, 7, bidirectional=True)
