import json
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
from model_toy import reversal_batch

from zoo.models import attention_presets, build, preset_arguments, presets

REPO = Path(__file__).resolve().parents[2]
NAMES = [
    "bahdanau_rnnencdec",
    "bahdanau_rnnsearch",
    "luong_base",
    "luong_global_dot",
    "luong_global_general",
    "luong_global_concat",
    "luong_global_location",
    "luong_local_m_dot",
    "luong_local_m_general",
    "luong_local_p_dot",
    "luong_local_p_general",
]


def test_preset_names():
    # The papers' rows, in this order; a preset added later may follow them.
    assert presets()[: len(NAMES)] == NAMES


def test_attention_presets_are_all_but_the_fixed_context_baselines():
    baselines = ("bahdanau_rnnencdec", "luong_base")
    assert attention_presets() == [name for name in presets() if name not in baselines]


@pytest.mark.parametrize("name", presets())
def test_every_preset_builds_and_trains(name):
    """Builds at tiny size, checks the model contract, and fits a few steps of a toy
    reversal task with decreasing loss (eagerly: tracing the graph costs more here)."""
    source, target_in, target_out = reversal_batch(np.random.default_rng(0), 8, 2, 3, 10)
    model = build(name, "tiny", source_vocab_size=10, target_vocab_size=10)
    assert {layer.name for layer in model.layers} >= {"encoder", "decoder"}
    assert isinstance(model.input, dict) and sorted(model.input) == ["source_ids", "target_ids"]
    assert not any(isinstance(layer, keras.layers.Lambda) for layer in model._flatten_layers())
    model.compile(
        optimizer=keras.optimizers.Adam(0.02),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        run_eagerly=True,
    )
    history = model.fit(
        {"source_ids": source, "target_ids": target_in}, target_out, epochs=4, verbose=0
    )
    losses = history.history["loss"]
    assert losses[-1] < losses[0], losses
    logits = model({"source_ids": source, "target_ids": target_in})
    assert logits.shape == (8, 4, 10)
    config = model.get_config()
    rebuilt = keras.Model.from_config(config)
    assert rebuilt.get_layer("decoder").get_config() == model.get_layer("decoder").get_config()
    assert rebuilt.get_layer("encoder").get_config() == model.get_layer("encoder").get_config()


@pytest.mark.parametrize(
    "name", ["bahdanau_rnnencdec", "bahdanau_rnnsearch", "luong_local_p_general"]
)
def test_step_of_some_rows_is_those_rows_of_the_full_step(name):
    """`step(..., rows=r)` (search's step for live rows only) returns the logits of rows r
    of the full step, the full step's state in rows r and the given state elsewhere, and
    the full step's weights in rows r and zeros elsewhere."""
    source, target_in, _ = reversal_batch(np.random.default_rng(1), 5, 2, 4, 10)
    model = build(name, "tiny", source_vocab_size=10, target_vocab_size=10)
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    cache = decoder.prepare(*encoder(source))
    state = decoder.initial_state(cache)
    _, state, _ = decoder.step(target_in[:, 0], state, cache)  # a state that is not s_0
    rows = np.array([3, 0, 4], "int32")
    full = decoder.step(target_in[:, 1], state, cache)
    some = decoder.step(target_in[:, 1], state, cache, rows=rows)
    np.testing.assert_allclose(some[0], np.asarray(full[0])[rows], rtol=1e-5, atol=1e-6)
    others = np.setdiff1d(np.arange(5), rows)
    for given, stepped, reference in zip(state, some[1], full[1], strict=True):
        np.testing.assert_allclose(
            np.asarray(stepped)[rows], np.asarray(reference)[rows], rtol=1e-5, atol=1e-6
        )
        np.testing.assert_array_equal(np.asarray(stepped)[others], np.asarray(given)[others])
    np.testing.assert_allclose(
        np.asarray(some[2])[rows], np.asarray(full[2])[rows], rtol=1e-5, atol=1e-6
    )
    np.testing.assert_array_equal(np.asarray(some[2])[others], 0.0)


@pytest.mark.parametrize(
    "name", ["bahdanau_rnnencdec", "bahdanau_rnnsearch", "luong_global_general"]
)
def test_training_gradients_equal_those_of_plain_matmuls(name, monkeypatch):
    """The loops multiply kernels with `matmul_pretransposed` (a faster backward); with plain
    `ops.matmul` in its place the whole model's gradients are the same."""
    import tensorflow as tf
    from keras import ops

    import zoo.models.recurrence as recurrence

    source, target_in, target_out = reversal_batch(np.random.default_rng(2), 4, 2, 5, 10)
    model = build(name, "tiny", source_vocab_size=10, target_vocab_size=10)
    inputs = {"source_ids": source, "target_ids": target_in}

    def gradients():
        with tf.GradientTape() as tape:
            logits = model(inputs, training=False)  # no dropout: both runs see the same net
            loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(target_out, logits))
        return [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_weights)]

    fast = gradients()
    monkeypatch.setattr(recurrence, "matmul_pretransposed", lambda x, k, k_t: ops.matmul(x, k))
    plain = gradients()
    assert len(fast) == len(plain) == len(model.trainable_weights)
    for weight, got, expected in zip(model.trainable_weights, fast, plain, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6, err_msg=weight.path)


def test_unknown_names_raise_listing_valid_ones():
    with pytest.raises(ValueError, match="valid overrides: .*embedding_dim"):
        build("luong_global_dot", "tiny", 10, 10, hidden_size=3)
    with pytest.raises(ValueError, match="valid presets: .*bahdanau_rnnsearch"):
        build("transformer", "tiny", 10, 10)
    with pytest.raises(ValueError, match="valid sizes"):
        build("luong_base", "huge", 10, 10)
    with pytest.raises(ValueError, match="source_vocab_size"):
        build("luong_base", "tiny")


def test_overrides_reach_the_layers():
    model = build(
        "luong_local_m_general", "tiny", 10, 12, num_layers=1, units=8, window=2,
        input_feeding=False, reverse_source=False, score="dot",
    )  # fmt: skip
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    assert (encoder.num_layers, encoder.units, encoder.reverse_source) == (1, 8, False)
    assert (decoder.attention.window, decoder.attention.score) == (2, "dot")
    assert decoder.attention.mode == "monotonic" and not decoder.input_feeding
    assert preset_arguments("luong_global_location", "paper")["max_length"] == 100


def test_save_and_load_in_a_new_process(tmp_path):
    source, target_in, _ = reversal_batch(np.random.default_rng(0), 4, 2, 5, 10)
    np.save(tmp_path / "source.npy", source)
    np.save(tmp_path / "target.npy", target_in)
    names = ["bahdanau_rnnsearch", "bahdanau_rnnencdec", "luong_local_p_general", "luong_base"]
    for name in names:
        model = build(name, "tiny", 10, 10)
        np.save(tmp_path / f"{name}.npy", model({"source_ids": source, "target_ids": target_in}))
        model.save(tmp_path / f"{name}.keras")
    script = f"""
import json, sys
import numpy as np
import keras
import zoo
d = {str(tmp_path)!r}
source, target = np.load(d + "/source.npy"), np.load(d + "/target.npy")
errors = {{}}
for name in {names!r}:
    model = keras.models.load_model(d + "/" + name + ".keras")
    out = np.asarray(model({{"source_ids": source, "target_ids": target}}))
    errors[name] = float(np.abs(out - np.load(d + "/" + name + ".npy")).max())
print(json.dumps(errors))
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    errors = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(errors) == set(names)
    assert max(errors.values()) < 1e-6, errors


def _gru(input_dim, n, reset_after):
    """Keras GRU weights: kernel, recurrent kernel, bias (2 rows with reset_after)."""
    return 3 * (input_dim * n + n * n) + (2 if reset_after else 1) * 3 * n


def _lstm(input_dim, n):
    return 4 * (input_dim * n + n * n) + 4 * n


def test_paper_parameter_counts_by_hand():
    # RNNsearch, Bahdanau et al. 2014 appendix A.2: V = 30000, m = 620, n = n' = 1000, l = 500.
    V, m, n, ell = 30000, 620, 1000, 500  # ell: the paper's l (maxout units)
    encoder = V * m + 2 * _gru(m, n, reset_after=True)  # E and both directions
    decoder = (
        V * m  # E (target)
        + n * n + 2 * n * n + n  # attention W_a, U_a, v_a
        + _gru(m + 2 * n, n, reset_after=False)  # GRU on [E y; c]
        + n * n + n  # W_s (s_0 = tanh(W_s bwd_h_1))
        + n * 2 * ell + 2 * ell  # U_o
        + m * 2 * ell  # V_o
        + 2 * n * 2 * ell  # C_o
        + ell * V + V  # W_o
    )  # fmt: skip
    bahdanau = build("bahdanau_rnnsearch", "paper", V, V)
    assert bahdanau.count_params() == encoder + decoder
    del bahdanau
    keras.backend.clear_session()
    # Global attention (dot), Luong et al. 2015 §4.1: V = 50000, d = 1000, 4 layers, feeding.
    V, d = 50000, 1000
    encoder = V * d + _lstm(d, d) + 3 * _lstm(d, d)
    decoder = (
        V * d
        + _lstm(d + d, d) + 3 * _lstm(d, d)  # the first layer reads [E y; h~]
        + 2 * d * d  # W_c (no bias)
        + d * V + V  # W_s
    )  # fmt: skip
    luong = build("luong_global_dot", "paper", V, V)
    assert luong.count_params() == encoder + decoder
