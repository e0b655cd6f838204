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

MIN_BUCKET_SENTENCES = 10
"""The fewest sentences a length bucket needs for its BLEU to be drawn (`plot_bleu_by_length`)
or shown unbracketed (`format_table`): BLEU over a handful of sentences swings by tens of
points with a single sentence."""


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


def check_same_buckets(tables):
    """`tables` ({system label: `bleu_by_length` rows}) when every system's rows have the
    same buckets and sentence counts (translations of the same sentences); else a
    ValueError."""
    buckets = None
    for label, rows in tables.items():
        counts = [(r["bin"], r["sentences"]) for r in rows]
        if buckets is None:
            buckets = counts
        elif counts != buckets:
            raise ValueError(
                "Expected every system's rows to have the same buckets and sentence counts "
                f"(translations of the same sentences); {label!r} has {counts}, the first "
                f"system {buckets}."
            )
    return tables


def format_table(rows, min_sentences=MIN_BUCKET_SENTENCES):
    """`bleu_by_length` rows, or a dict {system label: rows} of the same sentences, as a
    Markdown table (str): each bucket's sentence count and BLEU (a column per system), the
    BLEU of a bucket with fewer than `min_sentences` in brackets (too few to trust), "-" for
    an empty one."""
    tables = check_same_buckets(rows if isinstance(rows, dict) else {"": rows})
    first = next(iter(tables.values()))
    note = f"in brackets: under {min_sentences} sentences"
    columns = [f"BLEU {label}" if label else "BLEU" for label in tables]
    if len(tables) == 1:
        columns = [f"{columns[0]} ({note})"]
    lines = [
        "| source length (words) | sentences | " + " | ".join(columns) + " |",
        "|---|---:|" + "---:|" * len(tables),
    ]
    for i, row in enumerate(first):
        cells = []
        for other in tables.values():
            bleu = other[i]["bleu"]
            if bleu is None:
                cells.append("-")
            elif row["sentences"] < min_sentences:
                cells.append(f"({bleu:.2f})")
            else:
                cells.append(f"{bleu:.2f}")
        lines.append(f"| {row['bin']} | {row['sentences']} | " + " | ".join(cells) + " |")
    if len(tables) > 1:
        lines += ["", f"BLEU {note}."]
    return "\n".join(lines) + "\n"
