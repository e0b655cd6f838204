"""Training data that each worker of a multi-worker run reads for itself.

`train` hands a plain `tf.data.Dataset` to `strategy.experimental_distribute_dataset`: its
batches are global batches, and tf.distribute shards and splits them across the workers
(each worker builds the whole pipeline and keeps its part). A corpus streamed from disk
should instead be read once per epoch in all: each worker reads its own shard in batches of
its replicas' size. That is `strategy.distribute_datasets_from_function`, which
`PerWorkerDataset` wraps so that `train` can skip the batches already done on resume.
"""

import tensorflow as tf


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
