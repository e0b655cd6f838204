"""Distribution strategies by name: "default", "mirrored", "multiworker".

- "default": `tf.distribute.get_strategy()` (one device, no-op scope).
- "mirrored": `tf.distribute.MirroredStrategy()` over all local GPUs (the CPU when none).
- "multiworker": `tf.distribute.MultiWorkerMirroredStrategy()`, cluster read from the
  `TF_CONFIG` environment variable. Create it at the very start of the program, before any
  other TensorFlow op runs. Every worker runs the same command; the chief (task 0 of
  "worker", or the "chief" task) writes checkpoints, logs and `model.keras`.

Build the model and the optimizer inside the scope, then hand both to `train`:

    strategy = make_strategy(args.strategy)
    with strategy.scope():
        model = zoo.models.build(...)
        optimizer = make_optimizer("luong", steps_per_epoch=n)
    zoo.training.train(model, data, optimizer=optimizer, strategy=strategy, ...)

The batch size of the dataset is the *global* batch; it is split across replicas.
"mirrored" and "multiworker" are TensorFlow's: on the JAX backend only "default" trains.
"""

import json
import os

import tensorflow as tf

from zoo.backend import backend_name
from zoo.errors import UsageError

STRATEGIES = ("default", "mirrored", "multiworker")


def make_strategy(name="default"):
    """Returns the `tf.distribute.Strategy` called `name` (see the module docstring)."""
    if name not in STRATEGIES:
        raise ValueError(f"Unknown strategy {name!r}; expected one of {STRATEGIES}.")
    if name == "default":
        return tf.distribute.get_strategy()
    backend = backend_name()
    if backend != "tensorflow":
        raise UsageError(
            f"strategy {name!r} (tf.distribute) trains on TensorFlow only; Keras runs on "
            f"{backend!r} here. Train with the default strategy (one device), or set "
            "KERAS_BACKEND=tensorflow."
        )
    if name == "mirrored":
        return tf.distribute.MirroredStrategy()
    if "TF_CONFIG" not in os.environ:
        raise ValueError(
            "strategy 'multiworker' reads the cluster from the TF_CONFIG environment variable, "
            "which is not set."
        )
    return tf.distribute.MultiWorkerMirroredStrategy()


def is_chief(strategy=None):
    """True on the worker that should write files (always True outside multi-worker runs)."""
    strategy = strategy or tf.distribute.get_strategy()
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return True
    task_type, task_id = resolver.task_type, resolver.task_id
    if task_type is None:
        return True
    if task_type == "chief":
        return True
    has_chief = "chief" in json.loads(os.environ.get("TF_CONFIG", "{}")).get("cluster", {})
    return task_type == "worker" and task_id == 0 and not has_chief
