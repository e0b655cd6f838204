"""`evaluate`: the masked loss, perplexity and token accuracy of a model on a dataset, and
the evaluation step that `train` runs on its validation data."""

import keras
import tensorflow as tf

from zoo.backend import backend_name
from zoo.search.compile import no_grad
from zoo.training.losses import masked_token_stats, perplexity
from zoo.training.train_step import compile_step

_SUM = tf.distribute.ReduceOp.SUM


def token_stats(loss_sum, correct, tokens, prefix=""):
    """{loss, ppl, accuracy, tokens} (keys prefixed with `prefix`) of summed figures: the
    loss and accuracy per target token (NaN when there is none)."""
    tokens = float(tokens)
    loss = float(loss_sum) / tokens if tokens else float("nan")
    return {
        f"{prefix}loss": loss,
        f"{prefix}ppl": perplexity(loss) if tokens else float("nan"),
        f"{prefix}accuracy": float(correct) / tokens if tokens else float("nan"),
        f"{prefix}tokens": int(tokens),
    }


def make_eval_step(model, strategy, dataset):
    """A compiled step `batch -> [loss_sum, correct, tokens]` (summed over the replicas) for
    the batches of `dataset`: a `tf.function` on TensorFlow, jitted on JAX
    (`jax_step.JaxEvalStep`), eager under `torch.no_grad` on PyTorch."""
    backend = backend_name()
    if backend == "jax":
        from zoo.training.jax_step import JaxEvalStep  # noqa: PLC0415 (imports jax)

        return JaxEvalStep(model)
    if backend != "tensorflow":
        return _eager_eval_step(model)

    def replica_eval(inputs, targets):
        logits = model(inputs, training=False)
        return masked_token_stats(targets, logits)

    def eval_step(batch):
        per_replica = strategy.run(replica_eval, args=tuple(batch))
        return [strategy.reduce(_SUM, x, axis=None) for x in per_replica]

    return compile_step(eval_step, dataset, strategy)


def _eager_eval_step(model):
    """`make_eval_step` off TensorFlow and JAX: the model called on each batch as NumPy
    arrays, without gradients."""

    def eval_step(batch):
        inputs, targets = (tf.nest.map_structure(lambda x: x.numpy(), part) for part in batch)
        with no_grad():
            return masked_token_stats(targets, model(inputs, training=False))

    return eval_step


def run_eval(eval_step, dataset, strategy, verbose):
    """`token_stats` of `eval_step` summed over `dataset` (with a progress bar if
    `verbose`); a ValueError when the dataset holds no target token."""
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
    return token_stats(*total)


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
    return run_eval(make_eval_step(model, strategy, dataset), dataset, strategy, verbose)
