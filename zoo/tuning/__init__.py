"""zoo.tuning: hyperparameter search over zoo's translation models with keras-tuner.

    result = zoo.tuning.tune("multi30k", "de", "en", tuner="bayesian", objective="bleu",
                             max_trials=20, epochs=2, size="base",
                             fixed=zoo.tuning.parse_fixed(["optimizer=adam"]),
                             directory="runs/tune")

The space, its dimensions and `--fix` rules are in `zoo.tuning.space`; the HyperModel is
`TranslationHyperModel`; `recipes/tune.py` is the command line.
"""

from zoo.tuning.runner import (
    TUNERS,
    export_best,
    format_table,
    make_tuner,
    objective_name,
    plot_by_attention,
    trial_table,
    tune,
    write_csv,
)
from zoo.tuning.space import ATTENTIONS, DIMENSIONS, check_fixed, parse_fixed
from zoo.tuning.translation_hyper_model import OBJECTIVES, TranslationHyperModel

__all__ = [
    "ATTENTIONS",
    "DIMENSIONS",
    "OBJECTIVES",
    "TUNERS",
    "TranslationHyperModel",
    "check_fixed",
    "export_best",
    "format_table",
    "make_tuner",
    "objective_name",
    "parse_fixed",
    "plot_by_attention",
    "trial_table",
    "tune",
    "write_csv",
]
