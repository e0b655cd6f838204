"""`zoo.json_files.write_json`: JSON-safe values and all-or-nothing writes."""

import json
import math

import numpy as np
import pytest

from zoo.json_files import write_json


def test_write_json_stores_non_finite_numbers_as_null(tmp_path):
    path = tmp_path / "m.json"
    write_json(str(path), {"ppl": math.inf, "loss": math.nan, "bleu": 12.5, "rows": [1.0]})
    assert json.loads(path.read_text()) == {"ppl": None, "loss": None, "bleu": 12.5, "rows": [1.0]}


def test_write_json_converts_numpy_values_and_makes_the_folder(tmp_path):
    path = tmp_path / "new" / "folder" / "m.json"
    data = {"steps": np.int64(7), "rate": np.float32(0.5), "nan": np.float64("nan")}
    write_json(str(path), {**data, "counts": np.array([1, 2]), 3: (np.float32("inf"),)})
    assert json.loads(path.read_text()) == {
        "steps": 7,
        "rate": 0.5,
        "nan": None,
        "counts": [1, 2],
        "3": [None],
    }


def test_a_failed_write_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "plan.json"
    write_json(str(path), {"decay_after_epochs": 5}, indent=1)

    class Unwritable:
        def __str__(self):
            raise RuntimeError("cannot write this")

    # json.dump has written the first key when it reaches the second.
    with pytest.raises(RuntimeError, match="cannot write this"):
        write_json(str(path), {"decay_after_epochs": 9, "broken": Unwritable()})
    assert json.loads(path.read_text()) == {"decay_after_epochs": 5}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]  # no .tmp left
