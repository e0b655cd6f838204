"""Tests for zoo/training/trainer.py: exact kill-and-resume, precision policies, multiworker."""

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from training_toy import toy_dataset, toy_model, train_toy

from zoo import training

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCRIPT = HERE / "train_toy_script.py"


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    env.update(extra)
    return env


def _run(args, **env):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _summary(stdout):
    line = [x for x in stdout.splitlines() if x.startswith("SUMMARY ")][-1]
    return eval(line[len("SUMMARY ") :], {"nan": float("nan"), "inf": float("inf")})


def _signal_at_step(tmp_path, step, signum):
    """Runs the toy job in a subprocess and sends `signum` once step `step` (a multiple of
    3: checkpointed) is done; returns the process and what it printed after that."""
    argv = [sys.executable, str(SCRIPT), tmp_path / "run", "--weights", tmp_path / "x.npy"]
    proc = subprocess.Popen(
        [*argv, "--marker-step", str(step)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        for line in proc.stdout:
            if line.startswith(f"CHECKPOINTED {step}"):
                break
        else:
            pytest.fail(f"the training process ended without reaching step {step}")
        os.kill(proc.pid, signum)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc, rest


def test_killed_run_resumes_to_the_same_weights(tmp_path):
    # Uninterrupted reference, in this process: 3 epochs x 8 batches, checkpoint every 3 steps.
    _, reference = train_toy(tmp_path / "ref")
    # Interrupted run: SIGKILL mid-epoch 2 after the checkpoint of step 12 was written.
    proc, _ = _signal_at_step(tmp_path, 12, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "x.npy").exists()
    checkpoints = sorted(os.listdir(tmp_path / "run" / "checkpoints"))
    state = json.loads(
        (tmp_path / "run" / "checkpoints" / checkpoints[-1] / "state.json").read_text()
    )["state"]
    assert state["epoch"] == 1 and 0 < state["batch"] < 8  # killed mid-epoch 2
    # Plain re-run of the same command: resumes from the newest checkpoint.
    summary = _summary(_run([tmp_path / "run", "--weights", tmp_path / "x.npy"]))
    assert summary["resumed_from_step"] == state["step"]
    assert summary["steps"] == 24
    # The reference ran in this process, without op determinism: equal up to float rounding
    # (a replayed or skipped batch would differ by ~1e-3; see the bitwise in-process test below).
    np.testing.assert_allclose(np.load(tmp_path / "x.npy"), reference, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "signum,code",
    [pytest.param(signal.SIGINT, 130, marks=pytest.mark.slow), (signal.SIGTERM, 143)],
)  # one handler takes both (zoo.training.callbacks)
def test_signal_checkpoints_the_current_step_and_resumes_exactly(tmp_path, signum, code):
    _, reference = train_toy(tmp_path / "ref")
    proc, rest = _signal_at_step(tmp_path, 9, signum)
    assert proc.returncode == code
    stopped = int(next(x for x in rest.splitlines() if x.startswith("INTERRUPTED")).split()[1])
    assert stopped >= 9  # the step in flight finished; checkpoints come every 3 steps
    names = os.listdir(tmp_path / "run" / "checkpoints")
    newest = max(names, key=lambda name: int(name.split("-")[1]))  # ckpt-<step>
    state = json.loads((tmp_path / "run" / "checkpoints" / newest / "state.json").read_text())
    assert state["state"]["step"] == stopped  # nothing lost since the last checkpoint
    summary = _summary(_run([tmp_path / "run", "--weights", tmp_path / "x.npy"]))
    assert summary["resumed_from_step"] == stopped and summary["steps"] == 24
    np.testing.assert_allclose(np.load(tmp_path / "x.npy"), reference, rtol=0, atol=1e-6)


def _luong_run(out_dir, max_steps=None, resume=True, per_worker=False):
    keras.utils.set_random_seed(5)
    model = toy_model()

    def data(epoch):
        if per_worker:  # built by each worker from its input context (one here)
            return training.PerWorkerDataset(lambda context: toy_dataset(epoch, seed=3), 8)
        return toy_dataset(epoch, seed=3)

    summary = training.train(
        model,
        data,
        out_dir=out_dir,
        optimizer="luong",
        steps_per_epoch=8,
        epochs=2,
        max_steps=max_steps,
        checkpoint_every=100,
        verbose=0,
        resume=resume,
    )
    return summary, np.concatenate([np.ravel(w) for w in model.get_weights()])


def test_max_steps_then_rerun_equals_one_run(tmp_path):
    # Stopping at max_steps mid-epoch and re-running continues with the same batches and
    # learning-rate schedule: the result equals one uninterrupted run.
    _, reference = _luong_run(tmp_path / "ref")
    first, partial = _luong_run(tmp_path / "run", max_steps=5)
    assert first["steps"] == 5 and first["epochs"] == pytest.approx(5 / 8)
    assert not np.array_equal(partial, reference)
    summary, weights = _luong_run(tmp_path / "run")
    assert summary["resumed_from_step"] == 5 and summary["steps"] == 16
    np.testing.assert_array_equal(weights, reference)
    # Re-running a finished job trains nothing more.
    again, weights = _luong_run(tmp_path / "run")
    assert again["steps"] == 16 and again["resumed_from_step"] == 16
    np.testing.assert_array_equal(weights, reference)


def test_per_worker_dataset_trains_and_resumes_like_the_dataset(tmp_path):
    # The same batches given as a PerWorkerDataset (what a streamed multi-worker run hands
    # to train): stopped mid-epoch and re-run, the weights of one plain run.
    _, reference = _luong_run(tmp_path / "ref")
    first, _ = _luong_run(tmp_path / "run", max_steps=5, per_worker=True)
    assert first["steps"] == 5
    summary, weights = _luong_run(tmp_path / "run", per_worker=True)
    assert summary["resumed_from_step"] == 5 and summary["steps"] == 16
    np.testing.assert_array_equal(weights, reference)
    with pytest.raises(ValueError, match="PerWorkerDataset needs a function"):
        training.PerWorkerDataset(toy_dataset(0))


@pytest.mark.parametrize("precision", ["float32", "mixed_float16", "mixed_bfloat16"])
def test_trains_in_each_precision_policy(tmp_path, precision):
    previous = training.set_precision(precision)
    try:
        keras.utils.set_random_seed(0)
        model = toy_model()
        before = [w.copy() for w in model.get_weights()]
        summary = training.train(
            model,
            toy_dataset(0, n=24),
            toy_dataset(0, n=8),
            out_dir=tmp_path,
            optimizer="adam",
            epochs=1,
            max_steps=3,
            verbose=0,
        )
        assert summary["steps"] == 3
        assert np.isfinite(summary["train_loss"]) and np.isfinite(summary["val_loss"])
        assert summary["target_tokens"] > 0 and summary["tokens_per_s"] > 0
        after = model.get_weights()
        assert all(w.dtype == np.float32 for w in after)
        assert any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))
        assert (tmp_path / "model.keras").exists()
        assert any((tmp_path / "logs" / "train").iterdir())
    finally:
        training.set_precision(previous)
    assert keras.config.dtype_policy().name == previous


def test_mixed_float16_wraps_optimizer_in_loss_scaling(tmp_path):
    training.set_precision("mixed_float16")
    model = toy_model()
    assert training.needs_loss_scaling(model)
    training.set_precision("float32")
    assert not training.needs_loss_scaling(toy_model())


def test_resume_false_starts_over(tmp_path):
    keras.utils.set_random_seed(0)
    model = toy_model()
    data = toy_dataset(0, n=16)
    training.train(model, data, out_dir=tmp_path, optimizer="adam", max_steps=2, verbose=0)
    summary = training.train(
        model, data, out_dir=tmp_path, optimizer="adam", max_steps=1, resume=False, verbose=0
    )
    assert summary["steps"] == 1 and summary["resumed_from_step"] is None


def test_label_smoothing_changes_the_gradient_not_the_reported_loss(tmp_path):
    def run(eps, name):
        keras.utils.set_random_seed(7)
        model = toy_model(dropout=0.0)
        summary = training.train(
            model,
            toy_dataset(shuffle=False),
            toy_dataset(shuffle=False),
            out_dir=tmp_path / name,
            optimizer="adam",
            max_steps=4,
            label_smoothing=eps,
            verbose=0,
        )
        return summary, model

    plain, plain_model = run(0.0, "plain")
    smooth, smooth_model = run(0.2, "smooth")
    difference = [
        np.abs(a - b).max()
        for a, b in zip(plain_model.get_weights(), smooth_model.get_weights(), strict=True)
    ]
    assert max(difference) > 1e-4  # another objective, other updates
    # Validation loss is the plain cross-entropy of the trained weights, as evaluate() says.
    check = training.evaluate(smooth_model, toy_dataset(shuffle=False))
    np.testing.assert_allclose(smooth["val_loss"], check["loss"], rtol=1e-5)
    with pytest.raises(ValueError, match=r"train: label_smoothing must be a float in \[0, 1\)"):
        run(1.0, "bad")


def test_sentence_normalization_scales_the_sgd_step_by_tokens_per_sentence(tmp_path):
    # One SGD step without clipping: the update is lr * gradient, and the gradient of the
    # summed loss over sentences is (tokens / sentences) times that of the mean per token.
    batch = next(iter(toy_dataset(shuffle=False)))
    tokens = float(np.sum(batch[1].numpy() != 0))
    sentences = float(np.sum(np.any(batch[1].numpy() != 0, axis=1)))

    def update(normalization):
        keras.utils.set_random_seed(3)
        model = toy_model(dropout=0.0)
        before = [w.copy() for w in model.get_weights()]
        training.train(
            model,
            tf.data.Dataset.from_tensors(batch),
            out_dir=tmp_path / normalization,
            optimizer=keras.optimizers.SGD(learning_rate=1.0),  # update = -gradient
            loss_normalization=normalization,
            verbose=0,
        )
        return [a - b for a, b in zip(model.get_weights(), before, strict=True)]

    per_token, per_sentence = update("tokens"), update("sentences")
    assert max(np.abs(d).max() for d in per_token) > 1e-6
    for a, b in zip(per_token, per_sentence, strict=True):
        np.testing.assert_allclose(
            b, a * tokens / sentences, rtol=2e-3, atol=1e-5 * np.abs(b).max()
        )
    with pytest.raises(ValueError, match="loss_normalization"):
        training.train(
            toy_model(),
            toy_dataset(),
            out_dir=tmp_path / "bad",
            optimizer="adam",
            loss_normalization="words",
        )


def test_history_has_one_record_per_finished_epoch(tmp_path):
    summary, _ = train_toy(tmp_path / "run", epochs=2)
    history = summary["history"]
    assert [r["epoch"] for r in history] == [1, 2] and [r["step"] for r in history] == [8, 16]
    np.testing.assert_allclose(history[-1]["val_loss"], summary["val_loss"])
    np.testing.assert_allclose(history[0]["val_ppl"], np.exp(history[0]["val_loss"]))
    assert history[0]["train_time_s"] <= history[1]["train_time_s"]


def test_bad_arguments_raise():
    model = toy_model()
    with pytest.raises(ValueError, match="epochs"):
        training.train(model, toy_dataset(), out_dir="/tmp/unused", epochs=0)
    with pytest.raises(ValueError, match="tf.data.Dataset"):
        training.train(
            model,
            lambda epoch: [1, 2],
            out_dir="/tmp/unused_zoo_test",
            optimizer="adam",
            verbose=0,
        )


def test_evaluate_matches_loss_over_whole_dataset():
    keras.utils.set_random_seed(0)
    model = toy_model()
    ds = toy_dataset(0, n=20, batch_size=6, shuffle=False)  # uneven last batch
    metrics = training.evaluate(model, ds)
    total, tokens = 0.0, 0.0
    for inputs, targets in ds:
        loss_sum, _, n = training.masked_token_stats(targets, model(inputs))
        total, tokens = total + float(loss_sum), tokens + float(n)
    np.testing.assert_allclose(metrics["loss"], total / tokens, rtol=1e-6)
    np.testing.assert_allclose(metrics["ppl"], np.exp(total / tokens), rtol=1e-6)
    assert metrics["tokens"] == tokens


def test_evaluate_without_target_tokens_raises_instead_of_nan():
    model = toy_model()
    ds = toy_dataset(0, n=4, batch_size=2, shuffle=False)
    padding_only = ds.map(lambda inputs, targets: (inputs, targets * 0))
    with pytest.raises(ValueError, match="no target tokens"):
        training.evaluate(model, padding_only)


def _free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _run_two_workers(command):
    """Runs `command(index)` for workers 0 and 1 of a local two-worker cluster (TF_CONFIG)
    at once; asserts both exit 0 within 240 s and returns their (stdout, stderr)."""
    workers = [f"127.0.0.1:{p}" for p in _free_ports(2)]
    procs = []
    for index in range(2):
        config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        procs.append(
            subprocess.Popen(
                [str(part) for part in command(index)],
                env=_env(TF_CONFIG=json.dumps(config)),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        outputs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err[-3000:]
    return outputs


@pytest.mark.slow  # ~40-120 s here: three TensorFlow processes
def test_multiworker_workers_end_with_identical_weights(tmp_path):
    outputs = _run_two_workers(
        lambda index: [
            sys.executable,
            str(SCRIPT),
            tmp_path / "out",
            "--weights",
            tmp_path / f"w{index}.npy",
            "--strategy",
            "multiworker",
            "--epochs",
            "1",
            "--max-steps",
            "4",
            "--dropout",
            "0",
        ]
    )
    w0, w1 = np.load(tmp_path / "w0.npy"), np.load(tmp_path / "w1.npy")
    np.testing.assert_array_equal(w0, w1)
    # The two workers trained one model together: each step's gradient is that of the whole
    # global batch, so the result is the single-process run's (up to summation order).
    _run(
        [
            tmp_path / "single",
            "--weights",
            tmp_path / "single.npy",
            "--epochs",
            "1",
            "--max-steps",
            "4",
            "--dropout",
            "0",
        ]
    )
    np.testing.assert_allclose(w0, np.load(tmp_path / "single.npy"), atol=2e-5)
    assert _summary(outputs[0][0])["steps"] == 4
    assert (tmp_path / "out" / "model.keras").exists()  # written by the chief only


@pytest.mark.parametrize("damage", ["truncate", pytest.param("remove", marks=pytest.mark.slow)])
def test_damaged_newest_checkpoint_resumes_from_the_one_before(tmp_path, damage):
    # Fault injection: the run dies while its newest checkpoint is being written. SIGKILL
    # after a checkpoint at a seeded random step, then that checkpoint's variables are cut
    # short or gone, as a crash of the machine or a full disk leaves them.
    step = int(np.random.default_rng(19).choice([9, 12, 15, 18]))
    _, reference = train_toy(tmp_path / "ref")
    proc, _ = _signal_at_step(tmp_path, step, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    folder = tmp_path / "run" / "checkpoints"
    newest = max(os.listdir(folder), key=lambda name: int(name.split("-")[1]))
    variables = folder / newest / "variables.npz"
    if damage == "truncate":
        variables.write_bytes(variables.read_bytes()[: variables.stat().st_size // 2])
    else:
        variables.unlink()
    result = subprocess.run(
        [sys.executable, str(SCRIPT), tmp_path / "run", "--weights", tmp_path / "x.npy"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"damaged checkpoint: {variables}" in result.stderr
    summary = _summary(result.stdout)
    assert summary["resumed_from_step"] == int(newest.split("-")[1]) - 3  # the one before
    assert summary["steps"] == 24
    np.testing.assert_allclose(np.load(tmp_path / "x.npy"), reference, rtol=0, atol=1e-6)


def _unequal_shards_corpus(directory):
    """60 pairs (target = the source reversed); 10 of the 30 even lines are longer than the
    scripts' max_length of 5, so worker 0 keeps 20 pairs and worker 1 keeps 30."""
    rng = np.random.default_rng(0)
    words = ["a", "b", "c", "d", "e", "f", "g", "h"]
    sources = []
    for i in range(60):
        length = 7 if i % 2 == 0 and i < 20 else int(rng.integers(2, 6))
        sources.append(" ".join(rng.choice(words, size=length)))
    (directory / "train.src").write_text("".join(s + "\n" for s in sources))
    (directory / "train.tgt").write_text("".join(" ".join(s.split()[::-1]) + "\n" for s in sources))
    return str(directory / "{split}")


def test_streamed_multiworker_workers_read_their_shards_in_step(tmp_path):
    """Two workers stream their own shards, of 20 and 30 usable pairs: both run the epoch's
    7 steps (ceil(50 / 8)) and end with identical weights (unequal step counts would leave
    one worker waiting in the all-reduce until the timeout)."""
    data = _unequal_shards_corpus(tmp_path)
    script = SCRIPT.with_name("stream_workers_script.py")
    outputs = _run_two_workers(
        lambda index: [
            sys.executable,
            str(script),
            data,
            str(tmp_path / "out"),
            "--weights",
            str(tmp_path / f"w{index}.npy"),
            "--strategy",
            "multiworker",
        ]
    )
    shards = [[x for x in out.splitlines() if x.startswith("SHARD")][0] for out, _ in outputs]
    assert shards == [
        "SHARD 0 of 2: 20 kept pairs; 7 steps",
        "SHARD 1 of 2: 30 kept pairs; 7 steps",
    ]
    assert [_summary(out)["steps"] for out, _ in outputs] == [7, 7]
    np.testing.assert_array_equal(np.load(tmp_path / "w0.npy"), np.load(tmp_path / "w1.npy"))


def test_adadelta_step_on_embeddings_matches_numpy_on_the_summed_gradient(tmp_path):
    # Bahdanau et al.'s Adadelta (Zeiler 2012, algorithm 1) on the dense gradient: a token
    # repeated in the batch adds the square of its summed gradient to the accumulator, not
    # the sum of the squares of its slices (Theano's dense embedding gradient). One step.
    rho, eps = 0.95, 1e-6
    batch = next(iter(toy_dataset(shuffle=False)))
    ids = batch[0]["source_ids"].numpy()
    assert len(np.unique(ids[ids != 0])) < np.sum(ids != 0)  # some token repeats
    keras.utils.set_random_seed(5)
    model = toy_model(dropout=0.0)
    before = [w.copy() for w in model.get_weights()]
    targets = batch[1]
    with tf.GradientTape() as tape:
        logits = model(batch[0], training=True)
        nll = keras.losses.sparse_categorical_crossentropy(targets, logits, from_logits=True)
        mask = tf.cast(targets != 0, nll.dtype)
        loss = tf.reduce_sum(nll * mask) / tf.reduce_sum(mask)
    grads = tape.gradient(loss, model.trainable_variables)
    grads = [tf.convert_to_tensor(g).numpy() for g in grads]  # dense: repeated rows summed
    expected = []
    for w, g in zip(before, grads, strict=True):
        accumulated = (1 - rho) * g**2
        expected.append(w - np.sqrt(eps) / np.sqrt(accumulated + eps) * g)
    training.train(
        model,
        tf.data.Dataset.from_tensors(batch),
        out_dir=tmp_path,
        optimizer=keras.optimizers.Adadelta(learning_rate=1.0, rho=rho, epsilon=eps),
        verbose=0,
    )
    for weight, want in zip(model.get_weights(), expected, strict=True):
        np.testing.assert_allclose(weight, want, rtol=1e-4, atol=1e-6)
