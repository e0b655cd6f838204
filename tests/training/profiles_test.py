"""The optimizer table and the training profiles: the descriptions say what `make_optimizer`
builds, and `train`'s settings come from the profile in effect (zoo/training/settings.py)."""

import re

import keras
import pytest
from training_toy import toy_model

import zoo
from zoo import training
from zoo.training.optimizers import OPTIMIZER_SETTINGS, describe_optimizer
from zoo.training.settings import (
    FAMILIES,
    OPTIMIZER_DESCRIPTIONS,
    PAPER_TRAINING,
    TRAINING_DEFAULTS,
    model_family,
    resolve_settings,
    training_profile,
)

NUMBER = r"(\d[\d.]*(?:e-?\d+)?)"
# The words of a description before each number, and the Keras config key of that number.
DESCRIBED = {
    "learning rate": "learning_rate",
    "rho": "rho",
    "eps": "epsilon",
    "clipped at": "global_clipnorm",
}


def described_numbers(description):
    """{Keras config key: value} of the numbers a description states."""
    found = {}
    for words, key in DESCRIBED.items():
        match = re.search(rf"\b{words} {NUMBER}", description)
        if match:
            found[key] = float(match.group(1))
    return found


def built_numbers(optimizer):
    """{Keras config key: value} of a built optimizer (a schedule's initial rate)."""
    config = optimizer.get_config()
    rate = config["learning_rate"]
    if isinstance(rate, dict):
        rate = keras.optimizers.schedules.deserialize(rate).initial_learning_rate
    return {**config, "learning_rate": rate}


@pytest.mark.parametrize("name", training.OPTIMIZERS)
def test_descriptions_state_what_make_optimizer_builds(name):
    optimizer = training.make_optimizer(name, steps_per_epoch=10)
    description = OPTIMIZER_DESCRIPTIONS[name]
    assert description.startswith(type(optimizer).__name__ + " ")
    described, built = described_numbers(description), built_numbers(optimizer)
    assert {"learning_rate", "global_clipnorm"} <= set(described)
    for key, value in described.items():
        assert built[key] == pytest.approx(value, rel=1e-6), (name, key)
    # Every setting in which the optimizer differs from Keras's own defaults is stated.
    keras_defaults = type(optimizer)().get_config()
    for key in ("rho", "epsilon"):
        if key in built and built[key] != pytest.approx(keras_defaults[key]):
            assert key in described, (name, key)


@pytest.mark.parametrize("name", training.OPTIMIZERS)
def test_descriptions_state_the_halving_rule_the_optimizer_follows(name):
    plain = training.halving_schedule(training.make_optimizer(name, steps_per_epoch=10))
    dropout = training.halving_schedule(
        training.make_optimizer(name, steps_per_epoch=10, dropout=0.2)
    )
    rule = re.search(
        r"halved every epoch after epoch (\d+) \(after (\d+) with dropout\)",
        OPTIMIZER_DESCRIPTIONS[name],
    )
    if plain is None:
        assert dropout is None and "halved" not in OPTIMIZER_DESCRIPTIONS[name]
    else:
        assert rule is not None
        assert (plain.decay_after_epochs, dropout.decay_after_epochs) == tuple(
            int(x) for x in rule.groups()
        )


def test_the_descriptions_are_those_of_the_papers():
    assert OPTIMIZER_DESCRIPTIONS["bahdanau"] == (
        "Adadelta (learning rate 1, rho 0.95, eps 1e-6), gradient norm clipped at 1 "
        "(Bahdanau et al. 2014, appendix A.2.2)"
    )
    assert OPTIMIZER_DESCRIPTIONS["luong"] == (
        "SGD (learning rate 1), halved every epoch after epoch 5 (after 8 with dropout), "
        "gradient norm clipped at 5 (Luong et al. 2015, section 4.1)"
    )
    assert OPTIMIZER_DESCRIPTIONS["adam"] == (
        "Adam (learning rate 1e-3), gradient norm clipped at 1 (not the papers' choice)"
    )


def test_the_table_is_the_one_source(monkeypatch):
    # A changed entry changes what make_optimizer builds, its description and its loss
    # normalisation alike.
    monkeypatch.setitem(OPTIMIZER_SETTINGS["adam"], "learning_rate", 2.5e-4)
    monkeypatch.setitem(OPTIMIZER_SETTINGS["adam"], "clipnorm", 3.0)
    monkeypatch.setitem(OPTIMIZER_SETTINGS["adam"], "loss_normalization", "sentences")
    optimizer = training.make_optimizer("adam")
    assert float(optimizer.learning_rate) == pytest.approx(2.5e-4)
    assert optimizer.global_clipnorm == 3.0
    assert described_numbers(describe_optimizer("adam")) == {
        "learning_rate": 2.5e-4,
        "global_clipnorm": 3.0,
    }
    assert training.default_loss_normalization("adam") == "sentences"


def test_loss_normalisation_and_the_papers_profiles():
    assert training.default_loss_normalization("adam") == "tokens"
    for family in FAMILIES:
        paper = training_profile(family, paper=True)
        assert paper["optimizer"] == family  # each paper's own optimizer
        assert training.default_loss_normalization(paper["optimizer"]) == "sentences"
        assert training_profile(family) == TRAINING_DEFAULTS[family]
        assert training_profile(family) is not TRAINING_DEFAULTS[family]  # a copy
    assert PAPER_TRAINING["luong"]["epochs"] == 12 and PAPER_TRAINING["bahdanau"]["epochs"] == 10
    with pytest.raises(ValueError, match="Unknown optimizer 'sgd'"):
        training.default_loss_normalization("sgd")
    with pytest.raises(ValueError, match="Unknown family 'gnmt'"):
        training_profile("gnmt")


def test_model_family_reads_the_decoder():
    for preset in zoo.models.presets():
        model = zoo.models.build(preset, "tiny", source_vocab_size=20, target_vocab_size=20)
        assert model_family(model) == zoo.models.family(preset), preset
    assert model_family(toy_model()) is None


def _settings(model=None, **given):
    names = ("profile", "optimizer", "epochs", "max_minutes", "loss_normalization")
    return resolve_settings(model, **{name: given.get(name) for name in names})


def test_settings_without_an_optimizer_are_the_family_profile():
    model = zoo.models.build("luong_base", "tiny", source_vocab_size=20, target_vocab_size=20)
    profile = TRAINING_DEFAULTS["luong"]
    settings = _settings(model)
    assert settings["profile_name"] == "luong"
    assert settings["optimizer"] == profile["optimizer"]
    assert settings["decay_after"] == profile["decay_after"]
    assert settings["epochs"] == profile["epochs"]
    assert settings["max_minutes"] == profile["max_minutes"]
    assert settings["loss_normalization"] == "tokens"
    # Arguments given win; max_minutes=0 is no limit.
    settings = _settings(model, epochs=2, max_minutes=0, loss_normalization="sentences")
    assert (settings["epochs"], settings["max_minutes"]) == (2, None)
    assert settings["loss_normalization"] == "sentences"
    with pytest.raises(ValueError, match="cannot tell the training profile of model"):
        _settings(toy_model())


def test_settings_with_an_optimizer_leave_the_profile_out_unless_given():
    model = toy_model()
    settings = _settings(model, optimizer="luong")
    assert settings["profile"] is None and settings["decay_after"] is None
    assert (settings["epochs"], settings["max_minutes"]) == (1, None)
    assert settings["loss_normalization"] == "sentences"  # the optimizer's own
    sgd = keras.optimizers.SGD()
    assert _settings(model, optimizer=sgd)["loss_normalization"] == "tokens"
    # A paper profile with its own optimizer: the optimizer's own halving rule, no limit.
    settings = _settings(model, profile=training_profile("luong", paper=True))
    assert settings["optimizer"] == "luong" and settings["decay_after"] is None
    assert (settings["epochs"], settings["max_minutes"]) == (12, None)
    # A family's profile with another optimizer: the profile's epochs, not its halving.
    settings = _settings(model, profile="bahdanau", optimizer="luong")
    assert settings["decay_after"] is None and settings["epochs"] == 10
    with pytest.raises(ValueError, match=r"profile must be one of .*received \{'epochs': 3\}"):
        _settings(model, profile={"epochs": 3})
