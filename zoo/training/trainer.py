"""The training loop: progress bar, TensorBoard, checkpoints, exact resume, best model.

Why a custom loop and not `model.fit` + `keras.callbacks.BackupAndRestore(save_freq=N)`:
in Keras 3.15 BackupAndRestore records the batch index in its metadata but on restore only
sets `model._initial_epoch`; the interrupted epoch is replayed from its first batch with
the mid-epoch weights, so a resumed run neither sees the same data order nor ends with
the weights of an uninterrupted run. Keras also clips gradients per replica, before the
all-reduce, which is not the papers' global-norm clipping when there are several replicas.
The loop below fixes both.

Exact resume: a checkpoint holds every model variable (dropout seed-generator states
included), every optimizer variable (iteration counter, so the learning-rate schedule
continues; slots; loss scale) and the position (epoch, batches done in the epoch). Give
`train_data` as a function `epoch -> tf.data.Dataset` whose shuffling is seeded by
`seed + epoch`: on resume the trainer rebuilds that epoch's dataset and skips the batches
already done, so the resumed run sees exactly the batches the uninterrupted run saw.
"""

import math
import os
import shutil
import time

import keras
import tensorflow as tf
from tensorflow.core.framework import summary_pb2

from zoo.checks import check_rate
from zoo.training.checkpoint_manager import CheckpointManager
from zoo.training.losses import masked_smoothed_loss_sum, masked_token_stats, perplexity
from zoo.training.optimizers import make_optimizer
from zoo.training.precision import needs_loss_scaling
from zoo.training.strategy import is_chief

_SUM = tf.distribute.ReduceOp.SUM
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
).SerializeToString()


def _scalar(name, value):
    """A TensorBoard scalar through TF core's `tf.summary.write` (no tensorboard package)."""
    tf.summary.write(name, tf.constant(float(value), tf.float32), metadata=_SCALAR_METADATA)


def _to_float(value):
    """float() of a tensor or Keras variable, also a distributed (mirrored) one."""
    if isinstance(value, keras.Variable):
        value = value.value
    return float(tf.convert_to_tensor(value).numpy())


def _stats(loss_sum, correct, tokens, prefix=""):
    tokens = float(tokens)
    loss = float(loss_sum) / tokens if tokens else float("nan")
    return {
        f"{prefix}loss": loss,
        f"{prefix}ppl": perplexity(loss) if tokens else float("nan"),
        f"{prefix}accuracy": float(correct) / tokens if tokens else float("nan"),
        f"{prefix}tokens": int(tokens),
    }


def _step_function(fn, strategy, dataset):
    """`fn(batch)` as a `tf.function` for the batches of `dataset`.

    Under the default strategy the batches are plain tensors, so the function is traced
    once, with every dimension unknown, instead of again for new batch shapes (tracing a
    decoder loop and its gradient takes seconds). Distributed batches keep
    `reduce_retracing`."""
    spec = dataset.element_spec
    ranks = [s.shape.rank for s in tf.nest.flatten(spec)]
    default = strategy is tf.distribute.get_strategy() and not tf.distribute.has_strategy()
    if default and None not in ranks:
        relaxed = tf.nest.map_structure(
            lambda s: tf.TensorSpec([None] * s.shape.rank, s.dtype, name=s.name), spec
        )
        return tf.function(fn, input_signature=[relaxed])
    return tf.function(fn, reduce_retracing=True)


def _make_eval_step(model, strategy, dataset):
    def replica_eval(inputs, targets):
        logits = model(inputs, training=False)
        return masked_token_stats(targets, logits)

    def eval_step(batch):
        per_replica = strategy.run(replica_eval, args=tuple(batch))
        return [strategy.reduce(_SUM, x, axis=None) for x in per_replica]

    return _step_function(eval_step, strategy, dataset)


def _run_eval(eval_step, dataset, strategy, verbose):
    total = [0.0, 0.0, 0.0]
    n = int(dataset.cardinality())
    bar = keras.utils.Progbar(n if n > 0 else None, unit_name="batch") if verbose else None
    for i, batch in enumerate(strategy.experimental_distribute_dataset(dataset)):
        out = eval_step(batch)
        total = [t + float(x) for t, x in zip(total, out, strict=True)]
        if bar:
            bar.update(i + 1, [("loss", total[0] / max(total[2], 1.0))])
    if not total[2]:
        raise ValueError(
            "Cannot evaluate on a dataset with no target tokens (every target_out_ids entry is "
            f"padding, or the dataset is empty; received {n} batches)."
        )
    return _stats(*total)


def evaluate(model, dataset, *, strategy=None, verbose=0):
    """Masked loss, perplexity and token accuracy of `model` on `dataset`.

    Args:
        model: a translation model ({"source_ids", "target_ids"} -> logits).
        dataset: a tf.data.Dataset of `(inputs, target_out_ids)` batches.
        strategy: the tf.distribute strategy the model was built under (default: current).

    Returns:
        {"loss", "ppl", "accuracy", "tokens"}: token-weighted over the whole dataset.

    Raises:
        ValueError: when the dataset holds no real (non-padding) target token.
    """
    strategy = strategy or tf.distribute.get_strategy()
    return _run_eval(_make_eval_step(model, strategy, dataset), dataset, strategy, verbose)


def _epoch_dataset(train_data, epoch):
    dataset = train_data(epoch) if callable(train_data) else train_data
    if not isinstance(dataset, tf.data.Dataset):
        raise ValueError(
            "train_data must be a tf.data.Dataset or a function epoch -> tf.data.Dataset; "
            f"received {type(dataset).__name__}."
        )
    return dataset


def _save_model(model, path):
    tmp = path[: -len(".keras")] + ".tmp.keras"
    model.save(tmp)
    os.replace(tmp, path)


def train(
    model,
    train_data,
    val_data=None,
    *,
    out_dir,
    optimizer="adam",
    epochs=1,
    max_steps=None,
    steps_per_epoch=None,
    checkpoint_every=500,
    keep_checkpoints=3,
    resume=True,
    strategy=None,
    jit_compile=False,
    label_smoothing=0.0,
    callbacks=None,
    log_every=50,
    verbose=1,
):
    """Trains `model` with masked token cross-entropy; resumable; returns a metrics dict.

    Args:
        model: a built translation model, created inside `strategy.scope()`.
        train_data: `tf.data.Dataset` of `({"source_ids", "target_ids"}, target_out_ids)`
            batches, or a function `epoch -> Dataset` (seed its shuffle with `seed + epoch`
            for exact resumption).
        val_data: optional Dataset of the same structure; evaluated at each epoch end and
            when training stops. The best weights by validation loss are saved to
            `out_dir/model.keras` (without `val_data`: the final weights).
        out_dir: folder for `checkpoints/`, `logs/` (TensorBoard: train, validation) and
            `model.keras`.
        optimizer: a name for `make_optimizer` ("adam", "bahdanau", "luong") or a Keras
            optimizer created inside `strategy.scope()`. It is wrapped in a
            `LossScaleOptimizer` when the model computes in float16.
        epochs: number of passes over `train_data`.
        max_steps: stop after this many optimizer steps in total (None: no limit).
        steps_per_epoch: steps in one epoch: sets the progress bar's length and is passed
            to `make_optimizer` when `optimizer` is a name.
        checkpoint_every: write a checkpoint every this many steps (and at each epoch end
            and when training stops); a crash loses at most this many steps.
        keep_checkpoints: how many recent checkpoints to keep.
        resume: continue from the newest checkpoint in `out_dir/checkpoints` if one exists.
            False deletes the old checkpoints and starts from the model's current weights.
        strategy: the `tf.distribute.Strategy` the model was built under (default: current).
        jit_compile: compile the per-replica train step with XLA.
        label_smoothing: eps in [0, 1): train on the label-smoothed cross-entropy
            (`masked_smoothed_loss_sum`). The reported loss, perplexity and the choice of
            the best model stay on the plain cross-entropy.
        callbacks: `keras.callbacks.Callback`s; they get on_train_begin/end,
            on_epoch_begin/end and on_train_batch_end (logs: loss, ppl, accuracy, step).
            Setting `model.stop_training = True` stops after the current step.
        log_every: TensorBoard scalars every this many steps.
        verbose: 1 shows progress bars and a line per epoch (chief only), 0 is silent.

    Returns:
        dict with `steps`, `epochs` (completed, fractional), `train_time_s` (time in train
        steps, summed over resumed runs), `target_tokens`, `tokens_per_s`, `train_loss`,
        `train_ppl`, `train_accuracy` (current epoch so far, or the last full epoch), `val_loss`,
        `val_ppl`, `val_accuracy`, `best_val_loss`, `model_path`, `resumed_from_step`.
    """
    if int(epochs) < 1:
        raise ValueError(f"epochs must be >= 1; received {epochs!r}.")
    if max_steps is not None and int(max_steps) < 1:
        raise ValueError(f"max_steps must be >= 1 or None; received {max_steps!r}.")
    if int(checkpoint_every) < 1:
        raise ValueError(f"checkpoint_every must be >= 1; received {checkpoint_every!r}.")
    label_smoothing = check_rate("train", "label_smoothing", label_smoothing)
    strategy = strategy or tf.distribute.get_strategy()
    chief = is_chief(strategy)
    show = bool(verbose) and chief
    out_dir = str(out_dir)
    ckpt_dir = os.path.join(out_dir, "checkpoints")
    model_path = os.path.join(out_dir, "model.keras")
    if chief:
        os.makedirs(out_dir, exist_ok=True)
        if not resume:
            shutil.rmtree(ckpt_dir, ignore_errors=True)

    with strategy.scope():
        if isinstance(optimizer, str):
            optimizer = make_optimizer(optimizer, steps_per_epoch=steps_per_epoch)
        if needs_loss_scaling(model) and not isinstance(
            optimizer, keras.optimizers.LossScaleOptimizer
        ):
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
        if not optimizer.built:
            optimizer.build(model.trainable_variables)
    loss_scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    inner = optimizer.inner_optimizer if loss_scaled else optimizer
    replicas = strategy.num_replicas_in_sync
    clipnorm = inner.global_clipnorm
    trainable = model.trainable_variables

    def replica_train(inputs, targets):
        context = tf.distribute.get_replica_context()
        with tf.GradientTape() as tape:
            logits = model(inputs, training=True)
            loss_sum, correct, tokens = masked_token_stats(targets, logits)
            objective = loss_sum
            if label_smoothing:
                objective = masked_smoothed_loss_sum(targets, logits, label_smoothing)
            global_tokens = context.all_reduce(_SUM, tokens)
            loss = objective / tf.maximum(global_tokens, 1.0)
            scaled_loss = optimizer.scale_loss(loss)
        grads = tape.gradient(scaled_loss, trainable)
        if replicas > 1 and clipnorm:
            # Keras clips each replica's partial gradient before its all-reduce; clip the
            # summed gradient instead (the papers' rule), then hand each replica 1/n of it,
            # which is below the threshold so Keras' own clipping leaves it unchanged.
            grads = [
                tf.convert_to_tensor(g) if g is not None else tf.zeros_like(v)
                for g, v in zip(grads, trainable, strict=True)
            ]
            grads = context.all_reduce(_SUM, grads)
            threshold = clipnorm * (optimizer.dynamic_scale if loss_scaled else 1.0)
            grads, _ = tf.clip_by_global_norm(grads, threshold)
            grads = [g / replicas for g in grads]
        optimizer.apply(grads, trainable)
        return loss_sum, correct, tokens

    replica_fn = tf.function(replica_train, jit_compile=True) if jit_compile else replica_train

    def train_batch(batch):
        per_replica = strategy.run(replica_fn, args=tuple(batch))
        return [strategy.reduce(_SUM, x, axis=None) for x in per_replica]

    train_step = None  # compiled from the first epoch's dataset (its element_spec)
    eval_step = _make_eval_step(model, strategy, val_data) if val_data is not None else None
    manager = CheckpointManager(ckpt_dir, model, optimizer, keep=keep_checkpoints)
    state = manager.restore() if resume else None
    resumed_from = state["step"] if state else None
    if state is None:
        state = {
            "epoch": 0,  # current epoch (0-based); == epochs when done
            "batch": 0,  # batches of the current epoch already trained
            "step": 0,
            "epoch_sums": [0.0, 0.0, 0.0],  # loss_sum, correct, tokens of the current epoch
            "last_train": None,
            "val": None,
            "best_val_loss": None,
            "train_time_s": 0.0,
            "target_tokens": 0,
        }
    elif show:
        print(
            f"Resuming from step {state['step']} (epoch {state['epoch'] + 1}, "
            f"batch {state['batch']}) in {ckpt_dir}"
        )

    writer = (
        tf.summary.create_file_writer(os.path.join(out_dir, "logs", "train"))
        if chief
        else tf.summary.create_noop_writer()
    )
    val_writer = (
        tf.summary.create_file_writer(os.path.join(out_dir, "logs", "validation"))
        if chief
        else tf.summary.create_noop_writer()
    )
    callback_list = keras.callbacks.CallbackList(
        callbacks,
        add_history=False,
        add_progbar=False,
        model=model,
        epochs=epochs,
        steps=steps_per_epoch,
    )
    model.stop_training = False
    last_saved = [state["step"] if resumed_from is not None else -1]

    def save_checkpoint():
        if chief and last_saved[0] != state["step"]:
            manager.save(state["step"], state)
        last_saved[0] = state["step"]

    def validate():
        if val_data is None:
            return
        metrics = _run_eval(eval_step, val_data, strategy, verbose=0)
        state["val"] = metrics
        with val_writer.as_default(step=state["step"]):
            for key in ("loss", "ppl", "accuracy"):
                _scalar(key, metrics[key])
        best = state["best_val_loss"]
        if math.isfinite(metrics["loss"]) and (best is None or metrics["loss"] < best):
            state["best_val_loss"] = metrics["loss"]
            if chief:
                _save_model(model, model_path)

    def done():
        return max_steps is not None and state["step"] >= max_steps

    callback_list.on_train_begin()
    while state["epoch"] < epochs and not done() and not model.stop_training:
        epoch = state["epoch"]
        dataset = _epoch_dataset(train_data, epoch)
        if train_step is None:
            train_step = _step_function(train_batch, strategy, dataset)
        if state["batch"]:
            dataset = dataset.skip(state["batch"])
        target = steps_per_epoch
        if target is None and int(dataset.cardinality()) > 0:
            target = int(dataset.cardinality()) + state["batch"]
        bar = None
        if show:
            print(f"Epoch {epoch + 1}/{epochs}")
            bar = keras.utils.Progbar(
                target, stateful_metrics=["loss", "ppl", "acc", "lr", "tok/s"]
            )
        callback_list.on_epoch_begin(epoch)
        finished_epoch = True
        session_start, session_tokens = time.perf_counter(), 0
        for batch in strategy.experimental_distribute_dataset(dataset):
            if done() or model.stop_training:
                finished_epoch = False
                break
            t0 = time.perf_counter()
            loss_sum, correct, tokens = (float(x) for x in train_step(batch))
            state["train_time_s"] += time.perf_counter() - t0
            state["step"] += 1
            state["batch"] += 1
            state["target_tokens"] += int(tokens)
            session_tokens += int(tokens)
            sums = state["epoch_sums"]
            state["epoch_sums"] = [sums[0] + loss_sum, sums[1] + correct, sums[2] + tokens]
            logs = _stats(*state["epoch_sums"])
            step_loss = loss_sum / max(tokens, 1.0)
            if bar:
                rate = session_tokens / max(time.perf_counter() - session_start, 1e-9)
                bar.update(
                    state["batch"],
                    [
                        ("loss", logs["loss"]),
                        ("ppl", logs["ppl"]),
                        ("acc", logs["accuracy"]),
                        ("tok/s", rate),
                    ],
                )
            if state["step"] % log_every == 0 or state["step"] == 1:
                with writer.as_default(step=state["step"]):
                    _scalar("batch_loss", step_loss)
                    _scalar("learning_rate", _to_float(inner.learning_rate))
                    if loss_scaled:
                        _scalar("loss_scale", _to_float(optimizer.dynamic_scale))
            if state["step"] % checkpoint_every == 0:
                save_checkpoint()
            callback_list.on_train_batch_end(
                state["batch"] - 1,
                {
                    "loss": step_loss,
                    "ppl": perplexity(step_loss),
                    "accuracy": correct / max(tokens, 1.0),
                    "step": state["step"],
                },
            )
        if finished_epoch and state["batch"] == 0:
            raise ValueError(f"train_data for epoch {epoch} yielded no batches.")
        if not finished_epoch:
            break
        train_metrics = _stats(*state["epoch_sums"])
        state["last_train"] = train_metrics
        with writer.as_default(step=state["step"]):
            for key in ("loss", "ppl", "accuracy"):
                _scalar(f"epoch_{key}", train_metrics[key])
        validate()
        state.update(epoch=epoch + 1, batch=0, epoch_sums=[0.0, 0.0, 0.0])
        save_checkpoint()
        logs = {k: v for k, v in train_metrics.items() if k != "tokens"}
        if state["val"]:
            logs.update({f"val_{k}": v for k, v in state["val"].items() if k != "tokens"})
        if show:
            print("  ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        callback_list.on_epoch_end(epoch, logs)

    if last_saved[0] != state["step"]:  # stopped mid-epoch: validate and checkpoint here
        validate()
        save_checkpoint()
    elif val_data is not None and state["val"] is None:
        validate()
    if chief and (val_data is None or not os.path.exists(model_path)):
        _save_model(model, model_path)
    writer.flush()
    val_writer.flush()
    callback_list.on_train_end()

    train_metrics = (
        _stats(*state["epoch_sums"]) if state["epoch_sums"][2] else state["last_train"]
    ) or {}
    val = state["val"] or {}
    spe = steps_per_epoch or (state["step"] / state["epoch"] if state["epoch"] else None)
    return {
        "steps": state["step"],
        "epochs": state["epoch"] + (state["batch"] / spe if spe else 0.0),
        "train_time_s": state["train_time_s"],
        "target_tokens": state["target_tokens"],
        "tokens_per_s": state["target_tokens"] / max(state["train_time_s"], 1e-9),
        "train_loss": train_metrics.get("loss"),
        "train_ppl": train_metrics.get("ppl"),
        "train_accuracy": train_metrics.get("accuracy"),
        "val_loss": val.get("loss"),
        "val_ppl": val.get("ppl"),
        "val_accuracy": val.get("accuracy"),
        "best_val_loss": state["best_val_loss"],
        "model_path": model_path,
        "resumed_from_step": resumed_from,
    }
