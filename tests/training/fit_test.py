"""`model.fit` / `model.evaluate` with `zoo.training.keras_loss()` on zoo models and batches."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import zoo
from zoo import training
from zoo.data import make_dataset
from zoo.text import train_tokenizer

SOURCES = ["ein hund rennt", "eine katze schläft", "zwei hunde", "ein mann liest ein buch"] * 4
TARGETS = ["a dog runs", "a cat sleeps", "two dogs", "a man reads a book"] * 4


@pytest.fixture(scope="module")
def batches():
    source = train_tokenizer("word", SOURCES, vocab_size=20)
    target = train_tokenizer("word", TARGETS, vocab_size=20)
    data = make_dataset(SOURCES, TARGETS, source, target, batch_size=5, batching="plain")
    return data, source.vocab_size, target.vocab_size


def _model(source_vocab, target_vocab, preset="luong_global_general"):
    keras.utils.set_random_seed(0)
    return zoo.models.build(
        preset, size="tiny", source_vocab_size=source_vocab, target_vocab_size=target_vocab
    )


@pytest.mark.parametrize("preset", ["luong_global_general", "bahdanau_rnnsearch"])
def test_evaluate_gives_the_masked_token_mean_of_zoo(batches, preset):
    data, source_vocab, target_vocab = batches
    model = _model(source_vocab, target_vocab, preset)
    model.compile(optimizer="adam", loss=training.keras_loss())
    inputs, targets = next(iter(data))
    assert np.any(targets.numpy() == 0)  # the batch has padding to mask
    expected = training.masked_cross_entropy(targets, model(inputs, training=False))
    got = model.evaluate(inputs, targets, verbose=0)
    np.testing.assert_allclose(got, float(expected), rtol=1e-5)
    # The same number as the trainer's own evaluation over the whole dataset, batch by batch
    # weighted by tokens: one batch here.
    single = tf.data.Dataset.from_tensors((inputs, targets))
    np.testing.assert_allclose(training.evaluate(model, single)["loss"], got, rtol=1e-5)


def test_fit_learns_and_runs_the_users_keras_callbacks(batches, tmp_path):
    data, source_vocab, target_vocab = batches
    model = _model(source_vocab, target_vocab)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=training.keras_loss())
    before = model.evaluate(data, verbose=0)
    history = model.fit(
        data,
        validation_data=data,
        epochs=4,
        verbose=0,
        callbacks=[
            keras.callbacks.EarlyStopping(monitor="val_loss", patience=2),
            keras.callbacks.ReduceLROnPlateau(monitor="val_loss", patience=1),
            keras.callbacks.TensorBoard(log_dir=str(tmp_path / "logs")),
            keras.callbacks.BackupAndRestore(backup_dir=str(tmp_path / "backup")),
        ],
    )
    assert len(history.history["loss"]) >= 3
    assert model.evaluate(data, verbose=0) < before - 0.1
    assert any((tmp_path / "logs").rglob("events.out.tfevents.*"))
