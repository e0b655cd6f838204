"""bench/train_speed.py's preset suffixes :tied / :untied: they reach the built model and its
FLOP count (the output layer's terms)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import common  # noqa: E402
import train_speed  # noqa: E402

import zoo.models  # noqa: E402


@pytest.mark.parametrize(
    ("spec", "tied"),
    [
        ("luong_local_p_general", True),  # the main job's preset ties at base
        ("luong_local_p_general:untied", False),
        ("luong_global_general", False),
        ("luong_global_general:tied", True),
    ],
)
def test_tied_and_untied_suffixes_reach_the_flop_count(spec, tied):
    name, overrides = common.parse_preset(spec)
    terms, arguments = train_speed.flop_terms(name, "base", (8000, 8000), overrides)
    assert arguments["tie_embeddings"] is tied
    output = {k: v for k, v in terms.items() if k.startswith(("softmax", "output projection"))}
    if tied:  # h~ (512) -> W_p -> 256 -> E^T (8000)
        assert output == {
            "output projection W_p (512 to 256)": ("tgt", 2 * 512 * 256),
            "softmax layer E^T (8000-way, tied)": ("tgt", 2 * 256 * 8000),
        }
    else:
        assert list(output.values()) == [("tgt", 2 * 512 * 8000)]


@pytest.mark.parametrize("suffix", ["tied", "untied"])
def test_the_suffixes_reach_the_built_model(suffix):
    name, overrides = common.parse_preset(f"luong_local_p_general:{suffix}")
    model = zoo.models.build(
        name, size="tiny", source_vocab_size=50, target_vocab_size=50, **overrides
    )
    assert model.get_layer("decoder").tie_embeddings is (suffix == "tied")
