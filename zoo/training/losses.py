"""Token-level cross-entropy and accuracy with padding masked out.

Targets are `target_out_ids` (B, T) int with padding `PAD_ID` (0); logits are (B, T, V)
in any float dtype (float16 / bfloat16 under mixed precision). Everything is computed in
float32: logits are cast before the log-softmax, so the softmax and loss are float32 in
every precision policy.

The building block is `masked_token_stats`, which returns *sums* (loss, correct tokens,
real tokens). Sums, not means, so that a distributed step can divide by the token count of
the whole global batch, and an evaluation can pool batches of different lengths exactly.

Example:
    loss_sum, correct, tokens = masked_token_stats(target_out_ids, logits)
    mean_loss = loss_sum / tokens;  perplexity = exp(mean_loss)
"""

import math

import keras
from keras import ops

from zoo.constants import PAD_ID


def _check(target_out_ids, logits):
    if len(target_out_ids.shape) != 2 or len(logits.shape) != 3:
        raise ValueError(
            "Expected target_out_ids of shape (B, T) and logits of shape (B, T, V); "
            f"received {tuple(target_out_ids.shape)} and {tuple(logits.shape)}."
        )


def _masked_nll(target_out_ids, logits):
    """int32 targets, float32 logits, the float32 keep-mask (B, T) and -log p(y) (B, T)."""
    _check(target_out_ids, logits)
    target_out_ids = ops.cast(target_out_ids, "int32")
    logits = ops.cast(logits, "float32")
    mask = ops.cast(ops.not_equal(target_out_ids, PAD_ID), "float32")
    nll = keras.losses.sparse_categorical_crossentropy(target_out_ids, logits, from_logits=True)
    return target_out_ids, logits, mask, nll


def masked_token_stats(target_out_ids, logits):
    """Summed masked cross-entropy, correct-token count and real-token count.

    Args:
        target_out_ids: (B, T) int tensor; positions equal to `PAD_ID` are ignored.
        logits: (B, T, V) unnormalised scores (any float dtype).

    Returns:
        `(loss_sum, correct, tokens)`: float32 scalars. `loss_sum` is
        sum over real tokens of -log softmax(logits)[target]; `correct` counts real tokens whose
        argmax equals the target; `tokens` counts real (non-padding) tokens.
    """
    target_out_ids, logits, mask, token_loss = _masked_nll(target_out_ids, logits)
    loss_sum = ops.sum(token_loss * mask)
    predicted = ops.cast(ops.argmax(logits, axis=-1), "int32")
    correct = ops.sum(ops.cast(ops.equal(predicted, target_out_ids), "float32") * mask)
    tokens = ops.sum(mask)
    return loss_sum, correct, tokens


def masked_smoothed_loss_sum(target_out_ids, logits, label_smoothing):
    """Summed label-smoothed cross-entropy over real tokens: the training objective with
    `label_smoothing` = eps > 0 (Szegedy et al. 2016, section 7).

    The target distribution puts 1 - eps on the reference token and spreads eps uniformly
    over the V ids, so per token

        loss = (1 - eps) * -log p(y) + eps * mean_v(-log p(v))
             = (1 - eps) * -log p(y) + eps * (logsumexp(z) - mean(z))

    (what `keras.losses.categorical_crossentropy(..., label_smoothing=eps)` computes on
    one-hot targets). With eps = 0 it is `masked_token_stats`' `loss_sum`. Perplexity and
    validation stay on the plain cross-entropy.

    Returns a float32 scalar.
    """
    _, logits, mask, nll = _masked_nll(target_out_ids, logits)
    uniform = ops.logsumexp(logits, axis=-1) - ops.mean(logits, axis=-1)
    eps = float(label_smoothing)
    return ops.sum(((1.0 - eps) * nll + eps * uniform) * mask)


def training_objective(target_out_ids, logits, label_smoothing=0.0):
    """(objective, loss_sum, correct, tokens) of a batch, what a training step computes:
    the summed cross-entropy over its real target tokens, label-smoothed when
    `label_smoothing` > 0 (`masked_smoothed_loss_sum`: the objective), and the plain sum,
    the correct predictions and the tokens that the metrics report
    (`masked_token_stats`)."""
    loss_sum, correct, tokens = masked_token_stats(target_out_ids, logits)
    objective = loss_sum
    if label_smoothing:
        objective = masked_smoothed_loss_sum(target_out_ids, logits, label_smoothing)
    return objective, loss_sum, correct, tokens


LOSS_NORMALIZATIONS = ("tokens", "sentences")


def check_loss_normalization(value):
    """`value` if it is one of LOSS_NORMALIZATIONS, else a ValueError naming it."""
    if value not in LOSS_NORMALIZATIONS:
        raise ValueError(
            f"loss_normalization must be one of {LOSS_NORMALIZATIONS}; received {value!r}."
        )
    return value


def loss_denominator(target_out_ids, loss_normalization):
    """What a batch's summed loss is divided by (a float32 scalar, not clamped):

    - "tokens": the number of real target tokens, so the objective is the mean
      cross-entropy per token (Joey NMT's and fairseq's default);
    - "sentences": the number of sentences with at least one real token, so the objective
      is the summed cross-entropy of a sentence, averaged over the batch: what Luong et
      al. 2015's SGD at learning rate 1.0 minimised (as tensorflow/nmt, which reproduced
      it) and what Bahdanau et al.'s GroundHog cost was. With a mean target length of n
      tokens, its gradient is n times the per-token mean's.

    Example:
        loss = loss_sum / ops.maximum(loss_denominator(targets, "sentences"), 1.0)
    """
    check_loss_normalization(loss_normalization)
    real = ops.not_equal(ops.cast(target_out_ids, "int32"), PAD_ID)  # (B, T)
    if loss_normalization == "tokens":
        return ops.sum(ops.cast(real, "float32"))
    return ops.sum(ops.cast(ops.any(real, axis=-1), "float32"))


def keras_loss():
    """The masked per-token cross-entropy as a Keras loss, for `model.compile`:

        model.compile(optimizer="adam", loss=zoo.training.keras_loss())
        model.fit(zoo.data.make_dataset(...), epochs=...)

    `SparseCategoricalCrossentropy(from_logits=True, ignore_class=PAD_ID)` with the
    "mean_with_sample_weight" reduction: padding positions get no weight and the batch's
    loss is the sum over real target tokens divided by their number, the value that
    `masked_cross_entropy` and `zoo.training.train` (loss_normalization="tokens") give.
    """
    return keras.losses.SparseCategoricalCrossentropy(
        from_logits=True,
        ignore_class=PAD_ID,
        reduction="mean_with_sample_weight",
        name="masked_cross_entropy",
    )


def masked_cross_entropy(target_out_ids, logits):
    """Mean cross-entropy per real target token (float32 scalar); 0 for an all-padding batch."""
    loss_sum, _, tokens = masked_token_stats(target_out_ids, logits)
    return loss_sum / ops.maximum(tokens, 1.0)


def masked_accuracy(target_out_ids, logits):
    """Fraction of real target tokens predicted exactly by argmax (float32 scalar)."""
    _, correct, tokens = masked_token_stats(target_out_ids, logits)
    return correct / ops.maximum(tokens, 1.0)


def perplexity(mean_loss):
    """exp(mean token cross-entropy), as a Python float (inf when it overflows)."""
    try:
        return math.exp(float(mean_loss))
    except OverflowError:
        return float("inf")
