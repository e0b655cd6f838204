"""Tied output embeddings (Press and Wolf 2017): the decoder's output layer reads the target
embedding matrix E, logits = [x W_p] E^T + b, checked against NumPy on the model's own
weights, by parameter counts, through save/load and against the step loop."""

import keras
import numpy as np
import pytest
from model_toy import reversal_batch, stepwise_logits

from zoo.models import build

V = 11  # target (and source) vocabulary
TIED_PRESETS = ["bahdanau_rnnencdec", "bahdanau_rnnsearch", "luong_global_general", "luong_base"]


def tiny(name, tie, **overrides):
    keras.utils.set_random_seed(3)
    return build(
        name, "tiny", source_vocab_size=V, target_vocab_size=V, tie_embeddings=tie, **overrides
    )


def batch():
    source, target_in, _ = reversal_batch(np.random.default_rng(0), 4, 2, 5, V)
    return source, target_in


def readout_size(decoder):
    """The readout's features: Luong's h~ (units), Bahdanau's maxout output."""
    return getattr(decoder, "maxout_units", decoder.units)


def test_untied_default_has_its_own_output_matrix():
    decoder = tiny("luong_global_general", False).get_layer("decoder")
    assert decoder.get_config()["tie_embeddings"] is False
    assert [w.path for w in decoder.weights if w.path.endswith("W_s/kernel")]
    assert not [w for w in decoder.weights if "output_bias" in w.path or "W_p" in w.path]


@pytest.mark.parametrize("name", TIED_PRESETS)
def test_step_logits_are_the_readout_times_the_embedding_matrix(name):
    """One step's logits equal [x W_p] E^T + b computed in NumPy from the readout x and the
    model's own E, W_p and b; after E changes, the logits follow it."""
    model = tiny(name, True)
    source, target_in = batch()
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    assert decoder.get_config()["tie_embeddings"] is True
    cache = decoder.prepare(*encoder(source))
    state = decoder.initial_state(cache)
    params = decoder.loop_params()
    inputs = decoder._step_inputs(keras.ops.convert_to_tensor(target_in[:, 0]), params)
    features, _, _ = decoder._advance(inputs, state, cache, params)
    # The readout x: Luong's h~ is the feature itself; Bahdanau's t is the maxout output.
    captured = {}
    original = decoder.embedding.embeddings

    def reference():
        x = captured["x"]
        if decoder.W_p is not None:
            x = x @ np.asarray(decoder.W_p.kernel)
        return x @ np.asarray(decoder.embedding.embeddings).T + np.asarray(decoder.output_bias)

    if name.startswith("luong"):
        captured["x"] = np.asarray(features[0])
    else:
        maxout = decoder.maxout
        real_call = maxout.call

        def spy(x):
            out = real_call(x)
            captured["x"] = np.asarray(out)
            return out

        maxout.call = spy
    logits = np.asarray(decoder._readout(inputs, features, cache))
    assert logits.shape == (4, V)
    assert captured["x"].shape == (4, readout_size(decoder))
    decoder.output_bias.assign(np.linspace(-1, 1, V))
    np.testing.assert_allclose(
        decoder._readout(inputs, features, cache), reference(), rtol=1e-5, atol=1e-5
    )
    original.assign(np.random.default_rng(1).normal(size=original.shape))
    np.testing.assert_allclose(
        decoder._readout(inputs, features, cache), reference(), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("name", TIED_PRESETS)
def test_parameter_count_drops_by_the_output_matrix(name):
    """Tied: V x m fewer weights (the output matrix), plus W_p (d x m) where the readout's
    size d differs from the embedding size m; no (V, m) or (m, V) weight besides E."""
    untied, tied = tiny(name, False), tiny(name, True)
    decoder = tied.get_layer("decoder")
    m, d = decoder.embedding_dim, readout_size(decoder)
    projection = 0 if d == m else d * m
    # The untied output layer: kernel d x V and bias V; the tied one: W_p and bias V.
    assert tied.count_params() == untied.count_params() - d * V + projection
    shapes = [tuple(w.shape) for w in decoder.weights]
    assert shapes.count((V, m)) == 1 and (m, V) not in shapes and (d, V) not in shapes


def test_equal_sizes_drop_exactly_v_times_m():
    """Without a projection (readout size = embedding size) the count drops by V x m."""
    for name, sizes in (
        ("luong_global_general", dict(embedding_dim=16, units=16)),
        ("bahdanau_rnnsearch", dict(embedding_dim=16, maxout_units=16)),
    ):
        untied, tied = tiny(name, False, **sizes), tiny(name, True, **sizes)
        assert tied.get_layer("decoder").W_p is None
        assert tied.count_params() == untied.count_params() - V * 16


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("luong_global_general", {}),  # input feeding: the step loop in call
        ("luong_global_general", {"input_feeding": False}),  # the one-pass fast path
        ("luong_local_p_general", {}),
        ("bahdanau_rnnsearch", {}),
        ("bahdanau_rnnencdec", {}),
    ],
)
def test_step_loop_equals_teacher_forcing(name, overrides):
    model = tiny(name, True, **overrides)
    source, target_in = batch()
    forced = np.asarray(model({"source_ids": source, "target_ids": target_in}))
    stepped, _ = stepwise_logits(model, source, target_in)
    np.testing.assert_allclose(stepped, forced, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["luong_global_general", "bahdanau_rnnsearch"])
def test_save_and_load_give_equal_outputs(name, tmp_path):
    model = tiny(name, True)
    decoder = model.get_layer("decoder")
    decoder.output_bias.assign(np.linspace(-1, 1, V))  # not the initial zeros
    source, target_in = batch()
    inputs = {"source_ids": source, "target_ids": target_in}
    path = tmp_path / "tied.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    loaded_decoder = loaded.get_layer("decoder")
    assert loaded_decoder.tie_embeddings
    assert loaded.count_params() == model.count_params()
    np.testing.assert_allclose(loaded(inputs), model(inputs), rtol=1e-6, atol=1e-6)
    stepped, _ = stepwise_logits(loaded, source, target_in)
    np.testing.assert_allclose(stepped, model(inputs), rtol=1e-5, atol=1e-5)


def test_gradients_of_the_output_reach_the_embedding_matrix():
    """With the embedding inputs masked out (no target token but START), E's gradient
    comes from the output layer alone: nonzero at every row (every logit reads E)."""
    import tensorflow as tf

    model = tiny("bahdanau_rnnsearch", True)
    source, target_in = batch()
    decoder = model.get_layer("decoder")
    with tf.GradientTape() as tape:
        logits = model({"source_ids": source, "target_ids": target_in[:, :1]})
        loss = tf.reduce_sum(logits * np.random.default_rng(0).normal(size=(1, 1, V)))
    gradient = np.asarray(tf.convert_to_tensor(tape.gradient(loss, decoder.embedding.embeddings)))
    assert np.all(np.abs(gradient).sum(axis=1) > 0)


# Three-way tying: the source embeddings are the same matrix (one vocabulary).


@pytest.mark.parametrize("name", TIED_PRESETS)
def test_three_way_drops_the_source_matrix_too(name):
    tied, three_way = tiny(name, True), tiny(name, "three_way")
    assert type(three_way).__name__ == "ThreeWayTiedModel"
    encoder, decoder = three_way.get_layer("encoder"), three_way.get_layer("decoder")
    assert encoder.get_config()["shared_embedding"] is True
    assert three_way.count_params() == tied.count_params() - V * encoder.embedding_dim
    matrices = [w for w in three_way.weights if tuple(w.shape) == (V, decoder.embedding_dim)]
    assert [w.path for w in matrices] == ["decoder/E/embeddings"]


@pytest.mark.parametrize("name", ["luong_global_general", "bahdanau_rnnsearch"])
def test_three_way_source_embeddings_are_the_decoder_matrix(name, tmp_path):
    """Changing E changes the encoder's memory; save/load keeps the one shared matrix."""
    model = tiny(name, "three_way")
    source, target_in = batch()
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    memory = np.asarray(encoder(source)[0])
    matrix = decoder.embedding.embeddings
    matrix.assign(np.asarray(matrix) * 2.0)
    assert not np.allclose(encoder(source)[0], memory)
    inputs = {"source_ids": source, "target_ids": target_in}
    path = tmp_path / "three_way.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert type(loaded).__name__ == "ThreeWayTiedModel"
    assert loaded.count_params() == model.count_params()
    np.testing.assert_allclose(loaded(inputs), model(inputs), rtol=1e-6, atol=1e-6)
    stepped, _ = stepwise_logits(loaded, source, target_in)
    np.testing.assert_allclose(stepped, model(inputs), rtol=1e-5, atol=1e-5)
    loaded_memory = np.asarray(loaded.get_layer("encoder")(source)[0])
    loaded_matrix = loaded.get_layer("decoder").embedding.embeddings
    loaded_matrix.assign(np.asarray(loaded_matrix) * 3.0)  # the loaded encoder reads it too
    assert not np.allclose(loaded.get_layer("encoder")(source)[0], loaded_memory)


def test_with_tied_embeddings_ties_a_built_model():
    untied = tiny("luong_global_general", False)
    tied = zoo_models().with_tied_embeddings(untied)
    three_way = zoo_models().with_tied_embeddings(untied, three_way=True)
    assert tied.count_params() == tiny("luong_global_general", True).count_params()
    assert three_way.count_params() == tiny("luong_global_general", "three_way").count_params()
    assert zoo_models().with_tied_embeddings(tied) is tied


def zoo_models():
    import zoo.models

    return zoo.models


def test_three_way_refuses_unequal_sizes_naming_both():
    with pytest.raises(ValueError, match="source vocabulary size 11 and target vocabulary size 12"):
        build("luong_base", "tiny", 11, 12, tie_embeddings="three_way")
    untied = build("bahdanau_rnnsearch", "tiny", 11, 12)
    with pytest.raises(ValueError, match="--shared-vocabulary"):
        zoo_models().with_tied_embeddings(untied, three_way=True)
    with pytest.raises(ValueError, match="tie_embeddings must be one of"):
        build("luong_base", "tiny", 11, 11, tie_embeddings="both")


def test_an_encoder_sharing_embeddings_outside_a_three_way_model_says_so():
    from zoo.models import StackedLSTMEncoder

    encoder = StackedLSTMEncoder(V, 8, 8, shared_embedding=True)
    with pytest.raises(ValueError, match="only a ThreeWayTiedModel links"):
        encoder(np.array([[5, 6]], "int32"))


@pytest.mark.parametrize("tie", [True, "three_way"])
@pytest.mark.parametrize("name", ["luong_local_p_general", "bahdanau_rnnsearch"])
def test_step_of_some_rows_reads_the_tied_matrix(name, tie):
    """`step(..., rows=r)`, search's step for live rows only, gives those rows of the full
    tied step."""
    model = tiny(name, tie)
    source, target_in = batch()
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    cache = decoder.prepare(*encoder(source))
    state = decoder.initial_state(cache)
    _, state, _ = decoder.step(target_in[:, 0], state, cache)
    rows = np.array([3, 0], "int32")
    full, _, _ = decoder.step(target_in[:, 1], state, cache)
    some, _, _ = decoder.step(target_in[:, 1], state, cache, rows=rows)
    np.testing.assert_allclose(some, np.asarray(full)[rows], rtol=1e-5, atol=1e-6)


def test_tied_model_under_mixed_precision():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = tiny("luong_global_general", "three_way")
        source, target_in = batch()
        logits = model({"source_ids": source, "target_ids": target_in})
        stepped, _ = stepwise_logits(model, source, target_in)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert logits.dtype == "float16" and np.all(np.isfinite(np.asarray(logits)))
    np.testing.assert_allclose(stepped, np.asarray(logits), rtol=2e-2, atol=2e-2)
