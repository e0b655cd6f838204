"""Training computations run on each Keras backend, for cross-backend tests.

`tests/training/training_backends_test.py` runs `probe` on TensorFlow in its own process and
on JAX and PyTorch through `zoo.testing.backend_run.run_in_backend`, with the same weights
and batch, and compares:

- the loss and the gradient of every trainable variable of each tiny preset, each computed
  by the backend's own autodiff (`tf.GradientTape`, `jax.grad` of `model.stateless_call`,
  PyTorch's `backward`);
- on TensorFlow and JAX, the weights after one update of the recipes' train step
  (`zoo.training.train_step.make_train_step`) with label smoothing, a loss normalisation,
  global-norm clipping and gradient accumulation.

    outputs = run_in_backend("jax", "zoo.testing.training_probe:probe", inputs,
                             presets=["luong_global_general"], update=None)
"""

import keras
import numpy as np

from zoo.constants import PAD_ID, START_ID
from zoo.models import build
from zoo.training.losses import loss_denominator, training_objective

VOCAB = 24


def probe_batch(batch=3, source_len=7, target_len=6, seed=0):
    """A batch with padding: {"source_ids", "target_ids", "target_out_ids"} int32 arrays,
    the rows shorter than the longest padded with PAD_ID."""
    rng = np.random.default_rng(seed)
    source = rng.integers(4, VOCAB, size=(batch, source_len)).astype("int32")
    target = rng.integers(4, VOCAB, size=(batch, target_len)).astype("int32")
    for row in range(1, batch):  # rows 1.. shorter
        source[row, source_len - row :] = PAD_ID
        target[row, target_len - row :] = PAD_ID
    target_in = np.concatenate([np.full((batch, 1), START_ID, "int32"), target[:, :-1]], axis=1)
    return {"source_ids": source, "target_ids": target_in, "target_out_ids": target}


def probe_model(preset):
    """The tiny `preset` without dropout (vocabularies of VOCAB), its weights drawn with
    seed 0."""
    keras.utils.set_random_seed(0)
    return build(preset, "tiny", VOCAB, VOCAB, dropout=0.0)


def weight_arrays(model, prefix):
    """{f"{prefix}/{i}": value} of the model's trainable variables, in their order."""
    return {
        f"{prefix}/{i:03d}": keras.ops.convert_to_numpy(v.value)
        for i, v in enumerate(model.trainable_variables)
    }


def set_weights(model, inputs, prefix):
    """Assigns `weight_arrays(...)`'s arrays (by position, shapes checked) to the model."""
    for i, variable in enumerate(model.trainable_variables):
        value = inputs[f"{prefix}/{i:03d}"]
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(
                f"{prefix}: variable {i} ({variable.path}) has shape {tuple(variable.shape)}, "
                f"the given array {value.shape}."
            )
        variable.assign(value)


def _loss(model, logits, targets, label_smoothing, loss_normalization):
    objective, *_ = training_objective(targets, logits, label_smoothing)
    return objective / keras.ops.maximum(loss_denominator(targets, loss_normalization), 1.0)


def _model_inputs(inputs):
    return {"source_ids": inputs["source_ids"], "target_ids": inputs["target_ids"]}


def loss_and_gradients(model, inputs, label_smoothing=0.0, loss_normalization="tokens"):
    """(loss, [gradient of each trainable variable]) as NumPy, by this backend's autodiff,
    of the train step's objective on `inputs` (`probe_batch`), in training mode."""
    from zoo.backend import backend_name

    backend = backend_name()
    x, targets = _model_inputs(inputs), inputs["target_out_ids"]
    options = (label_smoothing, loss_normalization)
    trainable = model.trainable_variables
    if backend == "tensorflow":
        import tensorflow as tf  # noqa: PLC0415

        with tf.GradientTape() as tape:
            loss = _loss(model, model(x, training=True), targets, *options)
        grads = [tf.convert_to_tensor(g) for g in tape.gradient(loss, trainable)]
    elif backend == "jax":
        import jax  # noqa: PLC0415

        non_trainable = [v.value for v in model.non_trainable_variables]

        def loss_of(values):
            logits, _ = model.stateless_call(values, non_trainable, x, training=True)
            return _loss(model, logits, targets, *options)

        # Compiled: op by op, a traced scan and its gradient take minutes on a CPU.
        loss, grads = jax.jit(jax.value_and_grad(loss_of))([v.value for v in trainable])
    elif backend == "torch":
        for variable in trainable:
            variable.value.grad = None
        loss = _loss(model, model(x, training=True), targets, *options)
        loss.backward()
        grads = [variable.value.grad for variable in trainable]
    else:
        raise ValueError(f"No autodiff probe for the Keras backend {backend!r}.")
    to_numpy = keras.ops.convert_to_numpy
    return float(to_numpy(loss)), [np.asarray(to_numpy(g)) for g in grads]


def one_update(model, inputs, *, accumulate_steps=1, **options):
    """The trainable weights after one update of `make_train_step(model, SGD, **options)`
    on `inputs` (with `accumulate_steps=2`: its two halves, one group), and the step's
    [loss_sum, correct, tokens]. TensorFlow and JAX."""
    import tensorflow as tf  # noqa: PLC0415 (the batches are tf.data's on every backend)

    from zoo.training.train_step import (  # noqa: PLC0415
        compile_step,
        group_batches,
        make_train_step,
        prepare_optimizer,
    )

    optimizer = keras.optimizers.SGD(0.5, global_clipnorm=0.1)
    optimizer = prepare_optimizer(optimizer, model)
    step = make_train_step(model, optimizer, accumulate_steps=accumulate_steps, **options)
    x, targets = _model_inputs(inputs), inputs["target_out_ids"]
    rows = len(targets) if accumulate_steps == 1 else (len(targets) + 1) // 2
    dataset = group_batches(
        tf.data.Dataset.from_tensor_slices((x, targets)).batch(rows), accumulate_steps
    )
    if accumulate_steps == 1:
        dataset = dataset.take(1)
    step = compile_step(step, dataset)
    stats = [float(keras.ops.convert_to_numpy(s)) for s in step(next(iter(dataset)))]
    weights = [keras.ops.convert_to_numpy(v.value) for v in model.trainable_variables]
    return weights, stats


def probe(inputs, presets, update=None, label_smoothing=0.1, loss_normalization="tokens"):
    """For each preset in `presets` (its weights `f"{preset}/{i}"` in `inputs`, else its
    own): "{preset}:loss" and "{preset}:grad/{i}" from `loss_and_gradients`; for the preset
    `update` (TensorFlow and JAX): "{preset}:update{N}/{i}" the weights after one update
    with N = 1 and 2 accumulated batches, and "{preset}:update{N}:stats"."""
    batch = {k: inputs[k] for k in ("source_ids", "target_ids", "target_out_ids")}
    options = dict(label_smoothing=label_smoothing, loss_normalization=loss_normalization)
    outputs = {}
    for preset in presets:
        model = probe_model(preset)
        if f"{preset}/000" in inputs:
            set_weights(model, inputs, preset)
        loss, grads = loss_and_gradients(model, batch, **options)
        outputs[f"{preset}:loss"] = np.float32(loss)
        outputs.update({f"{preset}:grad/{i:03d}": g for i, g in enumerate(grads)})
    if update is not None:
        for accumulate in (1, 2):
            model = probe_model(update)
            if f"{update}/000" in inputs:
                set_weights(model, inputs, update)
            weights, stats = one_update(model, batch, accumulate_steps=accumulate, **options)
            outputs[f"{update}:update{accumulate}:stats"] = np.array(stats, "float32")
            outputs.update(
                {f"{update}:update{accumulate}/{i:03d}": w for i, w in enumerate(weights)}
            )
    return outputs
