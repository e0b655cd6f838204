"""GNMT's length and coverage penalties (Wu et al. 2016, eq. 14), by which beam search ranks
finished hypotheses: `log_probs / lp(Y) + cp(X; Y)`."""

from keras import ops

COVERAGE_FLOOR = 1e-6  # the coverage penalty's floor on a source position's attention sum


def length_penalty_factor(lengths, alpha):
    """GNMT's length penalty `lp(Y) = ((5 + |Y|) / 6) ** alpha` (Wu et al. 2016, eq. 14).

    Args:
        lengths: int tensor of hypothesis lengths (tokens including END).
        alpha: the `length_penalty` strength, a float >= 0 (0 gives 1 everywhere).
    Returns:
        a float32 tensor shaped like `lengths`.

    Example:
        >>> float(length_penalty_factor(7, 1.0))
        2.0
    """
    lengths = ops.cast(lengths, "float32")
    return ops.power((5.0 + lengths) / 6.0, float(alpha))


def coverage_penalty(coverage, source_mask, beta):
    """GNMT's `cp = beta * sum_j log(min(c_j, 1))` over the real source positions.

    Args:
        coverage: (R, Ts) float32, c_j: each hypothesis' attention on source position j
            summed over its steps; floored at `COVERAGE_FLOOR`, so that a position never
            attended costs a finite amount.
        source_mask: (R, Ts) bool, True at real source positions.
        beta: the `coverage_penalty` strength, a float >= 0.
    Returns:
        (R,) float32.
    """
    clipped = ops.clip(coverage, COVERAGE_FLOOR, 1.0)
    logs = ops.where(source_mask, ops.log(clipped), 0.0)
    return beta * ops.sum(logs, axis=1)
