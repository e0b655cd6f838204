"""Corpus scores the way the papers' successors report them: sacreBLEU BLEU and chrF.

Hypotheses and references are detokenised strings; sacreBLEU applies its own `13a`
tokenisation, case-sensitive, so the numbers are comparable across papers and tools. Each
score comes with its sacreBLEU signature string.

Example:
    >>> scores = corpus_scores(["a dog runs ."], ["a dog runs ."])
    >>> scores["bleu"], scores["bleu_signature"].startswith("nrefs:1|case:mixed")
    (100.0, True)
"""

import sacrebleu

DEFAULT_LENGTH_EDGES = (0, 10, 20, 30, 40, 50, 60)


def _check_parallel(hypotheses, references):
    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references):
        raise ValueError(
            f"Expected one reference per hypothesis; received {len(hypotheses)} hypotheses "
            f"and {len(references)} references."
        )
    if not hypotheses:
        raise ValueError("Expected at least one hypothesis; received none.")
    for name, items in (("hypotheses", hypotheses), ("references", references)):
        bad = [type(x).__name__ for x in items if not isinstance(x, str)]
        if bad:
            raise ValueError(f"Expected {name} to be strings; received a {bad[0]}.")
    return hypotheses, references


def corpus_scores(hypotheses, references):
    """sacreBLEU corpus BLEU (13a, cased) and chrF with their signatures.

    Args:
        hypotheses: list of N detokenised system outputs (str).
        references: list of N detokenised references (str), one per hypothesis.

    Returns:
        dict: `bleu` (0-100), `bleu_signature`, `bleu_precisions` (1-4-gram, %),
        `brevity_penalty`, `hypothesis_length`, `reference_length`, `chrf` (0-100),
        `chrf_signature`, `sentences`.
    """
    hypotheses, references = _check_parallel(hypotheses, references)
    bleu = sacrebleu.metrics.BLEU(tokenize="13a", lowercase=False)
    chrf = sacrebleu.metrics.CHRF()
    b = bleu.corpus_score(hypotheses, [references])
    c = chrf.corpus_score(hypotheses, [references])
    return {
        "bleu": b.score,
        "bleu_signature": str(bleu.get_signature()),
        "bleu_precisions": list(b.precisions),
        "brevity_penalty": b.bp,
        "hypothesis_length": b.sys_len,
        "reference_length": b.ref_len,
        "chrf": c.score,
        "chrf_signature": str(chrf.get_signature()),
        "sentences": len(hypotheses),
    }


def bleu_by_length(sources, hypotheses, references, edges=DEFAULT_LENGTH_EDGES):
    """Corpus BLEU per bin of source-sentence length (Bahdanau et al. 2014, figure 2).

    Args:
        sources: N source sentences (str: length = whitespace-separated words) or N ints.
        hypotheses, references: N detokenised strings each.
        edges: increasing bin starts; bin i holds lengths in [edges[i], edges[i+1]), the
            last bin lengths >= edges[-1], and the first bin also any length below edges[0].

    Returns:
        list of rows, one per bin: {"bin": "10-19" / "60+", "min_length", "max_length"
        (None for the open last bin), "sentences", "bleu" (None for an empty bin)}.
        The rows' `sentences` sum to N.
    """
    hypotheses, references = _check_parallel(hypotheses, references)
    sources = list(sources)
    if len(sources) != len(hypotheses):
        raise ValueError(
            f"Expected one source per hypothesis; received {len(sources)} sources and "
            f"{len(hypotheses)} hypotheses."
        )
    edges = [int(e) for e in edges]
    if not edges or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise ValueError(f"edges must be a non-empty increasing sequence; received {edges}.")
    lengths = [len(s.split()) if isinstance(s, str) else int(s) for s in sources]
    bleu = sacrebleu.metrics.BLEU(tokenize="13a", lowercase=False)
    rows = []
    for i, low in enumerate(edges):
        high = edges[i + 1] - 1 if i + 1 < len(edges) else None
        members = [
            k for k, n in enumerate(lengths) if (i == 0 or n >= low) and (high is None or n <= high)
        ]  # lengths below the first edge count in the first bin
        score = None
        if members:
            score = bleu.corpus_score(
                [hypotheses[k] for k in members], [[references[k] for k in members]]
            ).score
        rows.append(
            {
                "bin": f"{low}-{high}" if high is not None else f"{low}+",
                "min_length": low,
                "max_length": high,
                "sentences": len(members),
                "bleu": score,
            }
        )
    return rows


def format_table(rows):
    """The `bleu_by_length` rows as a Markdown table (str)."""
    lines = ["| source length | sentences | BLEU |", "|---|---:|---:|"]
    for row in rows:
        bleu = "-" if row["bleu"] is None else f"{row['bleu']:.2f}"
        lines.append(f"| {row['bin']} | {row['sentences']} | {bleu} |")
    return "\n".join(lines) + "\n"
