"""The training profiles: the recipes' defaults and the papers' own settings, by family.

A profile is what `python recipes/<row>.py` trains with unless a flag says otherwise, and
what `zoo.training.train` falls back to when called from Python without an optimizer (the
profile of the model's family, `model_family`). The command line (`zoo.workflow.training_flags`)
renders these values in `--help`; it holds none of its own.

- `TRAINING_DEFAULTS`: the best settings found for Multi30k on a 2-core CPU within an hour
  (measured results: docs/training.md): Adam, with its learning rate halved every epoch
  after `decay_after` epochs, and a time limit.
- `PAPER_TRAINING` (`--optimizer paper`): each paper's own optimizer (its halving rule and
  loss normalisation come with it), batch size and epochs, without a time limit: Bahdanau
  et al. 2014 appendix A.2.2, Luong et al. 2015 section 4.1.

A profile's optimizer settings (learning rate, clipping, halving rule, loss normalisation)
are those of its optimizer's name in `zoo.training.optimizers.OPTIMIZER_SETTINGS`.
"""

from zoo.data import DEFAULT_BATCH_SIZE
from zoo.models import BahdanauDecoder, LuongDecoder, RNNEncDecDecoder
from zoo.training.optimizers import OPTIMIZERS, describe_optimizer

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
