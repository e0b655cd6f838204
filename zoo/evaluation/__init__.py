"""zoo.evaluation: sacreBLEU/chrF corpus scores, BLEU by sentence length, attention plots,
word alignments from attention and their AER."""

from zoo.evaluation.alignment import (
    alignment_error_rate,
    forced_alignments,
    format_pharaoh,
    hard_alignment,
    hard_alignments,
    parse_gold,
    word_indices,
)
from zoo.evaluation.plots import bleu_by_length_figure, plot_attention, plot_bleu_by_length
from zoo.evaluation.scores import (
    DEFAULT_LENGTH_EDGES,
    MIN_BUCKET_SENTENCES,
    bleu_by_length,
    corpus_scores,
    format_table,
)
from zoo.evaluation.significance import SIGNIFICANCE_DEFAULTS, compare_systems

__all__ = [
    "DEFAULT_LENGTH_EDGES",
    "MIN_BUCKET_SENTENCES",
    "alignment_error_rate",
    "forced_alignments",
    "format_pharaoh",
    "hard_alignment",
    "hard_alignments",
    "parse_gold",
    "word_indices",
    "SIGNIFICANCE_DEFAULTS",
    "compare_systems",
    "bleu_by_length",
    "bleu_by_length_figure",
    "corpus_scores",
    "format_table",
    "plot_attention",
    "plot_bleu_by_length",
]
