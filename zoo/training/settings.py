"""The training profiles: the recipes' defaults and the papers' own settings, by family.

A profile is what `python recipes/<row>.py` trains with unless a flag says otherwise, and
what `zoo.training.train` falls back to when called from Python without an optimizer (the
profile of the model's family, `model_family`). The command line (`zoo.workflow.flags`)
renders these values in `--help`; it holds none of its own.

- `TRAINING_DEFAULTS`: the best settings found for Multi30k on a 2-core CPU within an hour
  (measured results: docs/training.md): Adam, with its learning rate halved every epoch
  after `decay_after` epochs, and a time limit.
- `PAPER_TRAINING` (`--optimizer paper`): each paper's own optimizer (its halving rule and
  loss normalisation come with it), batch size and epochs, without a time limit: Bahdanau
  et al. 2014 appendix A.2.2, Luong et al. 2015 section 4.1.

A profile's optimizer settings (learning rate, clipping, halving rule, loss normalisation)
are those of its optimizer's name in `zoo.training.optimizers.OPTIMIZER_SETTINGS`.

The settings `train` takes from a training profile (`zoo.training.settings`) when its
caller leaves them out, so that `train(model, data, val, out_dir=...)` trains as the recipes
do.
"""

from zoo.data import DEFAULT_BATCH_SIZE
from zoo.models import BahdanauDecoder, LuongDecoder, RNNEncDecDecoder
from zoo.training.optimizers import (
    OPTIMIZERS,
    default_loss_normalization,
    describe_optimizer,
    own_decay_after,
)
from zoo.training.strategy import PerWorkerDataset
from zoo.training.training_run import epoch_dataset

FAMILIES = ("bahdanau", "luong")

MAX_MINUTES = 60.0  # the recipes' time limit: a good translator within the hour

TRAINING_DEFAULTS = {
    "bahdanau": dict(
        optimizer="adam",
        batch_size=DEFAULT_BATCH_SIZE,
        epochs=10,
        decay_after=5,
        max_minutes=MAX_MINUTES,
    ),
    "luong": dict(
        optimizer="adam",
        batch_size=DEFAULT_BATCH_SIZE,
        epochs=12,
        decay_after=9,
        max_minutes=MAX_MINUTES,
    ),
}

PAPER_TRAINING = {
    "bahdanau": dict(
        optimizer="bahdanau", batch_size=80, epochs=10, decay_after=None, max_minutes=None
    ),
    "luong": dict(optimizer="luong", batch_size=128, epochs=12, decay_after=None, max_minutes=None),
}

OPTIMIZER_DESCRIPTIONS = {name: describe_optimizer(name) for name in OPTIMIZERS}
"""One line per optimizer name of `make_optimizer`, for help texts and run logs."""

# The decoder classes of each family (a model's "decoder" layer tells its family).
_FAMILY_DECODERS = {"bahdanau": (BahdanauDecoder, RNNEncDecDecoder), "luong": (LuongDecoder,)}


def training_profile(family, paper=False):
    """A copy of the profile of `family` ("bahdanau" or "luong"): the recipes' defaults, or
    the paper's own settings with `paper=True`."""
    if family not in FAMILIES:
        raise ValueError(f"Unknown family {family!r}; expected one of {FAMILIES}.")
    return dict((PAPER_TRAINING if paper else TRAINING_DEFAULTS)[family])


def model_family(model):
    """ "bahdanau" or "luong": the family of a zoo translation model, told by the class of
    its layer named "decoder"; None for a model without one of zoo's decoders."""
    try:
        decoder = model.get_layer("decoder")
    except ValueError:
        return None
    for family, decoders in _FAMILY_DECODERS.items():
        if isinstance(decoder, decoders):
            return family
    return None


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
