"""`model.fit` with `zoo.training.keras_loss()` on the backend this process runs, and the
dropout inside the Luong decoder's step loop: a new mask at every time step."""

import keras
import numpy as np
import pytest

import zoo
from zoo.constants import START_ID
from zoo.layers import LuongAttention
from zoo.models import LuongDecoder
from zoo.training import keras_loss

VOCAB = 40


def copy_batch(batch=4, length=5, seed=0):
    """A toy batch: the target copies the source (ids 4.. , no padding)."""
    rng = np.random.default_rng(seed)
    source = rng.integers(4, VOCAB, size=(batch, length)).astype("int32")
    target_in = np.concatenate([np.full((batch, 1), START_ID, "int32"), source[:, :-1]], axis=1)
    return {"source_ids": source, "target_ids": target_in}, source


def fitted_losses(model, steps, learning_rate=1e-2):
    """(loss before, loss after) `steps` updates of `model.fit` on one batch, both measured
    without dropout (`model.evaluate`)."""
    model.compile(optimizer=keras.optimizers.Adam(learning_rate), loss=keras_loss())
    inputs, targets = copy_batch()
    before = model.evaluate(inputs, targets, verbose=0)
    model.fit(inputs, targets, batch_size=len(targets), epochs=steps, verbose=0)
    after = model.evaluate(inputs, targets, verbose=0)
    return before, after


def test_fit_lowers_the_loss_of_a_luong_model_with_dropout_inside_its_loop():
    keras.utils.set_random_seed(1)
    # Two layers with input feeding: the dropout between them runs inside the step loop.
    model = zoo.models.build("luong_global_general", "tiny", VOCAB, VOCAB, dropout=0.3)
    decoder = model.get_layer("decoder")
    assert decoder.input_feeding and decoder.num_layers == 2 and decoder.dropout == 0.3
    before, after = fitted_losses(model, steps=30)
    assert np.isfinite(after)
    assert after < 0.7 * before, (before, after)


@pytest.mark.parametrize(
    "name",
    [
        n if n in ("bahdanau_rnnsearch", "luong_local_p_general")
        else pytest.param(n, marks=pytest.mark.slow)
        for n in zoo.models.presets()
    ],
)  # fmt: skip
def test_fit_trains_every_preset(name):
    keras.utils.set_random_seed(2)
    model = zoo.models.build(name, "tiny", VOCAB, VOCAB, dropout=0.0)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=keras_loss())
    inputs, targets = copy_batch()
    # One update per epoch on the same batch: each epoch's loss is that of the weights
    # before its update (the first: the initial weights').
    losses = model.fit(inputs, targets, batch_size=len(targets), epochs=3, verbose=0)
    losses = losses.history["loss"]
    assert np.all(np.isfinite(losses))
    assert losses[-1] < losses[0], (name, losses)


def _constant_step_decoder(units=32, embedding_dim=4, rate=0.5):
    """A 2-layer Luong decoder (input feeding, dot attention) whose steps all compute the
    same thing from a constant target: no recurrent weights, forget gates shut, the fed
    h~ ignored. Only the dropout between its layers can make the steps differ (two steps
    draw the same mask of 32 units with probability 2^-32)."""
    decoder = LuongDecoder(
        6, embedding_dim, units, num_layers=2, dropout=rate,
        attention=LuongAttention(score="dot"), input_feeding=True,
    )  # fmt: skip
    batch, source_len = 3, 5
    rng = np.random.default_rng(0)
    memory = rng.normal(size=(batch, source_len, units)).astype("float32")
    mask = np.ones((batch, source_len), bool)
    states = [np.zeros((batch, units), "float32")] * 4
    target = np.full((batch, 7), 4, "int32")
    decoder(target, memory, mask, states)  # builds
    for i, lstm in enumerate(decoder.lstms):
        cell = lstm.cell
        cell.recurrent_kernel.assign(np.zeros(cell.recurrent_kernel.shape, "float32"))
        bias = np.asarray(cell.bias).copy()
        bias[units : 2 * units] = -1e4  # forget gate 0: no carry from the previous step
        cell.bias.assign(bias)
        if i == 0:  # the rows that read h~_{t-1} (input feeding)
            kernel = np.asarray(cell.kernel).copy()
            kernel[embedding_dim:] = 0.0
            cell.kernel.assign(kernel)
    # Only the dropout inside the loop: none on the embeddings nor before the softmax.
    decoder.dropouts[0].rate = 0.0
    decoder.output_dropout.rate = 0.0
    return decoder, (target, memory, mask, states)


def test_dropout_inside_the_step_loop_draws_a_new_mask_at_every_step():
    keras.utils.set_random_seed(3)
    decoder, inputs = _constant_step_decoder()
    plain = keras.ops.convert_to_numpy(decoder(*inputs, training=False))  # (B, Tt, V)
    # The construction: without dropout every step gives the same logits.
    np.testing.assert_allclose(plain, np.broadcast_to(plain[:, :1], plain.shape), atol=1e-5)
    dropped = keras.ops.convert_to_numpy(decoder(*inputs, training=True))
    for row in dropped:  # each sentence: its steps differ from one another
        differences = np.abs(row[:, None] - row[None, :]).max(axis=-1)  # (Tt, Tt)
        off_diagonal = differences[~np.eye(len(row), dtype=bool)]
        assert off_diagonal.min() > 1e-6, differences
    again = keras.ops.convert_to_numpy(decoder(*inputs, training=True))
    assert np.abs(again - dropped).max() > 1e-6  # a new draw at every call, too


def test_dropout_masks_differ_between_steps_in_a_compiled_stateless_call(backend):
    """The path `model.fit` compiles on JAX: `stateless_call` under `jax.jit`, the seed
    state carried in and out."""
    if backend != "jax":
        pytest.skip("jax.jit of a stateless call: the JAX backend's compiled training path")
    import jax

    keras.utils.set_random_seed(4)
    decoder, inputs = _constant_step_decoder()

    @jax.jit
    def forward(trainable, non_trainable, *args):
        return decoder.stateless_call(trainable, non_trainable, *args, training=True)

    trainable = [v.value for v in decoder.trainable_variables]
    non_trainable = [v.value for v in decoder.non_trainable_variables]
    logits, non_trainable_after = forward(trainable, non_trainable, *inputs)
    logits = np.asarray(logits)
    for row in logits:
        differences = np.abs(row[:, None] - row[None, :]).max(axis=-1)
        assert differences[~np.eye(len(row), dtype=bool)].min() > 1e-6, differences
    second, _ = forward(trainable, non_trainable_after, *inputs)  # the next seed state
    assert np.abs(np.asarray(second) - logits).max() > 1e-6


def test_the_recipes_loop_runs_where_it_can_and_says_why_elsewhere(backend):
    from zoo.errors import UsageError
    from zoo.training import check_training_backend, make_strategy

    if backend == "torch":
        with pytest.raises(UsageError, match="model.fit"):
            check_training_backend()
    else:
        check_training_backend()  # TensorFlow and JAX: no error
    if backend != "tensorflow":
        for name in ("mirrored", "multiworker"):
            with pytest.raises(UsageError, match="TensorFlow only"):
                make_strategy(name)
