"""`python -m zoo compare`: is system A better than B? Paired significance tests of BLEU and
chrF (sacreBLEU's paired bootstrap resampling and approximate randomisation)."""

import json
import sys

from zoo.checks import positive_int
from zoo.cli.flags import add_debug_flag
from zoo.errors import UsageError
from zoo.evaluation.significance import (
    MAX_SAMPLE_CELLS,
    METHODS,
    METRIC_NAMES,
    METRICS,
    SIGNIFICANCE_DEFAULTS,
    compare_systems,
    max_samples,
)

SAMPLE_NAMES = {"bs": "resamples", "ar": "trials"}


def add_compare_command(commands):
    defaults = SIGNIFICANCE_DEFAULTS
    samples = ", ".join(f"{n} for {m}" for m, n in defaults["n_samples"].items())
    compare = commands.add_parser(
        "compare",
        help="is system A better than B? paired significance tests of BLEU and chrF",
        description="Score each system's translations against REFERENCE with sacreBLEU (BLEU "
        "13a cased, chrF2) and test each system's difference from the first one, the "
        "baseline: paired bootstrap resampling (Koehn 2004: a 95% confidence interval and a "
        "p-value) or approximate randomisation (a p-value, and a confidence interval from "
        "bootstrap resamples), as `sacrebleu REFERENCE -i "
        "SYSTEM_A SYSTEM_B --paired-bs` does with the same seed and samples. A difference "
        f"with p < {defaults['level']:g} is marked significant. Files are UTF-8, one "
        "sentence per line.",
    )
    compare.add_argument("reference", metavar="REFERENCE", help="the reference translations")
    compare.add_argument(
        "systems",
        metavar="SYSTEM",
        nargs="+",
        help="two or more systems' translations, line by line with REFERENCE; the first is "
        "the baseline",
    )
    compare.add_argument(
        "--method",
        choices=(*METHODS, "both"),
        default=defaults["method"],
        help="bs: paired bootstrap resampling, ar: approximate randomisation, both: one "
        "table each (default: %(default)s)",
    )
    compare.add_argument(
        "--samples",
        type=positive_int,
        default=None,
        help=f"bootstrap resamples (bs) or randomisation trials (ar) (default: {samples}, "
        "sacreBLEU's)",
    )
    compare.add_argument(
        "--seed",
        type=positive_int,
        default=defaults["seed"],
        help="random seed >= 1, sacreBLEU's SACREBLEU_SEED (sacreBLEU reads 0 as no seed) "
        "(default: %(default)s, sacreBLEU's)",
    )
    compare.add_argument(
        "--metrics",
        default=",".join(defaults["metrics"]),
        help=f"comma-separated, among {', '.join(METRICS)} (default: %(default)s)",
    )
    compare.add_argument(
        "--json", action="store_true", help="print the results as JSON instead of a table"
    )
    add_debug_flag(compare)


def read_lines(path):
    """The lines of a UTF-8 file, split on "\\n" alone (a final newline ends the last line;
    a "\\r" before a newline is dropped); an empty or undecodable file is a ValueError."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path} is not UTF-8 text: byte {error.start} is {data[error.start]:#04x}."
        ) from None
    if not text:
        raise ValueError(f"{path} is empty: expected one sentence per line.")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _metrics(text):
    metrics = tuple(m.strip().lower() for m in text.split(",") if m.strip())
    if not metrics or any(m not in METRICS for m in metrics) or len(set(metrics)) < len(metrics):
        raise UsageError(
            f"--metrics must be distinct names among {', '.join(METRICS)}; received {text!r}."
        )
    return metrics


def read_inputs(reference, systems):
    """(references, {system path: lines}): every file read and checked against REFERENCE."""
    if len(systems) < 2:
        raise UsageError(
            f"compare needs at least two systems, a baseline and one to test against it; "
            f"received {len(systems)}: {', '.join(systems)}."
        )
    repeated = sorted({s for s in systems if systems.count(s) > 1})
    if repeated:
        raise UsageError(f"each SYSTEM file may be given once; {', '.join(repeated)} repeated.")
    references = read_lines(reference)
    hypotheses = {}
    for path in systems:
        lines = read_lines(path)
        if len(lines) != len(references):
            raise ValueError(
                f"{path} has {len(lines)} lines and the reference {reference} has "
                f"{len(references)}: expected one translation per reference line."
            )
        hypotheses[path] = lines
    return references, hypotheses


def _cells(record, baseline, metric):
    scores = record[metric]
    mean = "-" if scores["mean"] is None else f"{scores['mean']:.2f} ± {scores['ci']:.2f}"
    if record["baseline"]:
        return [f"{scores['score']:.2f}", mean, "", ""]
    mark = "*" if scores["significant"] else ""
    return [
        f"{scores['score']:.2f}",
        mean,
        f"{scores['score'] - baseline[metric]['score']:+.2f}",
        f"{scores['p_value']:.4f}{mark}",
    ]


def format_comparison(result):
    """The result of `compare_systems` as a plain-text table with its heading and notes."""
    heading = (
        f"{result['method_name'].capitalize()}: {result['n_samples']} "
        f"{SAMPLE_NAMES[result['method']]}, seed {result['seed']}, {result['sentences']} "
        f"sentences; each system against the baseline {result['baseline']}"
    )
    head = ["system"]
    for metric in result["metrics"]:
        head += [METRIC_NAMES[metric], "mean ± 95% CI", "difference", "p"]
    baseline = result["systems"][0]
    rows = [head]
    for record in result["systems"]:
        name = record["name"] + (" (baseline)" if record["baseline"] else "")
        rows.append([name] + [c for m in result["metrics"] for c in _cells(record, baseline, m)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [heading, ""]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    lines += [
        "",
        f"* p < {result['level']:g}: the difference from the baseline is significant, unlikely "
        "to come from chance alone in the choice of test sentences.",
    ]
    lines += [f"{METRIC_NAMES[m]}: {result['signatures'][m]}" for m in result["metrics"]]
    return "\n".join(lines) + "\n"


def run_compare(args, out=None):
    """Prints the paired tests of the SYSTEM files against REFERENCE (a table or --json)."""
    out = sys.stdout if out is None else out
    metrics = _metrics(args.metrics)
    references, systems = read_inputs(args.reference, list(args.systems))
    if args.samples and args.samples > max_samples(len(references)):
        raise UsageError(
            f"--samples {args.samples} for {len(references)} sentences: expected at most "
            f"{max_samples(len(references)):,} (sacreBLEU draws samples x sentences "
            f"indices at once, at most {MAX_SAMPLE_CELLS:,})."
        )
    methods = ("bs", "ar") if args.method == "both" else (args.method,)
    results = [
        compare_systems(
            references,
            systems,
            metrics=metrics,
            method=method,
            n_samples=args.samples,
            seed=args.seed,
        )
        for method in methods
    ]
    if args.json:
        print(json.dumps(results, indent=2), file=out)
    else:
        print("\n".join(format_comparison(result) for result in results), end="", file=out)
    return 0
