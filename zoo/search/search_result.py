"""The value returned by `zoo.search.search`."""

from typing import Any, NamedTuple


class SearchResult(NamedTuple):
    """The best hypothesis per source sentence, as found by greedy or beam search.

    A `NamedTuple`, so it passes through `tf.function` and `tf.nest` unchanged.

    Fields (B = batch size, T = the length of the longest returned hypothesis
    (END included), Ts = padded source length):
        ids: (B, T) int32. Each row is the hypothesis' tokens, ending with `END_ID`,
            then `PAD_ID` up to T. The start token is not included.
        scores: (B,) float32. The score the hypothesis was ranked by:
            `log_probs / ((5 + lengths) / 6) ** length_penalty` (GNMT, Wu et al. 2016,
            eq. 14); with `length_penalty=0` it equals `log_probs`.
        attention: (B, T, Ts) float32, the decoder's attention weights at each output
            step of the returned hypothesis (zero after the END step and at padded source
            positions), or `None` when the search ran with `return_attention=False`.
        lengths: (B,) int32, the number of tokens in `ids` up to and including `END_ID`.
        log_probs: (B,) float32, the sum of the model's token log-probabilities
            `log p(y_t | y_<t, x)` over the `lengths` tokens (END included), computed with
            a float32 log-softmax over the full vocabulary.

    Example:
        >>> result = zoo.search.search(model, source_ids, beam_size=5)  # doctest: +SKIP
        >>> result.ids.shape, result.scores.shape                         # doctest: +SKIP
        (TensorShape([2, 14]), TensorShape([2]))
    """

    ids: Any
    scores: Any
    attention: Any
    lengths: Any
    log_probs: Any
