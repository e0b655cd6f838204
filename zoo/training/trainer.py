"""The training loop: progress bar, TensorBoard, checkpoints, exact resume, best model.

Why a custom loop and not `model.fit` + `keras.callbacks.BackupAndRestore(save_freq=N)`:
in Keras 3.15 BackupAndRestore records the batch index in its metadata but on restore only
sets `model._initial_epoch`; the interrupted epoch is replayed from its first batch with
the mid-epoch weights, so a resumed run neither sees the same data order nor ends with
the weights of an uninterrupted run. Keras also clips gradients per replica, before the
all-reduce, which is not the papers' global-norm clipping when there are several replicas.
Keras 3's own `fit` under `MultiWorkerMirroredStrategy` is also reported broken
(keras-team/keras#20585). The loop below fixes all three; it runs the same step function as
the tuner and the benchmark (`zoo.training.train_step.make_train_step`). For everything
else, `model.fit` with `zoo.training.keras_loss()` trains the same models (README).

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
import signal
import threading
import time

import keras
import tensorflow as tf

from zoo.checks import check_rate
from zoo.training.checkpoint_manager import CheckpointManager
from zoo.training.losses import masked_token_stats, perplexity
from zoo.training.per_worker import PerWorkerDataset
from zoo.training.strategy import is_chief
from zoo.training.train_step import (
    compile_step,
    inner_optimizer,
    make_train_step,
    prepare_optimizer,
)

_SUM = tf.distribute.ReduceOp.SUM


class TrainingInterrupted(KeyboardInterrupt):
    """Raised by `train` after SIGINT (Ctrl-C) or SIGTERM (a preempted machine): the step in
    flight finished and a checkpoint of it was written, so a re-run with `resume` loses
    nothing. `exit_code` is the shell's 128 + signal (130, 143). A `KeyboardInterrupt`, so
    that code catching `Exception` (keras-tuner's trial loop) lets it through."""

    def __init__(self, signum, step, checkpoint_dir):
        self.signum, self.step, self.checkpoint_dir = signum, step, checkpoint_dir
        self.exit_code = 128 + int(signum)
        name = signal.Signals(signum).name
        super().__init__(
            f"{name} at step {step}: checkpoint written in {checkpoint_dir}; run the same "
            "command again to resume from it."
        )


class _DeferredSignals:
    """SIGINT and SIGTERM, while training, end the run after the current step (a second
    Ctrl-C stops at once). Only in the main thread, where Python runs signal handlers."""

    def __init__(self):
        self.received = None
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame):
        if signum == signal.SIGINT and self.received == signal.SIGINT:
            raise KeyboardInterrupt
        self.received = signum

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            if handler is not None:  # None: a handler installed from C, not restorable
                signal.signal(signum, handler)
        return False


def _scalar(name, value):
    """A TensorBoard scalar at the default writer's step (`tf.summary.scalar`)."""
    tf.summary.scalar(name, float(value))


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


def _make_eval_step(model, strategy, dataset):
    def replica_eval(inputs, targets):
        logits = model(inputs, training=False)
        return masked_token_stats(targets, logits)

    def eval_step(batch):
        per_replica = strategy.run(replica_eval, args=tuple(batch))
        return [strategy.reduce(_SUM, x, axis=None) for x in per_replica]

    return compile_step(eval_step, dataset, strategy)


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


def _epoch_record(epoch, state, train_metrics):
    """The line of `history` for a finished epoch (1-based), with its validation figures."""
    record = {
        "epoch": epoch + 1,
        "step": state["step"],
        "train_time_s": round(state["train_time_s"], 1),
        "train_loss": train_metrics["loss"],
        "train_ppl": train_metrics["ppl"],
    }
    if state["val"]:
        val = state["val"]
        record.update(val_loss=val["loss"], val_ppl=val["ppl"], val_accuracy=val["accuracy"])
    return record


def _epoch_dataset(train_data, epoch):
    dataset = train_data(epoch) if callable(train_data) else train_data
    if not isinstance(dataset, (tf.data.Dataset, PerWorkerDataset)):
        raise ValueError(
            "train_data must be a tf.data.Dataset, a zoo.training.PerWorkerDataset or a "
            f"function epoch -> either; received {type(dataset).__name__}."
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
    loss_normalization="tokens",
    callbacks=None,
    log_every=50,
    verbose=1,
):
    """Trains `model` with masked token cross-entropy; resumable; returns a metrics dict.

    Args:
        model: a built translation model, created inside `strategy.scope()`.
        train_data: `tf.data.Dataset` of `({"source_ids", "target_ids"}, target_out_ids)`
            batches, or a function `epoch -> Dataset` (seed its shuffle with `seed + epoch`
            for exact resumption). A `PerWorkerDataset` (or a function returning one) lets
            each worker read its own shard (`zoo.data.worker_stream`).
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
        loss_normalization: "tokens" minimises the summed loss over the global batch's
            real target tokens (mean per token); "sentences" divides it by the number of
            sentences instead (the papers' SGD objective: `losses.loss_denominator`).
        callbacks: `keras.callbacks.Callback`s; they get on_train_begin/end,
            on_epoch_begin/end and on_train_batch_end (logs: loss, ppl, accuracy, step).
            Setting `model.stop_training = True` stops after the current step.
        log_every: TensorBoard scalars every this many steps.
        verbose: 1 shows progress bars and a line per epoch (chief only), 0 is silent.

    Returns:
        dict with `steps`, `epochs` (completed, fractional), `train_time_s` (time in train
        steps, summed over resumed runs), `target_tokens`, `tokens_per_s`, `train_loss`,
        `train_ppl`, `train_accuracy` (current epoch so far, or the last full epoch), `val_loss`,
        `val_ppl`, `val_accuracy`, `best_val_loss`, `model_path`, `resumed_from_step`, and
        `history`: one dict per finished epoch (epoch, step, train_time_s, train_loss,
        train_ppl, val_loss, val_ppl, val_accuracy).
    """
    _check_train_arguments(epochs, max_steps, checkpoint_every)
    label_smoothing = check_rate("train", "label_smoothing", label_smoothing)
    strategy = strategy or tf.distribute.get_strategy()
    optimizer = prepare_optimizer(
        optimizer, model, strategy=strategy, steps_per_epoch=steps_per_epoch
    )
    step = make_train_step(
        model,
        optimizer,
        strategy=strategy,
        label_smoothing=label_smoothing,
        loss_normalization=loss_normalization,
        jit_compile=jit_compile,
    )
    run = _Run(
        model,
        optimizer,
        step,
        val_data,
        out_dir=str(out_dir),
        strategy=strategy,
        resume=resume,
        keep_checkpoints=keep_checkpoints,
        checkpoint_every=int(checkpoint_every),
        log_every=log_every,
        show=bool(verbose) and is_chief(strategy),
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
    callback_list.on_train_begin()
    with _DeferredSignals() as signals:
        run.signals = signals
        while run.state["epoch"] < epochs and not run.stopped(max_steps):
            epoch = run.state["epoch"]
            finished = run.train_epoch(
                _epoch_dataset(train_data, epoch), epochs, steps_per_epoch, max_steps, callback_list
            )
            if not finished:
                break
            callback_list.on_epoch_end(epoch, run.end_epoch())
        unfinished = run.state["epoch"] < epochs and not run.done(max_steps)
        if signals.received and unfinished:  # no validation: the user is waiting
            run.save_checkpoint()
            run.flush()
            raise TrainingInterrupted(signals.received, run.state["step"], run.ckpt_dir)
    run.finish()
    callback_list.on_train_end()
    return run.summary(steps_per_epoch)


def _check_train_arguments(epochs, max_steps, checkpoint_every):
    if int(epochs) < 1:
        raise ValueError(f"epochs must be >= 1; received {epochs!r}.")
    if max_steps is not None and int(max_steps) < 1:
        raise ValueError(f"max_steps must be >= 1 or None; received {max_steps!r}.")
    if int(checkpoint_every) < 1:
        raise ValueError(f"checkpoint_every must be >= 1; received {checkpoint_every!r}.")


def _new_state():
    return {
        "epoch": 0,  # current epoch (0-based); == epochs when done
        "batch": 0,  # batches of the current epoch already trained
        "step": 0,
        "epoch_sums": [0.0, 0.0, 0.0],  # loss_sum, correct, tokens of the current epoch
        "last_train": None,
        "val": None,
        "best_val_loss": None,
        "train_time_s": 0.0,
        "target_tokens": 0,
        "history": [],  # one {"epoch", "train_ppl", "val_ppl", ...} per finished epoch
    }


def _writer(enabled, path):
    return tf.summary.create_file_writer(path) if enabled else tf.summary.create_noop_writer()


class _Run:
    """The state of one `train` call: the position, checkpoints, logs and the best model.

    `state` is what a checkpoint stores (JSON) besides the variables; a resumed run starts
    from the newest checkpoint's state and skips the batches of its epoch already done."""

    def __init__(
        self,
        model,
        optimizer,
        step,
        val_data,
        *,
        out_dir,
        strategy,
        resume,
        keep_checkpoints,
        checkpoint_every,
        log_every,
        show,
    ):
        self.model, self.optimizer, self.step_fn = model, optimizer, step
        self.val_data, self.strategy = val_data, strategy
        self.chief, self.show = is_chief(strategy), show
        self.checkpoint_every, self.log_every = checkpoint_every, log_every
        self.ckpt_dir = os.path.join(out_dir, "checkpoints")
        self.model_path = os.path.join(out_dir, "model.keras")
        if self.chief:
            os.makedirs(out_dir, exist_ok=True)
            if not resume:
                shutil.rmtree(self.ckpt_dir, ignore_errors=True)
        self.compiled = None  # the train step, traced for the first epoch's dataset
        self.signals = None  # _DeferredSignals while training
        self.eval_step = (
            _make_eval_step(model, strategy, val_data) if val_data is not None else None
        )
        self.manager = CheckpointManager(self.ckpt_dir, model, optimizer, keep=keep_checkpoints)
        restored = self.manager.restore() if resume else None
        self.resumed_from = restored["step"] if restored else None
        self.state = restored or _new_state()
        self.state.setdefault("history", [])
        self.last_saved = self.state["step"] if restored else -1
        if restored and show:
            print(
                f"Resuming from step {self.state['step']} (epoch {self.state['epoch'] + 1}, "
                f"batch {self.state['batch']}) in {self.ckpt_dir}"
            )
        self.writer = _writer(self.chief, os.path.join(out_dir, "logs", "train"))
        self.val_writer = _writer(self.chief, os.path.join(out_dir, "logs", "validation"))
        self.inner = inner_optimizer(optimizer)
        self.loss_scaled = self.inner is not optimizer

    def done(self, max_steps):
        return max_steps is not None and self.state["step"] >= max_steps

    def stopped(self, max_steps):
        """True once training must not take another step: max_steps reached, a callback set
        `model.stop_training`, or SIGINT / SIGTERM arrived."""
        interrupted = self.signals is not None and self.signals.received is not None
        return self.done(max_steps) or self.model.stop_training or interrupted

    def save_checkpoint(self):
        if self.chief and self.last_saved != self.state["step"]:
            self.manager.save(self.state["step"], self.state)
        self.last_saved = self.state["step"]

    def validate(self):
        if self.val_data is None:
            return
        metrics = _run_eval(self.eval_step, self.val_data, self.strategy, verbose=0)
        self.state["val"] = metrics
        with self.val_writer.as_default(step=self.state["step"]):
            for key in ("loss", "ppl", "accuracy"):
                _scalar(key, metrics[key])
        best = self.state["best_val_loss"]
        if math.isfinite(metrics["loss"]) and (best is None or metrics["loss"] < best):
            self.state["best_val_loss"] = metrics["loss"]
            if self.chief:
                _save_model(self.model, self.model_path)

    def _progress_bar(self, dataset, epoch, epochs, steps_per_epoch):
        if not self.show:
            return None
        target = steps_per_epoch
        if target is None and dataset is not None and int(dataset.cardinality()) > 0:
            target = int(dataset.cardinality()) + self.state["batch"]
        print(f"Epoch {epoch + 1}/{epochs}")
        return keras.utils.Progbar(target, stateful_metrics=["loss", "ppl", "acc", "lr", "tok/s"])

    def train_epoch(self, dataset, epochs, steps_per_epoch, max_steps, callback_list):
        """Trains the rest of the current epoch; False when it stopped before its end."""
        epoch = self.state["epoch"]
        per_worker = isinstance(dataset, PerWorkerDataset)
        if self.compiled is None:
            spec = dataset.element_spec() if per_worker else dataset.element_spec
            self.compiled = compile_step(self.step_fn, spec, self.strategy)
        if per_worker:
            steps_per_epoch = steps_per_epoch or dataset.steps
            batches = dataset.distribute(self.strategy, skip=self.state["batch"])
        else:
            if self.state["batch"]:
                dataset = dataset.skip(self.state["batch"])
            batches = self.strategy.experimental_distribute_dataset(dataset)
        bar = self._progress_bar(None if per_worker else dataset, epoch, epochs, steps_per_epoch)
        callback_list.on_epoch_begin(epoch)
        started, tokens_seen = time.perf_counter(), 0
        for batch in batches:
            if self.stopped(max_steps):
                return False
            logs = self._train_batch(batch)
            tokens_seen += logs.pop("tokens")
            if bar:
                rate = tokens_seen / max(time.perf_counter() - started, 1e-9)
                means = _stats(*self.state["epoch_sums"])  # of the epoch so far
                values = [("loss", means["loss"]), ("ppl", means["ppl"])]
                bar.update(
                    self.state["batch"], values + [("acc", means["accuracy"]), ("tok/s", rate)]
                )
            callback_list.on_train_batch_end(self.state["batch"] - 1, logs)
        if self.state["batch"] == 0:
            raise ValueError(f"train_data for epoch {epoch} yielded no batches.")
        # A signal during the last step: stop before validating (a re-run ends the epoch).
        return self.signals is None or self.signals.received is None

    def _train_batch(self, batch):
        """One step and its bookkeeping; returns the step's logs for the callbacks."""
        state = self.state
        t0 = time.perf_counter()
        loss_sum, correct, tokens = (float(x) for x in self.compiled(batch))
        state["train_time_s"] += time.perf_counter() - t0
        state["step"] += 1
        state["batch"] += 1
        state["target_tokens"] += int(tokens)
        sums = state["epoch_sums"]
        state["epoch_sums"] = [sums[0] + loss_sum, sums[1] + correct, sums[2] + tokens]
        step_loss = loss_sum / max(tokens, 1.0)
        if state["step"] % self.log_every == 0 or state["step"] == 1:
            with self.writer.as_default(step=state["step"]):
                _scalar("batch_loss", step_loss)
                _scalar("learning_rate", _to_float(self.inner.learning_rate))
                if self.loss_scaled:
                    _scalar("loss_scale", _to_float(self.optimizer.dynamic_scale))
        if state["step"] % self.checkpoint_every == 0:
            self.save_checkpoint()
        return {
            "loss": step_loss,
            "ppl": perplexity(step_loss),
            "accuracy": correct / max(tokens, 1.0),
            "step": state["step"],
            "tokens": int(tokens),
        }

    def end_epoch(self):
        """Validates, records and checkpoints a finished epoch; returns its logs."""
        state = self.state
        train_metrics = _stats(*state["epoch_sums"])
        state["last_train"] = train_metrics
        with self.writer.as_default(step=state["step"]):
            for key in ("loss", "ppl", "accuracy"):
                _scalar(f"epoch_{key}", train_metrics[key])
        self.validate()
        state["history"].append(_epoch_record(state["epoch"], state, train_metrics))
        state.update(epoch=state["epoch"] + 1, batch=0, epoch_sums=[0.0, 0.0, 0.0])
        self.save_checkpoint()
        logs = {k: v for k, v in train_metrics.items() if k != "tokens"}
        if state["val"]:
            logs.update({f"val_{k}": v for k, v in state["val"].items() if k != "tokens"})
        if self.show:
            print("  ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        return logs

    def finish(self):
        """Validates and checkpoints a run stopped mid-epoch; saves the model if none was."""
        if self.last_saved != self.state["step"]:
            self.validate()
            self.save_checkpoint()
        elif self.val_data is not None and self.state["val"] is None:
            self.validate()
        if self.chief and (self.val_data is None or not os.path.exists(self.model_path)):
            _save_model(self.model, self.model_path)
        self.flush()

    def flush(self):
        self.writer.flush()
        self.val_writer.flush()

    def summary(self, steps_per_epoch):
        state = self.state
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
            "model_path": self.model_path,
            "resumed_from_step": self.resumed_from,
            "history": state["history"],
        }
