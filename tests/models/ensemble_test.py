"""Ensemble: the members' mean distribution, against NumPy; one member equals the model."""

import keras
import numpy as np
import pytest

from zoo.models import Ensemble, build
from zoo.search import search

SOURCES = np.array([[4, 5, 6, 7], [7, 8, 0, 0]], "int32")
TARGETS = np.array([[1, 4, 5], [1, 6, 0]], "int32")


def _model(name, seed):
    keras.utils.set_random_seed(seed)
    return build(name, "tiny", source_vocab_size=12, target_vocab_size=11)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_one_member_searches_like_the_model():
    model = _model("luong_global_general", 1)
    ensemble = Ensemble([model])
    for beam_size in (1, 3):
        alone = search(model, SOURCES, beam_size=beam_size, length_penalty=1.0)
        together = search(ensemble, SOURCES, beam_size=beam_size, length_penalty=1.0)
        np.testing.assert_array_equal(together.ids, alone.ids)
        np.testing.assert_allclose(together.scores, alone.scores, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(together.attention, alone.attention, atol=1e-6)


def test_members_distributions_are_averaged():
    # A Bahdanau and a Luong model: the ensemble's logits are log of the mean softmax, by
    # teacher forcing and step by step.
    members = [_model("bahdanau_rnnsearch", 2), _model("luong_local_p_general", 3)]
    ensemble = Ensemble(members)
    inputs = {"source_ids": SOURCES, "target_ids": TARGETS}
    expected = np.log(np.mean([_softmax(np.asarray(m(inputs))) for m in members], axis=0))
    np.testing.assert_allclose(np.asarray(ensemble(inputs)), expected, atol=1e-5)
    encoder, decoder = ensemble.get_layer("encoder"), ensemble.get_layer("decoder")
    cache = decoder.prepare(*encoder(SOURCES, training=False))
    logits, _, weights = decoder.step(TARGETS[:, 0], decoder.initial_state(cache), cache)
    np.testing.assert_allclose(np.asarray(logits), expected[:, 0], atol=1e-5)
    # The members' mean weights (local-p's Gaussian sums to at most 1).
    assert np.all(np.asarray(weights).sum(-1) <= 1.0 + 1e-5) and np.all(np.asarray(weights) >= 0)
    result = search(ensemble, SOURCES, beam_size=2)
    assert result.ids.shape[0] == 2


def test_save_load_and_bad_members(tmp_path):
    members = [_model("luong_global_dot", 4), _model("luong_global_dot", 5)]
    ensemble = Ensemble(members)
    inputs = {"source_ids": SOURCES, "target_ids": TARGETS}
    ensemble.save(tmp_path / "ensemble.keras")
    loaded = keras.models.load_model(tmp_path / "ensemble.keras")
    np.testing.assert_allclose(np.asarray(loaded(inputs)), np.asarray(ensemble(inputs)), atol=1e-6)
    keras.utils.set_random_seed(6)
    other = build("luong_global_dot", "tiny", source_vocab_size=12, target_vocab_size=13)
    with pytest.raises(ValueError, match="one target vocabulary"):
        Ensemble([members[0], other])
    with pytest.raises(ValueError, match="at least one member"):
        Ensemble([])
