import keras
import numpy as np
import pytest

from zoo.models.gru_decoders import Maxout


def test_maxout_matches_numpy_pairs():
    x = np.random.default_rng(0).normal(size=(3, 4, 6)).astype("float32")
    out = np.asarray(Maxout(2)(x))
    np.testing.assert_allclose(out, np.maximum(x[..., 0::2], x[..., 1::2]))
    assert Maxout(3).compute_output_shape((None, 6)) == (None, 2)


def test_maxout_errors_and_config():
    with pytest.raises(ValueError, match="divisible"):
        Maxout(2)(np.zeros((2, 5), "float32"))
    with pytest.raises(ValueError, match="pool_size"):
        Maxout(0)
    layer = Maxout(3, name="m")
    again = Maxout.from_config(layer.get_config())
    assert again.pool_size == 3
    assert (
        keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer)).pool_size
        == 3
    )
