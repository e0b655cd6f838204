"""A tiny translation model and corpus obeying zoo's model/data contracts (tests only).

Model: {"source_ids": (B, Ts), "target_ids": (B, Tt)} -> logits (B, Tt, V), with dropout
so that resumption must restore the seed-generator state. Data: the target is the reversed
source, variable lengths, right-padded with 0, `({"source_ids", "target_ids"}, target_out_ids)`.
"""

import keras
import numpy as np
import tensorflow as tf

VOCAB = 12


def toy_model(vocab=VOCAB, dim=8, dropout=0.1):
    source = keras.Input((None,), dtype="int32", name="source_ids")
    target = keras.Input((None,), dtype="int32", name="target_ids")
    src = keras.layers.Embedding(vocab, dim, mask_zero=True)(source)
    state = keras.layers.GlobalAveragePooling1D()(src)  # masked mean of the source
    tgt = keras.layers.Embedding(vocab, dim)(target)
    tgt = keras.layers.Dropout(dropout)(tgt)
    seq = keras.layers.GRU(dim, return_sequences=True)(tgt, initial_state=state)
    logits = keras.layers.Dense(vocab)(seq)
    return keras.Model({"source_ids": source, "target_ids": target}, logits)


def toy_arrays(n=64, max_len=6, vocab=VOCAB, seed=0):
    rng = np.random.default_rng(seed)
    src = np.zeros((n, max_len), np.int32)
    tin = np.zeros((n, max_len + 1), np.int32)
    tout = np.zeros((n, max_len + 1), np.int32)
    for i in range(n):
        length = int(rng.integers(2, max_len + 1))
        words = rng.integers(4, vocab, size=length)
        src[i, :length] = words
        tin[i, : length + 1] = np.concatenate([[1], words[::-1]])
        tout[i, : length + 1] = np.concatenate([words[::-1], [2]])
    return src, tin, tout


def toy_dataset(epoch=0, seed=0, n=64, batch_size=8, shuffle=True):
    src, tin, tout = toy_arrays(n=n, seed=seed)
    ds = tf.data.Dataset.from_tensor_slices(({"source_ids": src, "target_ids": tin}, tout))
    if shuffle:
        ds = ds.shuffle(n, seed=seed + epoch, reshuffle_each_iteration=False)
    return ds.batch(batch_size)


def train_toy(
    out_dir,
    *,
    strategy=None,
    epochs=3,
    max_steps=None,
    checkpoint_every=3,
    optimizer="adam",
    dropout=0.1,
    callbacks=None,
):
    """The toy training job of the trainer tests (seed 1234, 8 batches per epoch).

    Returns `(summary, weights)`, weights flattened into one float32 vector.
    """
    from zoo import training

    strategy = strategy or tf.distribute.get_strategy()
    keras.utils.set_random_seed(1234)
    with strategy.scope():
        model = toy_model(dropout=dropout)
        if optimizer == "luong":
            optimizer = training.make_optimizer("luong", steps_per_epoch=8)
        else:
            optimizer = training.make_optimizer(optimizer)
    summary = training.train(
        model,
        lambda epoch: toy_dataset(epoch, seed=7),
        toy_dataset(0, seed=99, n=16, shuffle=False),
        out_dir=out_dir,
        optimizer=optimizer,
        epochs=epochs,
        max_steps=max_steps,
        checkpoint_every=checkpoint_every,
        strategy=strategy,
        callbacks=callbacks,
        verbose=0,
    )
    return summary, np.concatenate([np.ravel(w) for w in model.get_weights()])
