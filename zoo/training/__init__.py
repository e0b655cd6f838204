"""zoo.training: loss, the papers' optimisers, precision, strategies and the training loop.

Called without settings, `train` trains as the recipes do (the training profile of the
model's family, `training_profile`: Adam halved after `decay_after` epochs, the profile's
epochs and time limit):

    summary = training.train(model, train_ds, val_ds, out_dir="run")

What a recipe does, each setting explicit:

    from zoo import training
    training.set_precision(args.precision)            # before building the model
    strategy = training.make_strategy(args.strategy)  # before any other TF op for multiworker
    with strategy.scope():
        model = zoo.models.build(...)
        optimizer = training.make_optimizer("luong", steps_per_epoch=n, dropout=0.2)
    summary = training.train(model, lambda epoch: make_ds(seed + epoch), val_ds,
                             out_dir=out, optimizer=optimizer, epochs=12,
                             steps_per_epoch=n, checkpoint_every=500, strategy=strategy)

A larger batch than the device holds, and early stopping on validation BLEU:

    bleu = training.ValidationBleu(source_tokenizer, target_tokenizer, val.source, val.target)
    summary = training.train(model, train_ds, val_ds, out_dir="run", accumulate_steps=4,
                             validation_metric="bleu", validation_bleu=bleu, early_stopping=3)
"""

from zoo.training.callbacks import (
    TIME_PLAN_FILE,
    VALIDATION_METRICS,
    TimeLimit,
    TrainingInterrupted,
    ValidationBleu,
    plan_halving,
    restore_time_plan,
)
from zoo.training.checkpoints import CheckpointManager, DamagedCheckpointError, average_checkpoints
from zoo.training.evaluation import evaluate
from zoo.training.losses import (
    LOSS_NORMALIZATIONS,
    keras_loss,
    loss_denominator,
    masked_accuracy,
    masked_cross_entropy,
    masked_smoothed_loss_sum,
    masked_token_stats,
    perplexity,
)
from zoo.training.optimizers import (
    OPTIMIZER_SETTINGS,
    OPTIMIZERS,
    LuongSchedule,
    default_loss_normalization,
    describe_optimizer,
    luong_decay_after,
    make_optimizer,
)
from zoo.training.settings import (
    FAMILIES,
    OPTIMIZER_DESCRIPTIONS,
    PAPER_TRAINING,
    TRAINING_DEFAULTS,
    model_family,
    training_profile,
)
from zoo.training.strategy import (
    AUTO,
    PRECISIONS,
    STRATEGIES,
    PerWorkerDataset,
    auto_precision,
    cpu_flags,
    is_chief,
    make_strategy,
    needs_loss_scaling,
    set_precision,
)
from zoo.training.train_step import (
    TRAINING_BACKENDS,
    check_training_backend,
    group_batches,
    halving_schedule,
    updates_per_epoch,
)
from zoo.training.trainer import train

__all__ = [
    "CheckpointManager",
    "DamagedCheckpointError",
    "FAMILIES",
    "LOSS_NORMALIZATIONS",
    "LuongSchedule",
    "OPTIMIZERS",
    "OPTIMIZER_DESCRIPTIONS",
    "OPTIMIZER_SETTINGS",
    "PAPER_TRAINING",
    "AUTO",
    "PRECISIONS",
    "PerWorkerDataset",
    "STRATEGIES",
    "TIME_PLAN_FILE",
    "TRAINING_BACKENDS",
    "TRAINING_DEFAULTS",
    "TimeLimit",
    "TrainingInterrupted",
    "VALIDATION_METRICS",
    "ValidationBleu",
    "average_checkpoints",
    "check_training_backend",
    "default_loss_normalization",
    "describe_optimizer",
    "evaluate",
    "group_batches",
    "halving_schedule",
    "is_chief",
    "keras_loss",
    "loss_denominator",
    "luong_decay_after",
    "make_optimizer",
    "make_strategy",
    "masked_accuracy",
    "masked_cross_entropy",
    "masked_smoothed_loss_sum",
    "masked_token_stats",
    "model_family",
    "needs_loss_scaling",
    "perplexity",
    "plan_halving",
    "restore_time_plan",
    "set_precision",
    "auto_precision",
    "cpu_flags",
    "train",
    "training_profile",
    "updates_per_epoch",
]
