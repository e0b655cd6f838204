import numpy as np

from zoo.models import GRUEncoder


def test_last_state_is_the_state_at_each_sentence_end():
    encoder = GRUEncoder(20, 4, 3)
    source = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]], "int32")
    memory, mask, (h_last,) = encoder(source)
    assert memory.shape == (2, 5, 3)
    np.testing.assert_allclose(h_last[0], memory[0, 2], atol=1e-6)
    np.testing.assert_allclose(h_last[1], memory[1, 4], atol=1e-6)
    np.testing.assert_array_equal(memory[0, 3:], 0.0)
    alone, _, (h_alone,) = encoder(source[:1, :3])
    np.testing.assert_allclose(alone, memory[:1, :3], atol=1e-6)
    np.testing.assert_allclose(h_alone, h_last[:1], atol=1e-6)
    assert GRUEncoder.from_config(encoder.get_config()).units == 3
