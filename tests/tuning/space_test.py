"""zoo.tuning.space: --fix parsing and validation, the declared space, model arguments."""

import keras_tuner
import pytest

from zoo import models
from zoo.tuning import space


def test_parse_fixed_converts_each_kind():
    fixed = space.parse_fixed(
        [
            "attention=luong_local_p_general",
            "units=64",
            " window = 5 ",
            "input_feeding=false",
            "dropout=0.3",
            "optimizer=adam",
            "adam_learning_rate=3e-4",
        ]
    )
    assert fixed == {
        "attention": "luong_local_p_general",
        "units": 64,
        "window": 5,
        "input_feeding": False,
        "dropout": 0.3,
        "optimizer": "adam",
        "adam_learning_rate": 3e-4,
    }
    assert space.parse_fixed([]) == {}
    assert space.parse_fixed(["input_feeding=True"]) == {"input_feeding": True}


@pytest.mark.parametrize(
    "items, message",
    [
        (["units"], "NAME=VALUE"),
        (["colour=blue"], "unknown dimension 'colour'"),
        (["attention=luong_global_cosine"], "unknown value"),
        (["optimizer=rmsprop"], "expected one of bahdanau, luong, adam"),
        (["units=0"], "integer >= 1"),
        (["units=6.5"], "integer >= 1"),
        (["num_layers=two"], "integer >= 1"),
        (["dropout=1.0"], "rate in [0, 1)"),
        (["dropout=-0.1"], "rate in [0, 1)"),
        (["adam_learning_rate=0"], "number > 0"),
        (["sgd_learning_rate=nan"], "number > 0"),
        (["input_feeding=maybe"], "true or false"),
        (["units=32", "units=64"], "given twice"),
        (["units="], "has no value"),
        (["attention=bahdanau", "window=5"], "window applies only when attention is one of"),
        (["attention=bahdanau", "input_feeding=true"], "has no effect"),
        (["optimizer=adam", "sgd_learning_rate=0.5"], "has no effect"),
    ],
)
def test_parse_fixed_errors(items, message):
    with pytest.raises(ValueError) as info:
        space.parse_fixed(items)
    assert message in str(info.value)


def test_check_fixed_rejects_non_dict():
    with pytest.raises(ValueError, match="dict"):
        space.check_fixed([("units", 3)])


def test_declare_respects_fixed_and_conditions():
    hp = keras_tuner.HyperParameters()
    values = space.declare(hp, "tiny", {"attention": "bahdanau", "units": 48})
    assert values["attention"] == "bahdanau" and values["units"] == 48
    # Luong-only and local-only dimensions are declared (the tuner must see them) but inactive.
    assert {"window", "input_feeding", "num_layers", "dropout"}.isdisjoint(values)
    assert {"window", "input_feeding", "num_layers", "dropout"} <= {h.name for h in hp.space}
    assert not hp.is_active("window")

    hp = keras_tuner.HyperParameters()
    values = space.declare(hp, "tiny", {"attention": "luong_local_m_dot", "optimizer": "luong"})
    assert {"window", "input_feeding", "num_layers", "dropout", "sgd_learning_rate"} <= set(values)
    assert "adam_learning_rate" not in values


def test_space_bounds_follow_size():
    for size, units in (("tiny", 32), ("base", 512)):
        hp = keras_tuner.HyperParameters()
        space.declare(hp, size)
        assert hp.get("units") == units  # the default is the preset's size
        assert list(hp._hps["units"][0].values) == [units // 2, units, units * 2]
    with pytest.raises(ValueError, match="Unknown size 'huge'"):
        space.declare(keras_tuner.HyperParameters(), "huge")


def test_model_arguments_build_every_attention():
    for attention in space.ATTENTIONS:
        hp = keras_tuner.HyperParameters()
        values = space.declare(hp, "tiny", {"attention": attention, "units": 16})
        preset, overrides = space.model_arguments(values, "tiny", max_source_length=40)
        assert preset in models.presets()
        model = models.build(
            preset, "tiny", source_vocab_size=20, target_vocab_size=30, **overrides
        )
        decoder = model.get_layer("decoder")
        assert decoder.units == 16
        if attention.startswith("luong_local"):
            assert decoder.attention.window == overrides["window"]
        if attention == "luong_global_location":
            assert overrides["max_length"] == 40


def test_optimizer_arguments():
    assert space.optimizer_arguments({"optimizer": "adam", "adam_learning_rate": 0.01}) == (
        "adam",
        0.01,
    )
    assert space.optimizer_arguments({"optimizer": "luong", "sgd_learning_rate": 0.5}) == (
        "luong",
        0.5,
    )
    assert space.optimizer_arguments({"optimizer": "bahdanau"}) == ("bahdanau", None)
