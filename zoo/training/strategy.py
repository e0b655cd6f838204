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

Training data that each worker of a multi-worker run reads for itself.

`train` hands a plain `tf.data.Dataset` to `strategy.experimental_distribute_dataset`: its
batches are global batches, and tf.distribute shards and splits them across the workers
(each worker builds the whole pipeline and keeps its part). A corpus streamed from disk
should instead be read once per epoch in all: each worker reads its own shard in batches of
its replicas' size. That is `strategy.distribute_datasets_from_function`, which
`PerWorkerDataset` wraps so that `train` can skip the batches already done on resume.

Precision policies: "float32", "mixed_float16", "mixed_bfloat16".

Call `set_precision` *before* building the model: Keras layers read the global policy when
they are created. Under a mixed policy the layers compute in float16/bfloat16 with float32
variables; `zoo.training.losses` casts logits to float32 so softmax and loss stay float32,
and `zoo.training.train` wraps the optimizer in `keras.optimizers.LossScaleOptimizer` when
the model's policy is "mixed_float16" (bfloat16 has float32's range and needs no scaling).

`auto_precision` chooses for the machine at hand (`--precision auto`): "mixed_bfloat16" on
a CPU with AMX bfloat16 matrix units (Intel Sapphire Rapids and later), where TensorFlow's
oneDNN kernels run bfloat16 matrix products several times faster than float32, and
"float32" elsewhere (measurements: bench/RESULTS.md, "Precision on the CPU").

Example:
    previous = set_precision("mixed_bfloat16")
    model = zoo.models.build(...)
    ...
    set_precision(previous)  # restore
"""

import json
import os

import keras
import tensorflow as tf

from zoo.backend import require_tensorflow
from zoo.errors import UsageError

STRATEGIES = ("default", "mirrored", "multiworker")


def make_strategy(name="default"):
    """Returns the `tf.distribute.Strategy` called `name` (see the module docstring)."""
    if name not in STRATEGIES:
        raise ValueError(f"Unknown strategy {name!r}; expected one of {STRATEGIES}.")
    if name == "default":
        return tf.distribute.get_strategy()
    require_tensorflow(
        f"strategy {name!r} (tf.distribute)",
        "Train with the default strategy (one device), or set KERAS_BACKEND=tensorflow.",
        UsageError,
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


class PerWorkerDataset:
    """Training batches built by each worker: `make(input_context) -> tf.data.Dataset`.

    `make` is called once per worker (per input pipeline) with a `tf.distribute.InputContext`
    and returns that worker's batches at the per-replica batch size
    (`input_context.get_per_replica_batch_size(global_batch)`), read from its shard
    (`input_context.input_pipeline_id` of `input_context.num_input_pipelines`). Every
    worker must yield the same number of batches (`zoo.data.worker_stream` does): a step's
    all-reduce waits for all of them.

    Args:
        make: the function above, e.g. `zoo.data.worker_stream(...)`.
        steps: batches per epoch on every worker (for the progress bar).

    Example:
        make = zoo.data.worker_stream(corpus, src_tok, tgt_tok, batch_size=64, steps=n)
        zoo.training.train(model, lambda epoch: PerWorkerDataset(make_for(epoch), n), ...)
    """

    def __init__(self, make, steps=None):
        if not callable(make):
            raise ValueError(
                "PerWorkerDataset needs a function input_context -> tf.data.Dataset; received "
                f"{type(make).__name__}."
            )
        self.make = make
        self.steps = steps

    def element_spec(self):
        """The element spec of one worker's batches (builds the pipeline, reads nothing)."""
        return self.make(tf.distribute.InputContext()).element_spec

    def distribute(self, strategy, skip=0):
        """The distributed dataset of `strategy`, each worker past its first `skip` batches."""

        def dataset_fn(input_context):
            dataset = self.make(input_context)
            return dataset.skip(skip) if skip else dataset

        return strategy.distribute_datasets_from_function(dataset_fn)


PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
AUTO = "auto"  # `auto_precision` decides
BFLOAT16_FLAGS = ("amx_bf16",)
"""The CPU flags (/proc/cpuinfo) under which `auto_precision` trains in bfloat16."""
MATRIX_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8")
"""The CPU flags that decide the speed of matrix products, as results record them."""
CPUINFO = "/proc/cpuinfo"


def cpu_flags(cpuinfo=None):
    """The CPU's flags (a frozenset of str) read from `cpuinfo`, the text of /proc/cpuinfo
    (default: this machine's; an empty set where there is none, e.g. macOS)."""
    if cpuinfo is None:
        try:
            with open(CPUINFO, encoding="utf-8") as f:
                cpuinfo = f.read()
        except OSError:
            return frozenset()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def auto_precision(flags=None, gpus=None):
    """(precision, reason): the policy `--precision auto` trains with on this machine.

    Args:
        flags: the CPU's flags (default: `cpu_flags()`).
        gpus: the number of visible GPUs (default: TensorFlow's count).

    "mixed_bfloat16" where the CPU has AMX bfloat16 units (`BFLOAT16_FLAGS`) and no GPU
    trains; else "float32". The reason names the flags it saw."""
    flags = cpu_flags() if flags is None else frozenset(flags)
    if gpus is None:
        import tensorflow as tf

        gpus = len(tf.config.list_physical_devices("GPU"))
    seen = " ".join(f for f in MATRIX_FLAGS if f in flags) or "none of " + " ".join(MATRIX_FLAGS)
    if gpus:
        return (
            "float32",
            f"{gpus} GPU(s) train; --precision mixed_float16 computes in float16 there",
        )
    if all(f in flags for f in BFLOAT16_FLAGS):
        return "mixed_bfloat16", f"the CPU has AMX bfloat16 units (flags: {seen})"
    return "float32", f"the CPU has no AMX bfloat16 units (flags: {seen})"


def set_precision(name):
    """Sets the global Keras dtype policy to `name`; returns the previous policy's name."""
    if name not in PRECISIONS:
        raise ValueError(f"Unknown precision {name!r}; expected one of {PRECISIONS}.")
    previous = keras.config.dtype_policy().name
    keras.config.set_dtype_policy(name)
    return previous


def needs_loss_scaling(model):
    """True when `model` computes in float16 (its dtype policy is mixed_float16 or float16)."""
    return model.dtype_policy.compute_dtype == "float16"
