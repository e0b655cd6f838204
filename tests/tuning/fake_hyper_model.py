"""A HyperModel whose trials take no training (for kill-and-resume tests of the tuners).

Run as a script: `python fake_hyper_model.py DIRECTORY LOG MAX_TRIALS HANG_AT` runs a
random search in DIRECTORY with `zoo.tuning.make_tuner`; every `fit` appends one line
(its hyperparameters) to LOG, and the fit call number HANG_AT (0-based; -1: none) sleeps
until the process is killed.
"""

import json
import sys
import time

import keras
import keras_tuner


class FakeHyperModel(keras_tuner.HyperModel):
    objective = "val_loss"

    def __init__(self, log, hang_at=-1):
        super().__init__()
        self.log = log
        self.hang_at = hang_at

    def build(self, hp):
        hp.Int("units", 1, 10**6)
        hp.Choice("attention", ["bahdanau", "luong_global_dot"])
        inputs = keras.Input((1,))
        return keras.Model(inputs, keras.layers.Dense(1)(inputs))

    def fit(self, hp, model, *args, **kwargs):
        with open(self.log) as f:
            calls = sum(1 for _ in f)
        with open(self.log, "a") as f:
            f.write(json.dumps(hp.values) + "\n")
        if calls == self.hang_at:
            time.sleep(600)
        return {"val_loss": float(hp.values["units"])}


def search(directory, log, max_trials, hang_at=-1):
    from zoo.tuning import make_tuner

    tuner = make_tuner(
        "random", FakeHyperModel(log, hang_at), directory, max_trials=max_trials, verbose=0
    )
    tuner.search()
    return tuner


if __name__ == "__main__":
    search(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
