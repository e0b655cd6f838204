"""Subprocess entry for the streamed multi-worker test: one epoch of the toy model on a
streamed corpus, each worker reading its own shard (zoo.data.worker_stream).

    python stream_workers_script.py DATA_PREFIX OUT_DIR --weights W.npy [--strategy S]

DATA_PREFIX{split}.src / .tgt hold the corpus. Prints "SUMMARY {...}" and "SHARD i of n:
k kept pairs" for this worker's shard.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

parser = argparse.ArgumentParser()
parser.add_argument("data")
parser.add_argument("out_dir")
parser.add_argument("--weights", required=True)
parser.add_argument("--strategy", default="default")
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--max-length", type=int, default=5)
args = parser.parse_args()

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from zoo import data, text, training  # noqa: E402

strategy = training.make_strategy(args.strategy)
tf.config.experimental.enable_op_determinism()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from training_toy import toy_model  # noqa: E402

corpus = data.open_stream(args.data, "src", "tgt", "train")
whole = data.materialise(corpus)
tokenizers = [
    text.train_tokenizer("word", sentences, vocab_size=40)
    for sentences in (whole.source, whole.target)
]
counts = data.count_stream(corpus, *tokenizers, args.max_length)
steps = data.stream_steps(counts, args.batch_size, "plain")
resolver = getattr(strategy, "cluster_resolver", None)
workers = strategy.num_replicas_in_sync
index = resolver.task_id if resolver is not None and resolver.task_id is not None else 0
shard = data.count_stream(corpus, *tokenizers, args.max_length, num_shards=workers, index=index)
print(f"SHARD {index} of {workers}: {shard['kept']} kept pairs; {steps} steps", flush=True)
make = data.worker_stream(
    corpus,
    *tokenizers,
    batch_size=args.batch_size,
    steps=steps,
    max_length=args.max_length,
    batching="plain",
    seed=3,
)
keras.utils.set_random_seed(1234)
with strategy.scope():
    model = toy_model(vocab=max(t.vocab_size for t in tokenizers), dropout=0.0)
    optimizer = training.make_optimizer("adam")
summary = training.train(
    model,
    lambda epoch: training.PerWorkerDataset(make, steps),
    out_dir=args.out_dir,
    optimizer=optimizer,
    epochs=1,
    strategy=strategy,
    verbose=0,
)
np.save(args.weights, np.concatenate([w.numpy().ravel() for w in model.weights]))
print("SUMMARY", {k: summary[k] for k in ("steps", "epochs")}, flush=True)
