import numpy as np
import pytest

from zoo.models.recurrence import lengths_from_mask, reversal_indices, reverse_padded


def _numpy_reverse(x, lengths):
    out = x.copy()
    for b, n in enumerate(lengths):
        out[b, :n] = x[b, :n][::-1]
    return out


def test_reverse_padded_matches_numpy_and_keeps_padding():
    rng = np.random.default_rng(0)
    lengths = np.array([3, 5, 1, 0])
    x = rng.normal(size=(4, 5, 2)).astype("float32")
    out = np.asarray(reverse_padded(x, lengths))
    np.testing.assert_array_equal(out, _numpy_reverse(x, lengths))
    ids = np.array([[4, 5, 6, 0, 0]], "int32")
    np.testing.assert_array_equal(reverse_padded(ids, np.array([3])), [[6, 5, 4, 0, 0]])


def test_reversal_is_an_involution_and_lengths_from_mask():
    mask = np.array([[True, True, False], [True, True, True]])
    np.testing.assert_array_equal(lengths_from_mask(mask), [2, 3])
    idx = np.asarray(reversal_indices(np.array([2, 3]), 3))
    np.testing.assert_array_equal(idx, [[1, 0, 2], [2, 1, 0]])
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(reverse_padded(reverse_padded(x, [2, 3]), [2, 3]), x)


def test_bad_rank_raises():
    with pytest.raises(ValueError, match="rank"):
        reverse_padded(np.zeros((2, 3, 4, 5), "float32"), np.array([1, 2]))
