"""`zoo.training.train` called from Python without settings trains as the recipes do: the
training profile of the model's family (zoo/workflow/run.py passes the same settings
explicitly)."""

import keras
import numpy as np
from training_toy import toy_dataset, toy_model

import zoo
from zoo import training
from zoo.training.settings import TRAINING_DEFAULTS

VOCAB = 12  # the toy corpus's


def _model():
    keras.utils.set_random_seed(11)
    return zoo.models.build(
        "bahdanau_rnnsearch", "tiny", source_vocab_size=VOCAB, target_vocab_size=VOCAB
    )


def _weights(model):
    return np.concatenate([np.ravel(w) for w in model.get_weights()])


def _data(epoch):  # one batch per epoch, so that the halving comes after few steps
    return toy_dataset(epoch, seed=5, n=8, batch_size=8)


def test_train_without_settings_trains_as_the_recipes_do(tmp_path):
    profile = TRAINING_DEFAULTS["bahdanau"]
    steps = profile["decay_after"] + 2  # two steps at the halved rates
    model = _model()
    default = training.train(model, _data, out_dir=tmp_path / "default", max_steps=steps, verbose=0)
    # What a recipe does (zoo/workflow/run.py), every setting explicit.
    recipe_model = _model()
    optimizer = training.make_optimizer(
        profile["optimizer"],
        steps_per_epoch=1,
        dropout=zoo.models.model_dropout(recipe_model),
        decay_after_epochs=profile["decay_after"],
    )
    limit = training.TimeLimit(
        profile["max_minutes"],
        schedule=training.halving_schedule(optimizer),
        epochs=profile["epochs"],
        verbose=0,
    )
    recipe = training.train(
        recipe_model,
        _data,
        out_dir=tmp_path / "recipe",
        optimizer=optimizer,
        epochs=profile["epochs"],
        max_steps=steps,
        loss_normalization=training.default_loss_normalization(profile["optimizer"]),
        callbacks=[limit],
        verbose=0,
    )
    assert default["steps"] == recipe["steps"] == steps
    np.testing.assert_array_equal(_weights(model), _weights(recipe_model))
    assert [r["train_loss"] for r in default["history"]] == [
        r["train_loss"] for r in recipe["history"]
    ]
    # The profile's time limit planned the profile's halving over its epochs.
    plan = default["time_plan"]
    assert plan["minutes"] == profile["max_minutes"] and plan["epochs"] == profile["epochs"]
    assert plan["configured_decay_after_epochs"] == profile["decay_after"]
    assert (tmp_path / "default" / "checkpoints" / training.TIME_PLAN_FILE).exists()


def test_an_optimizer_given_leaves_the_profile_out(tmp_path):
    # Without the profile: 1 epoch (here of 8 batches), no time limit, a constant rate.
    data = toy_dataset(0, seed=5, n=16, batch_size=8)
    summary = training.train(toy_model(), data, out_dir=tmp_path, optimizer="adam", verbose=0)
    assert summary["steps"] == 2 and summary["epochs"] == 1
    assert summary["time_plan"] is None
