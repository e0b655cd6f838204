"""The settings `train` takes from a training profile (`zoo.training.profiles`) when its
caller leaves them out, so that `train(model, data, val, out_dir=...)` trains as the recipes
do."""

from zoo.training.optimizers import default_loss_normalization, own_decay_after
from zoo.training.per_worker import PerWorkerDataset
from zoo.training.profiles import FAMILIES, OPTIMIZER_DESCRIPTIONS, model_family, training_profile
from zoo.training.training_run import epoch_dataset

PROFILE_KEYS = ("optimizer", "epochs", "decay_after", "max_minutes")


def _profile(model, profile, optimizer):
    """(its name, the profile dict) in effect, or (None, None) when none is."""
    if profile is None:
        if optimizer is not None:
            return None, None
        family = model_family(model)
        if family is None:
            raise ValueError(
                f"train: cannot tell the training profile of model {model.name!r} (its "
                "'decoder' layer is none of zoo's decoders); pass profile= (one of "
                f"{FAMILIES}, or a dict from zoo.training.training_profile) or an optimizer."
            )
        return family, training_profile(family)
    if isinstance(profile, str):
        return profile, training_profile(profile)
    if not isinstance(profile, dict) or not set(PROFILE_KEYS) <= set(profile):
        raise ValueError(
            f"train: profile must be one of {FAMILIES}, a dict with the keys {PROFILE_KEYS} "
            f"(zoo.training.training_profile) or None; received {profile!r}."
        )
    return "given", profile


def resolve_settings(model, *, profile, optimizer, epochs, max_minutes, loss_normalization):
    """`train`'s optimizer, epochs, time limit and loss normalisation: those given, the rest
    from the profile in effect.

    The profile in effect is `profile` (a family name or a profile dict), or with
    `profile=None` and no `optimizer` the recipes' profile of the model's family
    (`training_profile(model_family(model))`); an `optimizer` given without a `profile`
    leaves the profile out. Without one: 1 epoch, no time limit.

    Returns a dict: profile (None or the dict), profile_name (its family, "given" for a
    dict, None without a profile), optimizer (a name or the optimizer given),
    decay_after (the profile's halving for its own optimizer name, else None: the
    optimizer's own rule), epochs, max_minutes (None: no limit), loss_normalization (a
    name's own, "tokens" for an optimizer object).
    """
    profile_name, profile = _profile(model, profile, optimizer)
    settings = dict(profile=profile, profile_name=profile_name, decay_after=None)
    settings["optimizer"] = profile["optimizer"] if optimizer is None else optimizer
    name = settings["optimizer"] if isinstance(settings["optimizer"], str) else None
    if profile is not None and name == profile["optimizer"]:
        settings["decay_after"] = profile["decay_after"]
    if epochs is None:
        epochs = profile["epochs"] if profile is not None else 1
    if max_minutes is None and profile is not None:
        max_minutes = profile["max_minutes"]
    settings.update(epochs=epochs, max_minutes=max_minutes or None)
    if loss_normalization is None:
        loss_normalization = default_loss_normalization(name) if name else "tokens"
    settings["loss_normalization"] = loss_normalization
    return settings


def halves(settings, dropout):
    """True when the optimizer `train` builds from a name halves its learning rate per
    epoch (it then needs the steps per epoch)."""
    name = settings["optimizer"]
    if not isinstance(name, str):
        return False
    return settings["decay_after"] is not None or own_decay_after(name, dropout) is not None


def known_steps(train_data):
    """Batches per epoch of `train_data` (its first epoch's, when a function) if known
    without reading it, else None."""
    dataset = epoch_dataset(train_data, 0)
    if isinstance(dataset, PerWorkerDataset):
        return dataset.steps
    steps = int(dataset.cardinality())
    return steps if steps > 0 else None


def describe_settings(settings, steps_per_epoch):
    """One line on what the profile in effect chose, for the run's log."""
    name = settings["optimizer"]
    line = f"Training profile {settings['profile_name']}: {OPTIMIZER_DESCRIPTIONS[name]}"
    if settings["decay_after"] is not None:
        line += f"; halving after epoch {settings['decay_after']}"
        line += f", {steps_per_epoch} steps per epoch"
    line += f"; {settings['epochs']} epochs"
    if settings["max_minutes"]:
        line += f", at most {settings['max_minutes']:g} minutes"
    return line + f"; loss normalised per {settings['loss_normalization'][:-1]}"
