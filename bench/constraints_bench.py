"""Lexically constrained decoding on a trained model: BLEU, constraints met and speed.

The simulated setting of Post and Vilar (2018, section 5) and Hokamp and Liu (2017): the
constraints of each test sentence are phrases taken from its reference, so a model that
honours them should gain BLEU. For each number of phrases N (`--phrases`, default 0,1,2;
0 = no constraints, the plain beam search), every sentence gets N phrases of 1 to
`--max-words` (3) words of its reference (words: whitespace tokens), at random positions
that do not overlap (fewer where the reference is too short), drawn with `--seed`. The
model folder's Translator translates the split at beam `--beam` (5) with those
constraints; the table gives BLEU and chrF (sacreBLEU, 13a, cased), the share of the
phrases found in the output (each phrase as a substring: it must be 100%), sentences per
second, and the time against the first setting (N = 0 by default).

Each setting runs once untimed first (tracing and the kernels' set-up), then timed. The
constraints' phrases are written to `--out` (one tab-separated line per sentence), the
format of `python -m zoo translate --constraints FILE`.

    python bench/constraints_bench.py saved_models/luong_local_general
    python bench/constraints_bench.py runs/tiny --limit 50 --phrases 0,1
"""

import random
from pathlib import Path

import common  # quiet TensorFlow start, repository on the path

from zoo.evaluation import corpus_scores
from zoo.search import defaults as search_defaults
from zoo.translator import Translator


def parse_args(argv=None):
    p = common.parser(__doc__)
    common.add_model_dir(p)
    common.add_corpus_flags(p, split="test")
    p.add_argument("--limit", type=int, default=None, help="first N sentences only")
    p.add_argument("--phrases", default="0,1,2", help="phrases per sentence (default: %(default)s)")
    p.add_argument(
        "--max-words", type=int, default=3, help="longest phrase in words (default: %(default)s)"
    )
    p.add_argument(
        "--beam", type=int, default=search_defaults.BEAM_SIZE,
        help="beam size (default: %(default)s)",
    )  # fmt: skip
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the phrases drawn (default: %(default)s)"
    )
    p.add_argument("--out", default=None, help="folder for the constraint files (default: none)")
    return p.parse_args(argv)


def reference_phrases(reference, count, max_words, rng):
    """Up to `count` non-overlapping phrases of 1..max_words words of `reference`."""
    words = reference.split()
    taken, phrases = set(), []
    for _ in range(count):
        for _attempt in range(20):
            if not words:
                break
            length = rng.randint(1, min(max_words, len(words)))
            start = rng.randint(0, len(words) - length)
            span = set(range(start, start + length))
            if span & taken:
                continue
            taken |= span
            phrases.append((start, " ".join(words[start : start + length])))
            break
    return [phrase for _, phrase in sorted(phrases)]  # in the reference's order


def main(argv=None):
    args = parse_args(argv)
    corpus = common.corpus_split(args, args.limit)
    sources, references = list(corpus.source), list(corpus.target)
    translator = Translator.from_directory(args.model_dir)
    rows = []
    for count in common.split_list(args.phrases, int):
        rng = random.Random(args.seed)
        constraints = [reference_phrases(r, count, args.max_words, rng) for r in references]
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            lines = ["\t".join(c) for c in constraints]
            Path(args.out, f"constraints.{count}.tsv").write_text("\n".join(lines) + "\n")
        translations, seconds = common.timed(
            translator.translate, sources, beam_size=args.beam,
            constraints=constraints if count else None,
        )  # fmt: skip
        phrases = [(p, t) for c, t in zip(constraints, translations, strict=True) for p in c]
        rows.append(
            {
                "count": count,
                "phrases": len(phrases),
                **corpus_scores(translations, references),
                "met": 100 * sum(p in t for p, t in phrases) / len(phrases) if phrases else None,
                "per_s": len(sources) / seconds,
                "time": seconds / (rows[0]["seconds"] if rows else seconds),
                "seconds": seconds,
            }
        )
        print(f"{count} phrases a sentence: BLEU {rows[-1]['bleu']:.2f}", flush=True)
    print(f"\n{args.model_dir}, {args.split} ({len(sources)} sentences), beam {args.beam}\n")
    columns = [
        ("count", "phrases a sentence", "{}"),
        ("phrases", "phrases", "{}"),
        ("bleu", "BLEU", "{:.2f}"),
        ("chrf", "chrF", "{:.2f}"),
        ("met", "phrases in the output", "{:.1f}%"),
        ("per_s", "sentences/s", "{:.1f}"),
        ("time", "time", "{:.2f}x"),
    ]
    print(common.table(rows, columns, markdown=True))


if __name__ == "__main__":
    main()
