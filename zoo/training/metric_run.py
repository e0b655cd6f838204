"""`MetricRun`: a `TrainingRun` judged by a validation metric of its choice, with early
stopping (`zoo.training.early_stopping`).

`train` runs it when asked for validation BLEU or early stopping; otherwise the plain
`TrainingRun`, whose best model is the one of the lowest validation loss. Here the best
model (`model.keras`) is the one of the best value of the metric, each validation's BLEU
joins the run's validation figures (TensorBoard, the epoch's line and `history`), and the
run stops after `patience` epochs without improvement. The metric's record is part of the
state a checkpoint keeps, so a resumed run goes on counting.
"""

import math

from zoo.training.early_stopping import (
    check_patience,
    check_validation_metric,
    new_record,
    update_record,
)
from zoo.training.evaluation import run_eval
from zoo.training.training_run import TrainingRun, _save_model, _scalar

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
