"""`ValidationBleu`: the corpus BLEU of a model's greedy translations of a validation split,
the score `train(..., validation_metric="bleu")` judges a run by."""

from zoo.checks import check_int
from zoo.search.defaults import BATCH_SIZE


class ValidationBleu:
    """`scorer(model) -> float`: sacreBLEU's corpus BLEU (`zoo.evaluation.corpus_scores`)
    of the greedy translations (`zoo.Translator` with beam size 1, the other search settings
    at their defaults) of `sources` against `references`.

    The translator is made on the first call and kept while the same model is scored: its
    traced search reads the model's current weights, so each epoch's score costs the
    translation alone.

    Example:
        bleu = ValidationBleu(source_tokenizer, target_tokenizer, val.source, val.target)
        train(model, train_ds, val_ds, out_dir=out, validation_metric="bleu",
              validation_bleu=bleu, early_stopping=3)

    Args:
        source_tokenizer, target_tokenizer: the model's tokenizers (`zoo.text`).
        sources, references: the validation split's sentences (lists of str, one
            reference per source).
        limit: score the first `limit` sentences only (None: all of them).
        batch_size: sentences translated per batch.
    """

    def __init__(
        self, source_tokenizer, target_tokenizer, sources, references, *, limit=None,
        batch_size=BATCH_SIZE,
    ):  # fmt: skip
        sources, references = list(sources), list(references)
        if len(sources) != len(references):
            raise ValueError(
                f"ValidationBleu: sources and references must be parallel; received "
                f"{len(sources)} sources and {len(references)} references."
            )
        limit = check_int("ValidationBleu", "limit", limit, allow_none=True)
        self.sources, self.references = sources[:limit], references[:limit]
        if not self.sources:
            raise ValueError("ValidationBleu: there is no validation sentence to translate.")
        self.tokenizers = (source_tokenizer, target_tokenizer)
        self.batch_size = check_int("ValidationBleu", "batch_size", batch_size)
        self.translator = None

    def __len__(self):
        return len(self.sources)

    def __call__(self, model):
        from zoo.evaluation.scores import corpus_scores  # noqa: PLC0415 (sacreBLEU, on use)
        from zoo.translator import Translator  # noqa: PLC0415 (only runs that score BLEU)

        if self.translator is None or self.translator.model is not model:
            self.translator = Translator(
                model, *self.tokenizers, beam_size=1, batch_size=self.batch_size
            )
        hypotheses = self.translator.translate(self.sources)
        return float(corpus_scores(hypotheses, self.references)["bleu"])
