import keras
import numpy as np
import pytest

from zoo.models import BidirectionalGRUEncoder


def _gru_numpy(gru, x):
    """NumPy GRU (reset_after=True, Keras gate order z, r, h) over x (T, D) -> states (T, n)."""
    kernel, recurrent, bias = (np.asarray(w) for w in gru.cell.weights)
    n = recurrent.shape[0]
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h, out = np.zeros(n), []
    for x_t in x:
        xz = x_t @ kernel + bias[0]
        hz = h @ recurrent + bias[1]
        z = sigmoid(xz[:n] + hz[:n])
        r = sigmoid(xz[n : 2 * n] + hz[n : 2 * n])
        candidate = np.tanh(xz[2 * n :] + r * hz[2 * n :])
        h = z * h + (1 - z) * candidate
        out.append(h)
    return np.array(out)


def test_annotations_match_numpy_forward_and_backward_within_length():
    encoder = BidirectionalGRUEncoder(20, 4, 3)
    source = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]], "int32")
    memory, mask, (bwd_h_1,) = encoder(source)
    np.testing.assert_array_equal(mask, source != 0)
    table = np.asarray(encoder.embedding.embeddings)
    for b, n in enumerate([3, 5]):
        x = table[source[b, :n]]
        forward = _gru_numpy(encoder.forward_gru, x)
        backward = _gru_numpy(encoder.backward_gru, x[::-1])[::-1]  # bwd_h_j
        np.testing.assert_allclose(memory[b, :n, :3], forward, atol=1e-5)
        np.testing.assert_allclose(memory[b, :n, 3:], backward, atol=1e-5)
        np.testing.assert_allclose(bwd_h_1[b], backward[0], atol=1e-5)
        np.testing.assert_array_equal(memory[b, n:], 0.0)


def test_padding_does_not_change_annotations():
    encoder = BidirectionalGRUEncoder(20, 4, 3)
    short = np.array([[5, 6, 7]], "int32")
    padded = np.array([[5, 6, 7, 0, 0, 0]], "int32")
    m1, _, s1 = encoder(short)
    m2, _, s2 = encoder(padded)
    np.testing.assert_allclose(m1, m2[:, :3], atol=1e-6)
    np.testing.assert_allclose(s1[0], s2[0], atol=1e-6)


def test_config_round_trip_and_errors():
    encoder = BidirectionalGRUEncoder(20, 4, 3, reset_after=False, name="encoder")
    config = encoder.get_config()
    assert {k: config[k] for k in ("vocab_size", "embedding_dim", "units", "reset_after")} == {
        "vocab_size": 20,
        "embedding_dim": 4,
        "units": 3,
        "reset_after": False,
    }
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(encoder))
    assert again.get_config() == config
    with pytest.raises(ValueError, match="units"):
        BidirectionalGRUEncoder(20, 4, 0)
    with pytest.raises(ValueError, match="source_ids"):
        encoder(np.zeros((2, 3, 4), "int32"))
