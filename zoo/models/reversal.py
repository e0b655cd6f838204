"""Reverse right-padded sequences within their lengths (used by encoders).

`reverse_padded(x, lengths)` maps position `t < length` to `length - 1 - t` and leaves the
padding where it is, so that a reversed right-padded batch is still right-padded (which keeps
the cuDNN kernels usable) and reversing twice gives back the input.
"""

from keras import ops


def reversal_indices(lengths, max_length):
    """Gather indices (B, T) int32 that reverse each row within its length.

    Args:
        lengths: (B,) int tensor, the number of real positions of each row.
        max_length: T, a Python int or scalar tensor.
    """
    t = ops.arange(max_length, dtype="int32")[None, :]  # (1, T)
    lengths = ops.cast(lengths, "int32")[:, None]  # (B, 1)
    return ops.where(t < lengths, lengths - 1 - t, t)  # (B, T)


def reverse_padded(x, lengths):
    """Reverses x (B, T, ...) along axis 1 within each row's length; padding stays at the end.

    Example: rows [a b c 0 0] with length 3 become [c b a 0 0].
    """
    shape = ops.shape(x)
    indices = reversal_indices(lengths, shape[1])  # (B, T)
    rank = len(x.shape)
    if rank == 2:
        return ops.take_along_axis(x, indices, axis=1)
    if rank != 3:
        raise ValueError(f"reverse_padded expects a (B, T) or (B, T, D) tensor, got rank {rank}.")
    indices = ops.broadcast_to(indices[:, :, None], shape)  # (B, T, D)
    return ops.take_along_axis(x, indices, axis=1)


def lengths_from_mask(mask):
    """(B, T) bool mask (True = real, right-padded) -> (B,) int32 lengths."""
    return ops.sum(ops.cast(mask, "int32"), axis=1)


__all__ = ["reverse_padded", "reversal_indices", "lengths_from_mask"]
