"""bench/train_speed.py's preset suffixes :tied / :untied: they reach the built model and its
FLOP count (the output layer's terms, `zoo.models.params.flop_terms`)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import common  # noqa: E402

from zoo.models import params  # noqa: E402


@pytest.mark.parametrize(
    ("spec", "tied"),
    [
        ("luong_local_p_general", True),  # the main job's preset ties at base
        ("luong_local_p_general:untied", False),
        ("luong_global_general", False),
        ("luong_global_general:tied", True),
    ],
)
def test_tied_and_untied_suffixes_reach_the_model_and_its_flop_count(spec, tied):
    model = common.build_model(spec, "base", (8000, 8000))
    assert model.get_layer("decoder").tie_embeddings is tied
    terms = params.flop_terms(model)
    output = {k: v for k, v in terms.items() if k.startswith(("softmax", "output projection"))}
    if tied:  # h~ (512) -> W_p -> 256 -> E^T (8000)
        assert output == {
            "output projection W_p (512 to 256)": ("tgt", 2 * 512 * 256),
            "softmax layer E^T (8000-way, tied)": ("tgt", 2 * 256 * 8000),
        }
    else:
        assert list(output.values()) == [("tgt", 2 * 512 * 8000)]


def test_a_train_speed_report_counts_the_batches_tokens():
    import numpy as np
    import train_speed

    model = common.build_model("luong_global_general", "tiny", (50, 50))
    source = np.array([[5, 6, 7, 0], [5, 6, 7, 8]])
    target = np.array([[5, 6, 0], [5, 6, 7]])
    text, per_token = train_speed.flop_report("x", model, [({"source_ids": source}, target)])
    assert per_token == pytest.approx(3 * params.flops(model, [3, 4], [2, 3]) / 5)
    assert text.startswith("x: forward matmul FLOPs per target token")
