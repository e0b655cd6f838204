"""`Translation`: one translated sentence with its tokens and attention weights."""

import dataclasses

import numpy as np


@dataclasses.dataclass
class Translation:
    """One sentence as translated by `zoo.translator.Translator.translate_with_attention`.

    Attributes:
        source: the input sentence (`str`, as given).
        translation: the detokenised output (`str`; `""` for an empty source).
        score: the search score of the hypothesis (float; with `length_penalty=0` the sum of
            its token log-probabilities, END included; 0.0 for an empty source).
        source_tokens: the source's pieces (`list[str]`, Ts of them; no END token).
        target_tokens: the generated pieces (`list[str]`, T of them, the END token `</s>`
            last, since the decoder attends when emitting it too).
        weights: `np.ndarray` float32 `(len(target_tokens), len(source_tokens))`; row t is
            the attention used to emit target token t (Bahdanau et al. 2014, fig. 3).

    Example:
        >>> t = translator.translate_with_attention(["Ein Hund rennt."])[0]  # doctest: +SKIP
        >>> t.weights.shape == (len(t.target_tokens), len(t.source_tokens))  # doctest: +SKIP
        True
        >>> t.plot("attention.png")                                            # doctest: +SKIP
    """

    source: str
    translation: str
    score: float
    source_tokens: list
    target_tokens: list
    weights: np.ndarray

    def __post_init__(self):
        expected = (len(self.target_tokens), len(self.source_tokens))
        if tuple(np.shape(self.weights)) != expected:
            raise ValueError(
                f"Translation weights must have shape (len(target_tokens), len(source_tokens)) "
                f"= {expected}, received {np.shape(self.weights)}."
            )

    def plot(self, path, title=None):
        """Writes the attention heatmap to `path` (`zoo.evaluation.plot_attention`)."""
        from zoo.evaluation import plot_attention

        return plot_attention(
            self.source_tokens, self.target_tokens, self.weights, path, title=title
        )

    def format_weights(self, digits=2):
        """The weights as a plain-text table (target rows, source columns)."""
        width = max([len(t) for t in self.source_tokens] + [digits + 2, 1])
        left = max([len(t) for t in self.target_tokens] + [1])
        lines = [" " * left + " " + " ".join(f"{t:>{width}}" for t in self.source_tokens)]
        for token, row in zip(self.target_tokens, self.weights, strict=True):
            cells = " ".join(f"{w:>{width}.{digits}f}" for w in row)
            lines.append(f"{token:<{left}} {cells}")
        return "\n".join(lines)
