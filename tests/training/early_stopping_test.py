"""Early stopping and the validation metric (zoo/training/callbacks.py, metric_run.py),
and gradient accumulation inside `train`."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf
from training_toy import toy_dataset, toy_model

from zoo import training
from zoo.training.callbacks import new_record, stopping_epoch, update_record


@pytest.mark.parametrize(
    ("values", "metric", "patience", "expected"),
    [
        ([10.0, 12.0, 11.0, 11.5, 13.0], "bleu", 2, 4),  # 3 and 4 do not beat epoch 2
        ([10.0, 12.0, 11.0, 12.5, 12.0, 12.4], "bleu", 2, 6),  # 4 resets the count
        ([10.0, 12.0, 12.0], "bleu", 1, 3),  # a tie is no improvement
        ([3.0, 2.5, 2.6, 2.4, 2.45, 2.5], "loss", 2, 6),  # lower is better
        ([3.0, math.nan, 2.9], "loss", 1, 2),  # a NaN never improves
        ([3.0, 4.0, 5.0], "loss", 3, None),  # patience not exhausted
        ([1.0, 0.0, 0.0, 0.0], "bleu", None, None),  # no early stopping
    ],
)
def test_stops_after_patience_epochs_without_improvement(values, metric, patience, expected):
    assert stopping_epoch(values, metric, patience) == expected


def test_a_validation_between_epochs_may_be_the_best_but_does_not_count():
    record = new_record()
    assert update_record(record, 10.0, "bleu", epoch=1, patience=1, step=8)
    assert not update_record(record, 9.0, "bleu", epoch=None, patience=1, step=12)
    assert record["epochs_without_improvement"] == 0 and record["stopped"] is None
    assert update_record(record, 11.0, "bleu", epoch=None, patience=1, step=14)
    assert (record["best"], record["best_epoch"], record["best_step"]) == (11.0, None, 14)


def test_bad_settings_are_refused(tmp_path):
    model = toy_model()
    data = toy_dataset(0, seed=7)
    for kwargs, message in [
        (dict(validation_metric="chrf"), "validation_metric must be one of"),
        (dict(early_stopping=0), "early_stopping must be an int >= 1 or None"),
        (dict(validation_metric="bleu"), "needs validation_bleu"),
        (dict(accumulate_steps=0), "accumulate_steps must be an int >= 1"),
    ]:
        with pytest.raises(ValueError, match=message):
            training.train(
                model, data, data, out_dir=tmp_path, optimizer="adam", verbose=0, **kwargs
            )
    with pytest.raises(ValueError, match="needs val_data"):
        training.train(
            model, data, None, out_dir=tmp_path, optimizer="adam", early_stopping=1, verbose=0
        )


class ScriptedBleu:
    """A validation BLEU that plays back `values` and keeps the weights it scored."""

    def __init__(self, values):
        self.values, self.weights = list(values), []

    def __call__(self, model):
        self.weights.append(model.get_weights())
        return self.values[len(self.weights) - 1]


def _train(out_dir, scorer, **kwargs):
    keras.utils.set_random_seed(1234)
    model = toy_model()
    summary = training.train(
        model, lambda epoch: toy_dataset(epoch, seed=7), toy_dataset(0, seed=99, n=16, shuffle=False),
        out_dir=out_dir, optimizer="adam", epochs=5, checkpoint_every=3, verbose=0,
        validation_metric="bleu", validation_bleu=scorer, **kwargs,
    )  # fmt: skip
    return model, summary


def test_stops_at_the_scripted_epoch_and_delivers_the_best_model_by_bleu(tmp_path):
    scorer = ScriptedBleu([5.0, 7.0, 6.0, 6.5, 9.0])
    _, summary = _train(tmp_path, scorer, early_stopping=2)
    assert summary["epochs"] == 4 and summary["steps"] == 32  # 8 batches an epoch
    assert [r["val_bleu"] for r in summary["history"]] == [5.0, 7.0, 6.0, 6.5]
    assert all(math.isfinite(r["val_loss"]) for r in summary["history"])
    record = summary["early_stopping"]
    assert (record["best"], record["best_epoch"], record["best_step"]) == (7.0, 2, 16)
    assert record["stopped"] == 4 and summary["validation_metric"] == "bleu"
    delivered = keras.models.load_model(summary["model_path"]).get_weights()
    for got, want in zip(delivered, scorer.weights[1], strict=True):  # epoch 2's weights
        np.testing.assert_array_equal(got, want)
    # A resumed run that stopped stays stopped.
    _, again = _train(tmp_path, ScriptedBleu([]), early_stopping=2)
    assert again["steps"] == 32 and again["early_stopping"]["stopped"] == 4


def test_without_early_stopping_bleu_picks_the_model_and_every_epoch_trains(tmp_path):
    scorer = ScriptedBleu([5.0, 9.0, 6.0, 6.5, 8.0])
    _, summary = _train(tmp_path, scorer)
    assert summary["epochs"] == 5 and summary["early_stopping"]["stopped"] is None
    assert summary["early_stopping"]["best_epoch"] == 2
    delivered = keras.models.load_model(summary["model_path"]).get_weights()
    for got, want in zip(delivered, scorer.weights[1], strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mirrored", [False, True], ids=["default", "mirrored-one-device"])
def test_train_with_accumulation_counts_updates(tmp_path, mirrored):
    keras.utils.set_random_seed(1234)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"]) if mirrored else None
    with (strategy or tf.distribute.get_strategy()).scope():
        model = toy_model()
        optimizer = training.make_optimizer("adam")
    summary = training.train(
        model, lambda epoch: toy_dataset(epoch, seed=7), toy_dataset(0, seed=99, n=16, shuffle=False),
        out_dir=tmp_path, optimizer=optimizer, epochs=2, checkpoint_every=2, verbose=0,
        accumulate_steps=3, strategy=strategy,
    )  # fmt: skip
    assert summary["steps"] == 6 and int(optimizer.iterations.numpy()) == 6  # 8 batches: 3 steps
    assert summary["epochs"] == 2 and summary["target_tokens"] == 2 * sum(
        int(tf.math.count_nonzero(b[1])) for b in toy_dataset(0, seed=7)
    )


def _accumulating_run(out_dir, max_steps=None):
    keras.utils.set_random_seed(5)
    model = toy_model()
    summary = training.train(
        model, lambda epoch: toy_dataset(epoch, seed=3), out_dir=out_dir, optimizer="luong",
        epochs=2, max_steps=max_steps, checkpoint_every=100, verbose=0, accumulate_steps=3,
    )  # fmt: skip
    return summary, np.concatenate([np.ravel(w) for w in model.get_weights()])


def test_an_accumulating_run_stopped_mid_epoch_resumes_to_the_same_weights(tmp_path):
    _, reference = _accumulating_run(tmp_path / "ref")
    first, partial = _accumulating_run(tmp_path / "run", max_steps=2)
    assert first["steps"] == 2 and first["epochs"] == pytest.approx(2 / 3)
    assert not np.array_equal(partial, reference)
    summary, weights = _accumulating_run(tmp_path / "run")
    assert summary["resumed_from_step"] == 2 and summary["steps"] == 6
    np.testing.assert_array_equal(weights, reference)


def test_validation_bleu_checks_its_sentences():
    with pytest.raises(ValueError, match="must be parallel; received 1 sources and 0"):
        training.ValidationBleu(None, None, ["a"], [])
    with pytest.raises(ValueError, match="limit must be an int >= 1 or None; received 0"):
        training.ValidationBleu(None, None, ["a"], ["b"], limit=0)
    with pytest.raises(ValueError, match="no validation sentence"):
        training.ValidationBleu(None, None, [], [])
    assert len(training.ValidationBleu(None, None, ["a", "b", "c"], ["x", "y", "z"], limit=2)) == 2
