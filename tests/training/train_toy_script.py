"""Subprocess entry for trainer tests: trains the toy model deterministically.

    python train_toy_script.py OUT_DIR --weights W.npy [--marker-step K] [--precision P]

With --marker-step K it prints "CHECKPOINTED K" after step K's checkpoint is written and
then slows down (0.2 s per step) so that the test can kill it mid-epoch.
With TF_CONFIG set and --strategy multiworker it trains under MultiWorkerMirroredStrategy.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

parser = argparse.ArgumentParser()
parser.add_argument("out_dir")
parser.add_argument("--weights", required=True)
parser.add_argument("--marker-step", type=int, default=None)
parser.add_argument("--strategy", default="default")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--max-steps", type=int, default=None)
parser.add_argument("--checkpoint-every", type=int, default=3)
parser.add_argument("--optimizer", default="adam")
parser.add_argument("--dropout", type=float, default=0.1)
args = parser.parse_args()

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from zoo import training  # noqa: E402

strategy = training.make_strategy(args.strategy)
tf.config.experimental.enable_op_determinism()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from training_toy import train_toy  # noqa: E402


class Marker(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if args.marker_step is None:
            return
        if logs["step"] == args.marker_step:
            print(f"CHECKPOINTED {logs['step']}", flush=True)
        if logs["step"] >= args.marker_step:
            time.sleep(0.2)


try:
    summary, weights = train_toy(
        args.out_dir,
        strategy=strategy,
        epochs=args.epochs,
        max_steps=args.max_steps,
        checkpoint_every=args.checkpoint_every,
        optimizer=args.optimizer,
        dropout=args.dropout,
        callbacks=[Marker()],
    )
except training.TrainingInterrupted as interrupted:
    print(f"INTERRUPTED {interrupted.step}", flush=True)
    sys.exit(interrupted.exit_code)
np.save(args.weights, weights)
print("SUMMARY", summary, flush=True)
