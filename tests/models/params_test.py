"""`python -m zoo params`: its usage line and the defaults its help shows."""

import runpy
import sys

import pytest

from zoo.models import params
from zoo.models.presets import DEFAULT_VOCAB_SIZES


def help_text(capsys, run):
    with pytest.raises(SystemExit) as stopped:
        run()
    assert stopped.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_usage_names_the_command_users_run_and_help_shows_the_library_defaults(capsys):
    text = help_text(capsys, lambda: params.main(["--help"]))
    assert text.startswith("usage: python -m zoo params ")
    bahdanau, luong = DEFAULT_VOCAB_SIZES["bahdanau"], DEFAULT_VOCAB_SIZES["luong"]
    assert f"Bahdanau presets (default: {bahdanau})" in text
    assert f"Luong presets (default: {luong})" in text
    assert "preset size (default: paper)" in text


def test_a_changed_library_default_changes_the_help(capsys, monkeypatch):
    monkeypatch.setitem(DEFAULT_VOCAB_SIZES, "luong", 12345)
    assert "Luong presets (default: 12345)" in help_text(capsys, lambda: params.main(["--help"]))


def test_run_as_a_module_it_names_the_module(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["params.py", "--help"])
    monkeypatch.delitem(sys.modules, "zoo.models.params")  # run afresh, as `python -m` does
    run = lambda: runpy.run_module("zoo.models.params", run_name="__main__")  # noqa: E731
    assert help_text(capsys, run).startswith("usage: python -m zoo.models.params ")


def small_luong(**changes):
    """A one-layer Luong model of sizes small enough to count by hand."""
    from zoo.models import build_luong

    arguments = dict(
        embedding_dim=4, units=6, num_layers=1, dropout=0.0, reverse_source=False,
        bidirectional=False, init_scale=0.0, attention="global", score="general", window=1,
        max_length=None, input_feeding=True,
    )  # fmt: skip
    return build_luong(11, 13, **{**arguments, **changes})


def test_flops_are_the_hand_count_of_a_small_luong_model():
    # per source token: the encoder LSTM, 4 gates of 6 from 4 inputs and 6 recurrent
    # (2 * 4 * (4 + 6) * 6), and the attention key h_s W_a^T (2 * 6 * 6)
    per_source = 2 * 4 * (4 + 6) * 6 + 2 * 6 * 6
    # per target token: the decoder LSTM fed E y (4) and h~ (6), W_c [c; h] (12 -> 6), W_s
    # (6 -> 13 words)
    per_target = 2 * 4 * (4 + 6 + 6) * 6 + 2 * 12 * 6 + 2 * 6 * 13
    per_pair = 2 * 6 + 2 * 6  # the score h_t . key and the context's weighted sum
    model = small_luong()
    by_unit = {}
    for unit, value in params.flop_terms(model).values():
        by_unit[unit] = by_unit.get(unit, 0) + value
    assert by_unit == {"src": per_source, "tgt": per_target, "pair": per_pair}
    # two pairs: 3 and 5 source tokens, 4 and 2 target tokens; 4 * 3 + 2 * 5 attended
    expected = 8 * per_source + 6 * per_target + (4 * 3 + 2 * 5) * per_pair
    assert params.flops(model, [3, 5], [4, 2]) == expected


def test_local_attention_attends_its_window_only():
    model = small_luong(attention="local_m", window=1)  # at most 2 * 1 + 1 positions
    assert params.flop_units(model, [3, 5], [4, 2])["pair"] == 4 * 3 + 2 * 3
    with pytest.raises(ValueError, match="a target length per source length"):
        params.flop_units(model, [3, 5], [4])
