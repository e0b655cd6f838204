"""`TrainingRun`: the state of one `train` call, its epochs, checkpoints, logs and best model.

Exact resume: a checkpoint holds every model variable (dropout seed-generator states
included), every optimizer variable (iteration counter, so the learning-rate schedule
continues; slots; loss scale) and the position (epoch, batches done in the epoch). Given
`train_data` as a function `epoch -> tf.data.Dataset` whose shuffling is seeded by
`seed + epoch`, a resumed run rebuilds that epoch's dataset and skips the batches already
done, so it sees exactly the batches the uninterrupted run saw.

`MetricRun`: a `TrainingRun` judged by a validation metric of its choice, with early
stopping (`zoo.training.callbacks`).

`train` runs it when asked for validation BLEU or early stopping; otherwise the plain
`TrainingRun`, whose best model is the one of the lowest validation loss. Here the best
model (`model.keras`) is the one of the best value of the metric, each validation's BLEU
joins the run's validation figures (TensorBoard, the epoch's line and `history`), and the
run stops after `patience` epochs without improvement. The metric's record is part of the
state a checkpoint keeps, so a resumed run goes on counting.
"""

import math
import os
import shutil
import time

import keras
import tensorflow as tf

from zoo.backend import on_tensorflow
from zoo.constants import CHECKPOINT_DIR, LOG_DIR, MODEL_FILE
from zoo.training.callbacks import (
    DeferredSignals,
    TrainingInterrupted,
    check_patience,
    check_validation_metric,
    new_record,
    update_record,
)
from zoo.training.checkpoints import CheckpointManager
from zoo.training.evaluation import make_eval_step, run_eval, token_stats
from zoo.training.losses import perplexity
from zoo.training.strategy import PerWorkerDataset, is_chief
from zoo.training.train_step import compile_step, inner_optimizer


def _scalar(name, value):
    """A TensorBoard scalar at the default writer's step (`tf.summary.scalar`)."""
    tf.summary.scalar(name, float(value))


def _to_float(value):
    """float() of a tensor or Keras variable, also a distributed (mirrored) one."""
    if isinstance(value, keras.Variable):
        value = value.value
    if not on_tensorflow():
        return float(keras.ops.convert_to_numpy(value))
    return float(tf.convert_to_tensor(value).numpy())


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


def epoch_dataset(train_data, epoch):
    """The training data of `epoch`: `train_data(epoch)` when it is a function, else itself
    (a `tf.data.Dataset` or a `PerWorkerDataset`)."""
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


def run_summary(state, steps_per_epoch, model_path, resumed_from):
    """The dict `train` returns (see its docstring) for a run's `state`."""
    train_metrics = (
        token_stats(*state["epoch_sums"]) if state["epoch_sums"][2] else state["last_train"]
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
        "history": state["history"],
    }


class TrainingRun:
    """The state of one `train` call: the position, checkpoints, logs and the best model.

    `state` is what a checkpoint stores (JSON) besides the variables; a resumed run starts
    from the newest checkpoint's state and skips the batches of its epoch already done.
    `fit` runs the epochs (`step` is the train step of `make_train_step`)."""

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
        self.ckpt_dir = os.path.join(out_dir, CHECKPOINT_DIR)
        self.model_path = os.path.join(out_dir, MODEL_FILE)
        if self.chief:
            os.makedirs(out_dir, exist_ok=True)
            if not resume:
                shutil.rmtree(self.ckpt_dir, ignore_errors=True)
        self.compiled = None  # the train step, traced for the first epoch's dataset
        self.signals = None  # DeferredSignals while training
        self.eval_step = make_eval_step(model, strategy, val_data) if val_data is not None else None
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
        self.writer = _writer(self.chief, os.path.join(out_dir, LOG_DIR, "train"))
        self.val_writer = _writer(self.chief, os.path.join(out_dir, LOG_DIR, "validation"))
        self.inner = inner_optimizer(optimizer)
        self.loss_scaled = self.inner is not optimizer

    def fit(self, train_data, epochs, steps_per_epoch, max_steps, callback_list):
        """Trains the epochs left (`train`'s loop); returns `train`'s summary. Raises
        `TrainingInterrupted` after a SIGINT or SIGTERM, with the step in flight saved."""
        self.model.stop_training = False
        callback_list.on_train_begin()
        with DeferredSignals() as signals:
            self.signals = signals
            while self.state["epoch"] < epochs and not self.stopped(max_steps):
                epoch = self.state["epoch"]
                dataset = epoch_dataset(train_data, epoch)
                if not self.train_epoch(dataset, epochs, steps_per_epoch, max_steps, callback_list):
                    break
                callback_list.on_epoch_end(epoch, self.end_epoch())
            unfinished = self.state["epoch"] < epochs and not self.done(max_steps)
            if signals.received and unfinished:  # no validation: the user is waiting
                self.save_checkpoint()
                self.flush()
                raise TrainingInterrupted(signals.received, self.state["step"], self.ckpt_dir)
        self.finish()
        callback_list.on_train_end()
        return run_summary(self.state, steps_per_epoch, self.model_path, self.resumed_from)

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
        metrics = run_eval(self.eval_step, self.val_data, self.strategy, verbose=0)
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
                means = token_stats(*self.state["epoch_sums"])  # of the epoch so far
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
        train_metrics = token_stats(*state["epoch_sums"])
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


RECORD = "early_stopping"  # the metric's record in the run's state
SCORES = "validation_scores"  # [{"epoch", "step", "val_bleu"}] of the validations


def check_judging(metric, patience, bleu, val_data):
    """A ValueError unless `MetricRun` can judge a run by `metric` with `patience`: a known
    metric, a patience >= 1 or None, validation batches, and for BLEU a scorer."""
    check_validation_metric(metric)
    check_patience(patience)
    if val_data is None:
        raise ValueError(
            f"train: validation_metric={metric!r} with early_stopping={patience!r} needs "
            "val_data (the validation batches); received None."
        )
    if metric == "bleu" and bleu is None:
        raise ValueError(
            "train: validation_metric='bleu' needs validation_bleu (a function model -> "
            "BLEU such as zoo.training.ValidationBleu); received None."
        )


class MetricRun(TrainingRun):
    """`TrainingRun(...)`'s arguments, and:

    Args:
        metric: "loss" or "bleu" (`VALIDATION_METRICS`).
        patience: stop after this many epochs without improvement (None: never).
        bleu: `model -> BLEU` (a `ValidationBleu`), needed for metric "bleu"; with metric
            "loss" it is scored and recorded too when given.
    """

    def __init__(self, *args, metric, patience, bleu, **kwargs):
        super().__init__(*args, **kwargs)
        check_judging(metric, patience, bleu, self.val_data)
        self.metric, self.patience, self.bleu = metric, patience, bleu
        self.state.setdefault(RECORD, None)
        self.state.setdefault(SCORES, [])
        if self.state[RECORD] is None:
            self.state[RECORD] = new_record()
        self.epoch_end = False  # validating at an epoch end (counts towards patience)

    def stopped(self, max_steps):
        return super().stopped(max_steps) or self.state[RECORD]["stopped"] is not None

    def end_epoch(self):
        self.epoch_end = True
        try:
            return super().end_epoch()
        finally:
            self.epoch_end = False

    def validate(self):
        """The validation loss (and BLEU); keeps the model of the best value of the metric
        and, at an epoch end, counts the epochs without improvement."""
        state = self.state
        metrics = run_eval(self.eval_step, self.val_data, self.strategy, verbose=0)
        if self.bleu is not None:
            metrics["bleu"] = float(self.bleu(self.model))
            state[SCORES].append(
                {"epoch": state["epoch"] + 1, "step": state["step"], "val_bleu": metrics["bleu"]}
            )
        state["val"] = metrics
        with self.val_writer.as_default(step=state["step"]):
            for key in ("loss", "ppl", "accuracy", "bleu"):
                if key in metrics:
                    _scalar(key, metrics[key])
        best_loss = state["best_val_loss"]
        if math.isfinite(metrics["loss"]) and (best_loss is None or metrics["loss"] < best_loss):
            state["best_val_loss"] = metrics["loss"]
        epoch = state["epoch"] + 1 if self.epoch_end else None
        improved = update_record(
            state[RECORD], metrics[self.metric], self.metric, epoch=epoch,
            patience=self.patience, step=state["step"],
        )  # fmt: skip
        if improved and self.chief:
            _save_model(self.model, self.model_path)
        record = state[RECORD]
        if record["stopped"] is not None and self.show:
            print(
                f"Early stopping after epoch {record['stopped']}: validation {self.metric} "
                f"not improved for {record['epochs_without_improvement']} epoch(s) (best "
                f"{record['best']:.4f}, epoch {record['best_epoch']})",
                flush=True,
            )
