"""Tests for zoo/training/losses.py against a NumPy reference with padding masked out."""

import keras
import numpy as np
import pytest

from zoo.training import (
    loss_denominator,
    masked_accuracy,
    masked_cross_entropy,
    masked_smoothed_loss_sum,
    masked_token_stats,
    perplexity,
)


def _reference(targets, logits):
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    mask = targets != 0
    nll = -np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]
    correct = (logits.argmax(-1) == targets) & mask
    return nll[mask].sum(), correct.sum(), mask.sum()


def _example(dtype=np.float32):
    rng = np.random.default_rng(0)
    targets = np.array([[5, 6, 2, 0, 0], [7, 2, 0, 0, 0], [4, 4, 9, 8, 2]], np.int32)
    logits = rng.normal(size=(3, 5, 11)).astype(dtype)
    # Make one prediction right so accuracy is not trivially zero.
    logits[0, 0, 5] = 10.0
    # Huge logits at padded positions must not leak into the loss.
    logits[1, 3, :] = 1e4 if dtype == np.float32 else 100.0
    return targets, logits


def test_stats_match_numpy_reference():
    targets, logits = _example()
    loss_sum, correct, tokens = masked_token_stats(targets, logits)
    ref_loss, ref_correct, ref_tokens = _reference(targets, logits)
    np.testing.assert_allclose(float(loss_sum), ref_loss, rtol=1e-5)
    assert float(correct) == ref_correct and ref_correct >= 1
    assert float(tokens) == ref_tokens == 10


def test_mean_loss_accuracy_and_perplexity():
    targets, logits = _example()
    ref_loss, ref_correct, ref_tokens = _reference(targets, logits)
    mean = float(masked_cross_entropy(targets, logits))
    np.testing.assert_allclose(mean, ref_loss / ref_tokens, rtol=1e-5)
    np.testing.assert_allclose(float(masked_accuracy(targets, logits)), ref_correct / ref_tokens)
    np.testing.assert_allclose(perplexity(mean), np.exp(ref_loss / ref_tokens), rtol=1e-5)
    assert perplexity(1e6) == float("inf")


def test_float16_logits_give_float32_loss():
    targets, logits = _example(np.float16)
    loss_sum, _, _ = masked_token_stats(targets, logits)
    assert keras.backend.standardize_dtype(loss_sum.dtype) == "float32"
    ref_loss, _, _ = _reference(targets, logits.astype(np.float32))
    np.testing.assert_allclose(float(loss_sum), ref_loss, rtol=1e-4)


def test_all_padding_gives_zero_not_nan():
    targets = np.zeros((2, 3), np.int32)
    logits = np.ones((2, 3, 4), np.float32)
    assert float(masked_cross_entropy(targets, logits)) == 0.0


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        masked_token_stats(np.zeros((2, 3, 1), np.int32), np.zeros((2, 3, 4), np.float32))


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5])
def test_smoothed_loss_matches_numpy_reference(eps):
    targets, logits = _example()
    vocab = logits.shape[-1]
    z = logits.astype(np.float64)
    log_probs = z - z.max(-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
    # The smoothed target distribution: 1 - eps on the reference, eps / V on every id.
    q = np.full(z.shape, eps / vocab) + (1 - eps) * np.eye(vocab)[targets]
    per_token = -(q * log_probs).sum(-1)
    expected = per_token[targets != 0].sum()
    got = float(masked_smoothed_loss_sum(targets, logits, eps))
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    if eps == 0.0:
        np.testing.assert_allclose(got, float(masked_token_stats(targets, logits)[0]), rtol=1e-6)
    # Keras' own label smoothing on one-hot targets agrees on a real token.
    one_hot = np.eye(vocab, dtype=np.float32)[targets[2:3, :1]]
    keras_loss = keras.losses.categorical_crossentropy(
        one_hot, logits[2:3, :1], from_logits=True, label_smoothing=eps
    )
    np.testing.assert_allclose(float(keras_loss[0, 0]), per_token[2, 0], rtol=1e-5)


def test_loss_denominator_counts_tokens_or_sentences_like_numpy():
    targets = np.array([[5, 6, 2, 0], [0, 0, 0, 0], [7, 2, 0, 0]], np.int32)  # row 1: padding
    real = targets != 0
    assert float(loss_denominator(targets, "tokens")) == real.sum() == 5
    assert float(loss_denominator(targets, "sentences")) == real.any(axis=1).sum() == 2
    with pytest.raises(ValueError, match=r"loss_normalization must be one of .*'words'"):
        loss_denominator(targets, "words")
