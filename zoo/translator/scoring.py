"""`Scorer`: the part of a `Translator` that scores given translations by teacher forcing
(`score`)."""

import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

from zoo.backend import on_tensorflow
from zoo.text.preprocessor import token_lengths
from zoo.translation import check_sentences
from zoo.translator import graph, staged

SCORING_SIGNATURE = [
    tf.TensorSpec([None], tf.string, name="sources"),
    tf.TensorSpec([None], tf.string, name="targets"),
]


class Scorer:
    """The teacher-forced scores of `translator` (a `Translator`, which holds its scorer as
    `translator.scorer` and answers `score`, `score_function` and `graph_score` with it)."""

    def __init__(self, translator):
        self.translator = translator

    def graph_score(self, sources, targets):
        """The in-graph scores of `tf.string` pairs (B,) (`zoo.translator.graph.score`): a
        dict of total, per_token and target_tokens."""
        return graph.score(self.translator, sources, targets)

    def score_function(self):
        """The `tf.function` `(sources, targets) -> dict` that `score` runs, traced once."""
        return self.translator.traced_function(
            ("score",), self.translator.graph_score, SCORING_SIGNATURE
        )

    def score(self, sources, targets, batch_size=None, progress=False):
        """The model's log-probability of each `targets[i]` as the translation of
        `sources[i]`, by teacher forcing: a list (in input order) of `(total, per_token)`.

        `total` is the sum over the target's tokens and END of log p(token | source, the
        tokens before it), `per_token` that sum divided by the number of tokens (END
        included): minus the pair's per-token cross-entropy, the training loss without label
        smoothing. A pair whose source has no tokens gets 0.0 when its target has none
        either (it translates to "" for sure), else -inf. The pairs run in batches of
        `batch_size` (default: the translator's), longest first.

        Example:
            >>> translator.score(["Ein Hund rennt."], ["A dog runs."])  # doctest: +SKIP
            [(-4.21, -0.84)]
        """
        sources, targets = check_sentences(sources), check_sentences(targets)
        if len(sources) != len(targets):
            raise ValueError(
                f"sources and targets must be as many, received {len(sources)} sources and "
                f"{len(targets)} targets."
            )
        translator = self.translator
        batch_size = translator.setting("batch_size", batch_size)
        if not sources:
            return []
        target_lengths = token_lengths(translator.preprocessor.target_tokenizer, targets)
        order = np.lexsort((-target_lengths, -translator.preprocessor.source_lengths(sources)))
        if on_tensorflow():
            call = translator.traced_call(self.score_function)
        else:  # the model on the backend (zoo.translator.staged)
            make = lambda: translator.traced.get(("score",), lambda: staged.score_call(translator))  # noqa: E731
            call = translator.traced_call(make)
        scores = [None] * len(sources)
        with tqdm(total=len(sources), unit="pair", desc="score", disable=not progress) as bar:
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                outputs = call(
                    tf.constant([sources[i] for i in rows], tf.string),
                    tf.constant([targets[i] for i in rows], tf.string),
                )
                totals, per_token = outputs["total"].numpy(), outputs["per_token"].numpy()
                for j, i in enumerate(rows):
                    scores[i] = (float(totals[j]), float(per_token[j]))
                bar.update(len(rows))
        return scores
