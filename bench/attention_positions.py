"""Does attention follow the source? Where a trained model attends, step by step.

For each sentence of a split, translates it (greedy) with its attention weights and takes,
at each target step t, the attended position m_t = sum_s s a_t(s) / sum_s a_t(s) (for
local-p this is close to the predicted p_t, since its weights are a window's softmax times
a Gaussian centred on p_t). It prints, over the sentences:

- the mean Pearson correlation of m_t with t (1 = monotonic left to right, 0 = no order);
- the mean spread of m_t over a sentence, as a fraction of its length S (0 = one position);
- the mean fraction of source positions that are some step's argmax (coverage).

    python bench/attention_positions.py saved_models/luong_local_general --limit 200
"""

import numpy as np


def positions(weights):
    """m_t (T,) for weights (T, S)."""
    s = np.arange(weights.shape[1], dtype=np.float64)
    totals = np.maximum(weights.sum(axis=1), 1e-9)
    return (weights * s).sum(axis=1) / totals


def sentence_figures(weights):
    """(correlation of m_t with t or None, spread of m_t / S, argmax coverage) of one
    sentence's weights (T, S), T counting the END step."""
    steps, length = weights.shape
    m = positions(weights)
    correlation = None
    if steps > 2 and np.std(m) > 1e-9:
        correlation = float(np.corrcoef(np.arange(steps), m)[0, 1])
    spread = float((m.max() - m.min()) / max(length - 1, 1))
    coverage = len(set(np.argmax(weights, axis=1).tolist())) / length
    return correlation, spread, coverage


def main(argv=None):
    import common  # quiet TensorFlow start, repository on the path

    parser = common.parser(__doc__)
    common.add_model_dir(parser)
    common.add_corpus_flags(parser, split="val")
    parser.add_argument("--limit", type=int, default=200, help="sentences (default: %(default)s)")
    parser.add_argument(
        "--min-length", type=int, default=8, help="shortest source, in words (default: %(default)s)"
    )
    args = parser.parse_args(argv)

    from zoo.translator import Translator

    translator = Translator.from_directory(args.model_dir)
    corpus = common.corpus_split(args)
    sources = [s for s in corpus.source if len(s.split()) >= args.min_length][: args.limit]
    results = translator.translate_with_attention(sources, beam_size=1)
    figures = [sentence_figures(r.weights) for r in results if len(r.source_tokens) > 1]
    correlations = [c for c, _, _ in figures if c is not None]
    print(
        f"{args.model_dir}: {len(figures)} {args.split} sentences of >= {args.min_length} words; "
        f"corr(m_t, t) mean {np.mean(correlations):.3f} (median {np.median(correlations):.3f}); "
        f"spread of m_t / S {np.mean([f[1] for f in figures]):.3f}; "
        f"argmax coverage {np.mean([f[2] for f in figures]):.3f}"
    )


if __name__ == "__main__":
    main()
