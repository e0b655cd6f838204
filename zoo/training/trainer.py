"""`train`: the training loop of the recipes, with progress bar, TensorBoard, checkpoints,
exact resume and the best model; its defaults are the training profile of the model's family.

Why a loop of its own and not `model.fit` + `keras.callbacks.BackupAndRestore(save_freq=N)`:
in Keras 3.15 BackupAndRestore records the batch index in its metadata but on restore only
sets `model._initial_epoch`; the interrupted epoch is replayed from its first batch with
the mid-epoch weights, so a resumed run neither sees the same data order nor ends with
the weights of an uninterrupted run. Keras also clips gradients per replica, before the
all-reduce, which is not the papers' global-norm clipping when there are several replicas.
Keras 3's own `fit` under `MultiWorkerMirroredStrategy` is also reported broken
(keras-team/keras#20585). This loop (`training_run.TrainingRun`) fixes all three; it runs the
same step function as the tuner and the benchmark (`zoo.training.train_step.make_train_step`).
For everything else, `model.fit` with `zoo.training.keras_loss()` trains the same models
(docs/library.md).
"""

import os

import keras
import tensorflow as tf

from zoo.checks import check_rate
from zoo.constants import CHECKPOINT_DIR
from zoo.models import model_dropout
from zoo.training.callbacks import (
    TIME_PLAN_FILE,
    TimeLimit,
    TrainingInterrupted,
    check_patience,
    check_validation_metric,
    restore_time_plan,
)
from zoo.training.checkpoints import KEEP
from zoo.training.evaluation import evaluate
from zoo.training.optimizers import make_optimizer
from zoo.training.settings import describe_settings, halves, known_steps, resolve_settings
from zoo.training.strategy import PerWorkerDataset, is_chief
from zoo.training.train_step import (
    check_accumulate_steps,
    check_training_backend,
    group_batches,
    halving_schedule,
    make_train_step,
    prepare_optimizer,
)
from zoo.training.training_run import (
    RECORD,
    SCORES,
    MetricRun,
    TrainingRun,
    check_judging,
    epoch_dataset,
)

__all__ = ["TrainingInterrupted", "evaluate", "train"]  # the first two: also importable here


def train(
    model,
    train_data,
    val_data=None,
    *,
    out_dir,
    profile=None,
    optimizer=None,
    epochs=None,
    max_minutes=None,
    max_steps=None,
    steps_per_epoch=None,
    checkpoint_every=500,
    keep_checkpoints=KEEP,
    resume=True,
    strategy=None,
    jit_compile=False,
    label_smoothing=0.0,
    loss_normalization=None,
    accumulate_steps=1,
    validation_metric="loss",
    early_stopping=None,
    validation_bleu=None,
    callbacks=None,
    log_every=50,
    verbose=1,
):
    """Trains `model` with masked token cross-entropy; resumable; returns a metrics dict.

    Called without `optimizer`, it trains as the recipes do, with the training profile of
    the model's family (`training_profile`): its optimizer halved after its `decay_after`
    epochs, its epochs and time limit, the optimizer's loss normalisation and clipping.

    Args:
        model: a built translation model, created inside `strategy.scope()`.
        train_data: `tf.data.Dataset` of `({"source_ids", "target_ids"}, target_out_ids)`
            batches, or a function `epoch -> Dataset` (seed its shuffle with `seed + epoch`
            for exact resumption). A `PerWorkerDataset` (or a function returning one) lets
            each worker read its own shard (`zoo.data.worker_stream`).
        val_data: optional Dataset of the same structure, evaluated at each epoch end and
            when training stops; the best weights by the validation metric (the loss unless
            `validation_metric` says otherwise) are saved to `out_dir/model.keras` (without
            `val_data`: the final weights).
        out_dir: folder for `checkpoints/`, `logs/` (TensorBoard) and `model.keras`.
        profile: what the settings left as None take: "bahdanau" or "luong" (the recipes'
            defaults), a dict such as `training_profile("luong", paper=True)`, or None: the
            model family's profile without an `optimizer`, none with one. Its `batch_size`
            is the data's to apply.
        optimizer: a name for `make_optimizer` or a Keras optimizer created inside
            `strategy.scope()` (wrapped in a `LossScaleOptimizer` under float16); None: the
            profile's.
        epochs: passes over `train_data` (None: the profile's; 1 without one).
        max_minutes: stop after this many minutes (`TimeLimit`: a `LuongSchedule`'s halving
            moves earlier to fit; the plan is kept in `checkpoints/time_plan.json` for a
            resumed run). None: the profile's (no limit without one); 0: no limit.
        max_steps: stop after this many optimizer steps in total (None: no limit).
        steps_per_epoch: optimizer steps per epoch (with `accumulate_steps` N, the batches
            divided by N, rounded up: `train_step.updates_per_epoch`); sets the progress
            bar's length and the halving of an optimizer given by name (None: the first
            epoch's length, when that halving needs it).
        checkpoint_every: write a checkpoint every this many steps (and at each epoch end
            and when training stops); a crash loses at most this many steps.
        keep_checkpoints: how many recent checkpoints to keep.
        resume: continue from the newest checkpoint in `out_dir/checkpoints` if one exists.
            False deletes the old checkpoints and starts from the model's current weights.
        strategy: the `tf.distribute.Strategy` the model was built under (default: current).
        jit_compile: compile the per-replica train step with XLA.
        label_smoothing: eps in [0, 1): train on the label-smoothed cross-entropy; the
            reported loss, perplexity and best model stay on the plain cross-entropy.
        loss_normalization: divide the global batch's summed loss by its "tokens" (the mean
            per token) or "sentences" (the papers' objective: `losses.loss_denominator`).
            None: the optimizer name's own, "tokens" for an optimizer object.
        accumulate_steps: N >= 1: each optimizer step sums the gradients of N batches,
            the update of one batch N times larger (`train_step.make_train_step`; one
            replica). Steps, `max_steps`, checkpoints and the learning-rate schedule count
            these updates; an epoch's last step takes the batches left over.
        validation_metric: what judges the run at each validation: "loss" (the validation
            cross-entropy) or "bleu" (`validation_bleu` of the model); the best model and
            early stopping follow it (`zoo.training.callbacks`).
        early_stopping: stop after this many epochs in a row without improvement of the
            validation metric (None: train all the epochs). Needs `val_data`.
        validation_bleu: a function `model -> BLEU` (`ValidationBleu`), needed for
            `validation_metric="bleu"`; when given, each validation records its BLEU
            (TensorBoard, `history`'s "val_bleu").
        callbacks: `keras.callbacks.Callback`s; they get on_train_begin/end,
            on_epoch_begin/end and on_train_batch_end (logs: loss, ppl, accuracy, step).
            Setting `model.stop_training = True` stops after the current step.
        log_every: TensorBoard scalars every this many steps.
        verbose: 1 shows progress bars and a line per epoch (chief only), 0 is silent.

    Returns:
        dict with `steps`, `epochs` (completed, fractional), `train_time_s` (summed over
        resumed runs), `target_tokens`, `tokens_per_s`, `train_loss`, `train_ppl`,
        `train_accuracy` (current epoch so far, or the last full one), `val_loss`, `val_ppl`,
        `val_accuracy`, `best_val_loss`, `model_path`, `resumed_from_step`, `time_plan` (the
        halving plan fitted to the time limit, or None) and `history` (per finished epoch:
        epoch, step, train_time_s, train_loss, train_ppl, val_loss, val_ppl, val_accuracy,
        and val_bleu when scored); with a validation metric other than the loss, early
        stopping or `validation_bleu` also `validation_metric`, `val_bleu` and
        `early_stopping` (the metric's best value, its epoch and step, the epochs without
        improvement, and the epoch after which the run stopped, or None).
    """
    check_training_backend(strategy)  # TensorFlow, or JAX on one device
    _check_train_arguments(epochs, max_steps, checkpoint_every, max_minutes)
    label_smoothing = check_rate("train", "label_smoothing", label_smoothing)
    accumulate_steps = check_accumulate_steps(accumulate_steps)
    judged = dict(
        metric=check_validation_metric(validation_metric),
        patience=check_patience(early_stopping),
        bleu=validation_bleu,
    )
    plain = judged["metric"] == "loss" and judged["patience"] is None and validation_bleu is None
    if not plain:
        check_judging(**judged, val_data=val_data)
    strategy = strategy or tf.distribute.get_strategy()
    show = bool(verbose) and is_chief(strategy)
    train_data = _grouped(train_data, accumulate_steps)
    given = dict(epochs=epochs, max_minutes=max_minutes, loss_normalization=loss_normalization)
    settings = resolve_settings(model, profile=profile, optimizer=optimizer, **given)
    optimizer, steps_per_epoch = _optimizer(model, train_data, settings, strategy, steps_per_epoch)
    if show and settings["profile_name"] is not None and isinstance(settings["optimizer"], str):
        print(describe_settings(settings, steps_per_epoch))
    normalization = settings["loss_normalization"]
    step = make_train_step(
        model, optimizer, strategy=strategy, label_smoothing=label_smoothing,
        loss_normalization=normalization, jit_compile=jit_compile,
        accumulate_steps=accumulate_steps,
    )  # fmt: skip
    if show and accumulate_steps > 1:
        print(f"Each step sums the gradients of {accumulate_steps} batches (one update)")
    limit, plan = _time_limit(settings, optimizer, str(out_dir), strategy, resume, show)
    options = dict(
        out_dir=str(out_dir), strategy=strategy, resume=resume, keep_checkpoints=keep_checkpoints,
        checkpoint_every=int(checkpoint_every), log_every=log_every, show=show,
    )  # fmt: skip
    if plain:
        run = TrainingRun(model, optimizer, step, val_data, **options)
    else:
        run = MetricRun(model, optimizer, step, val_data, **options, **judged)
    callbacks = [*(callbacks or []), *([limit] if limit is not None else [])]
    epochs = settings["epochs"]
    callback_list = keras.callbacks.CallbackList(
        callbacks, add_history=False, add_progbar=False, model=model, epochs=epochs,
        steps=steps_per_epoch,
    )  # fmt: skip
    summary = run.fit(train_data, epochs, steps_per_epoch, max_steps, callback_list)
    summary["time_plan"] = limit.plan if limit is not None else plan
    if not plain:
        _add_metric_record(summary, run.state, judged["metric"])
    return summary


def _grouped(train_data, accumulate_steps):
    """`train_data` (a dataset or `epoch -> dataset`) in groups of `accumulate_steps`
    batches, the input of the accumulating step (`train_step.group_batches`)."""
    if accumulate_steps == 1:
        return train_data

    def grouped(epoch):
        dataset = epoch_dataset(train_data, epoch)
        if isinstance(dataset, PerWorkerDataset):
            raise ValueError(
                f"accumulate_steps={accumulate_steps} needs one replica; received a "
                "PerWorkerDataset (multi-worker training)."
            )
        return group_batches(dataset, accumulate_steps)

    return grouped


def _add_metric_record(summary, state, metric):
    """The summary of a `MetricRun`: its metric, its record and each validation's BLEU."""
    scores = {score["step"]: score["val_bleu"] for score in state[SCORES]}
    for record in summary["history"]:
        if record["step"] in scores:
            record["val_bleu"] = scores[record["step"]]
    summary["validation_metric"] = metric
    summary["val_bleu"] = state["val"].get("bleu") if state["val"] else None
    summary["early_stopping"] = dict(state[RECORD])


def _check_train_arguments(epochs, max_steps, checkpoint_every, max_minutes):
    if epochs is not None and int(epochs) < 1:
        raise ValueError(f"epochs must be >= 1 or None; received {epochs!r}.")
    if max_minutes is not None and not max_minutes >= 0:
        raise ValueError(
            f"max_minutes must be >= 0 (0: no limit) or None; received {max_minutes!r}."
        )
    if max_steps is not None and int(max_steps) < 1:
        raise ValueError(f"max_steps must be >= 1 or None; received {max_steps!r}.")
    if int(checkpoint_every) < 1:
        raise ValueError(f"checkpoint_every must be >= 1; received {checkpoint_every!r}.")


def _optimizer(model, train_data, settings, strategy, steps_per_epoch):
    """(the built optimizer of `settings`, the steps per epoch: counted from the first
    epoch's data when not given and an optimizer built from a name halves its rate)."""
    dropout = model_dropout(model)
    if steps_per_epoch is None and halves(settings, dropout):
        steps_per_epoch = known_steps(train_data)
    optimizer = settings["optimizer"]
    if settings["decay_after"] is not None:  # the profile's halving for its own optimizer
        with strategy.scope():
            optimizer = make_optimizer(
                optimizer,
                steps_per_epoch=steps_per_epoch,
                dropout=dropout,
                decay_after_epochs=settings["decay_after"],
            )
    optimizer = prepare_optimizer(
        optimizer, model, strategy=strategy, steps_per_epoch=steps_per_epoch
    )
    return optimizer, steps_per_epoch


def _time_limit(settings, optimizer, out_dir, strategy, resume, show):
    """The run's `TimeLimit` (None without `max_minutes`) and the halving plan a resumed
    run keeps (None if there is none), applied to the optimizer's schedule."""
    schedule = halving_schedule(optimizer)
    plan_path = os.path.join(out_dir, CHECKPOINT_DIR, TIME_PLAN_FILE)
    plan = restore_time_plan(plan_path, schedule) if resume else None
    if show and plan and plan["decay_after_epochs"] != plan.get("configured_decay_after_epochs"):
        print(
            f"Keeping this run's time plan: halving after epoch {plan['decay_after_epochs']} "
            f"(made for {plan.get('epochs')} epochs; {plan_path})",
            flush=True,
        )
    if not settings["max_minutes"]:
        return None, plan
    # A new plan only on one machine: workers timing their own steps could plan differently.
    multiworker = isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)
    planning = schedule is not None and not multiworker
    limit = TimeLimit(
        settings["max_minutes"],
        schedule=schedule if planning else None,
        epochs=settings["epochs"],
        plan_path=plan_path if planning and is_chief(strategy) else None,
        plan=plan,
        verbose=int(show),
    )
    return limit, plan
