"""zoo.checks: the argument checks every layer, model, pipeline and translator uses."""

import numpy as np
import pytest

from zoo.checks import check_int, check_non_negative_float, check_rate


def test_check_int_accepts_ints_and_returns_python_ints():
    assert check_int("X", "units", 3) == 3
    value = check_int("X", "units", np.int64(7))
    assert value == 7 and type(value) is int  # JSON-serialisable in get_config
    assert check_int(None, "offset", 0, minimum=0) == 0
    assert check_int("X", "units", None, allow_none=True) is None


@pytest.mark.parametrize(
    "value, kwargs, message",
    [
        (2.5, {}, "X: units must be an int >= 1; received 2.5."),
        (True, {}, "X: units must be an int >= 1; received True."),
        (0, {}, "X: units must be an int >= 1; received 0."),
        ("3", {}, "X: units must be an int >= 1; received '3'."),
        (None, {}, "X: units must be an int >= 1; received None."),
        (-1, {"minimum": 0}, "X: units must be an int >= 0; received -1."),
        (0, {"allow_none": True}, "X: units must be an int >= 1 or None; received 0."),
    ],
)
def test_check_int_refuses_what_it_would_truncate(value, kwargs, message):
    with pytest.raises(ValueError) as error:
        check_int("X", "units", value, **kwargs)
    assert str(error.value) == message


def test_check_int_without_owner():
    with pytest.raises(ValueError, match=r"^beam_size must be an int >= 1; received 0\.$"):
        check_int(None, "beam_size", 0)


def test_check_rate():
    assert check_rate("X", "dropout", 0) == 0.0 and check_rate("X", "dropout", 0.3) == 0.3
    assert type(check_rate("X", "dropout", np.float32(0.5))) is float
    for bad in (1.0, -0.1, float("nan"), True, "0.1", None):
        with pytest.raises(ValueError, match=r"X: dropout must be a float in \[0, 1\); received"):
            check_rate("X", "dropout", bad)


def test_check_non_negative_float():
    assert check_non_negative_float("T", "alpha", 1) == 1.0
    assert type(check_non_negative_float(None, "alpha", np.float32(0.5))) is float
    for bad in (-0.1, float("inf"), float("nan"), True, "1", None):
        with pytest.raises(ValueError, match=r"^T: alpha must be a finite float >= 0; received"):
            check_non_negative_float("T", "alpha", bad)
