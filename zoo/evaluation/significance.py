"""Is system A better than system B? Paired significance tests of BLEU and chrF.

sacreBLEU's own implementation (`sacrebleu.significance.PairedTest`, the one behind
`sacrebleu REF -i A B --paired-bs` and `--paired-ar`) run on lists of strings:

- paired bootstrap resampling ("bs", Koehn 2004): the test set is resampled with
  replacement, the same sentences for every system; gives each system's bootstrap mean and
  95% confidence interval, and the p-value of its difference from the baseline;
- approximate randomisation ("ar", Riezler and Maxwell 2005): each trial swaps a random half
  of the two systems' translations; gives the p-value, and here also a bootstrap confidence
  interval (`confidence_samples` resamples).

The first system is the baseline; each other system is compared with it. With the same
seed and sample count the numbers are sacreBLEU's command line's on the same files (its
seed is the SACREBLEU_SEED environment variable, set here while the test is prepared).
A system whose translations equal the baseline's line for line gets p = 1: no resample can
tell them apart (sacreBLEU reports 1/(n+1) there).

Example:
    >>> refs = ["a dog runs on the grass .", "two men talk ."] * 20
    >>> result = compare_systems(
    ...     refs, {"A": ["a dog runs .", "two men ."] * 20, "B": refs}, n_samples=100
    ... )
    >>> [(s["name"], s["baseline"]) for s in result["systems"]]
    [('A', True), ('B', False)]
    >>> result["systems"][1]["bleu"]["significant"]
    True
"""

import contextlib
import os

import sacrebleu
from sacrebleu.significance import PairedTest

from zoo.checks import check_int

METHODS = ("bs", "ar")
METHOD_NAMES = {"bs": "paired bootstrap resampling", "ar": "approximate randomisation"}
METRICS = ("bleu", "chrf")
METRIC_NAMES = {"bleu": "BLEU", "chrf": "chrF"}
# sacreBLEU's command-line defaults: --paired-bs-n, --paired-ar-n, and SACREBLEU_SEED.
DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}
DEFAULT_SEED = 12345
CONFIDENCE_SAMPLES = 1000  # bootstrap resamples for the confidence intervals under "ar"
SIGNIFICANCE_LEVEL = 0.05  # a difference with p below this is called significant
# sacreBLEU draws all its samples at once, an (n_samples, sentences) array of int64 indices:
# at most this many (16 GiB) cells, far above the default samples on any real test set.
MAX_SAMPLE_CELLS = 2**31
SIGNIFICANCE_DEFAULTS = {
    "method": "bs",
    "metrics": METRICS,
    "n_samples": DEFAULT_SAMPLES,
    "seed": DEFAULT_SEED,
    "confidence_samples": CONFIDENCE_SAMPLES,
    "level": SIGNIFICANCE_LEVEL,
}


def max_samples(sentences):
    """The most samples (resamples or trials) a test of `sentences` sentences may draw:
    `MAX_SAMPLE_CELLS // sentences`."""
    return MAX_SAMPLE_CELLS // sentences


def make_metric(name):
    """The sacreBLEU metric `name` ("bleu": 13a tokens, cased; "chrf": chrF2), as
    `zoo.evaluation.corpus_scores` and sacreBLEU's command line score it."""
    if name == "bleu":
        return sacrebleu.metrics.BLEU(tokenize="13a", lowercase=False)
    if name == "chrf":
        return sacrebleu.metrics.CHRF()
    raise ValueError(f"metrics must be among {', '.join(METRICS)}; received {name!r}.")


@contextlib.contextmanager
def _sacrebleu_seed(seed):
    """SACREBLEU_SEED set to `seed` ("none" for None) inside the block, as before after."""
    before = os.environ.get("SACREBLEU_SEED")
    os.environ["SACREBLEU_SEED"] = "none" if seed is None else str(seed)
    try:
        yield
    finally:
        if before is None:
            del os.environ["SACREBLEU_SEED"]
        else:
            os.environ["SACREBLEU_SEED"] = before


def _check_inputs(references, systems, metrics, method):
    if isinstance(references, str) or not all(isinstance(r, str) for r in references):
        raise ValueError("references must be a list of strings, one per test sentence.")
    references = list(references)
    if not references:
        raise ValueError("references is empty: expected at least one test sentence.")
    if not isinstance(systems, dict) or len(systems) < 2:
        received = len(systems) if isinstance(systems, dict) else type(systems).__name__
        raise ValueError(
            f"systems must be a dict of at least two named systems (the first is the "
            f"baseline); received {received}."
        )
    checked = {}
    for name, hypotheses in systems.items():
        if isinstance(hypotheses, str) or not all(isinstance(h, str) for h in hypotheses):
            raise ValueError(f"system {name!r} must be a list of strings, one per reference.")
        hypotheses = list(hypotheses)
        if len(hypotheses) != len(references):
            raise ValueError(
                f"system {name!r} has {len(hypotheses)} translations for "
                f"{len(references)} references: expected one per reference."
            )
        checked[str(name)] = hypotheses
    if len(checked) != len(systems):
        raise ValueError(f"system names must differ as strings; received {list(systems)}.")
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    if not metrics or any(m not in METRICS for m in metrics) or len(set(metrics)) < len(metrics):
        raise ValueError(
            f"metrics must be distinct names among {', '.join(METRICS)}; received {metrics}."
        )
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; received {method!r}.")
    return references, checked, metrics


def _record(result, is_baseline, identical, level):
    """A sacreBLEU `Result` as a plain dict; p-value and verdict None for the baseline."""
    p_value = None if is_baseline else (1.0 if identical else float(result.p_value))
    return {
        "score": float(result.score),
        "mean": None if result.mean is None else float(result.mean),
        "ci": None if result.ci is None else float(result.ci),
        "p_value": p_value,
        "significant": None if is_baseline else p_value < level,
    }


def compare_systems(
    references,
    systems,
    metrics=METRICS,
    method=SIGNIFICANCE_DEFAULTS["method"],
    n_samples=None,
    seed=DEFAULT_SEED,
    confidence_samples=CONFIDENCE_SAMPLES,
    level=SIGNIFICANCE_LEVEL,
):
    """Compares each system with the first (the baseline) by a paired significance test.

    Args:
        references: N reference translations (str), one reference each.
        systems: dict name -> N translations (str), at least two; the first is the baseline.
        metrics: names among "bleu" (sacreBLEU, 13a, cased) and "chrf" (chrF2).
        method: "bs" (paired bootstrap resampling) or "ar" (approximate randomisation).
        n_samples: bootstrap resamples ("bs") or randomisation trials ("ar"); None takes
            DEFAULT_SAMPLES[method], sacreBLEU's defaults.
        seed: an int >= 1 (sacreBLEU's SACREBLEU_SEED), or None for an unseeded run.
        confidence_samples: "ar" only: bootstrap resamples for the confidence intervals
            (0: none, as sacreBLEU's command line).
        level: a p-value below it marks a difference as significant.

    Returns:
        dict: "method", "method_name", "n_samples", "seed", "confidence_samples" (None
        under "bs"), "level", "sentences", "metrics", "signatures" (metric -> sacreBLEU
        signature), "baseline" (its name) and "systems": one record per system in order,
        {"name", "baseline" (bool), and per metric {"score", "mean" and "ci" (the bootstrap
        mean and the half-width of its 95% interval; None without resamples), "p_value" and
        "significant" (None for the baseline)}}.
    """
    references, systems, metrics = _check_inputs(references, systems, metrics, method)
    if n_samples is None:
        n_samples = DEFAULT_SAMPLES[method]
    n_samples = check_int("compare_systems", "n_samples", n_samples)
    if n_samples > max_samples(len(references)):
        raise ValueError(
            f"compare_systems: n_samples={n_samples} for {len(references)} sentences would "
            f"draw {n_samples * len(references):,} indices at once; expected n_samples at most "
            f"{max_samples(len(references)):,} ({MAX_SAMPLE_CELLS:,} indices, 16 GiB)."
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 1):
        raise ValueError(
            "compare_systems: seed must be an int >= 1 or None (sacreBLEU reads 0 as no "
            f"seed); received {seed!r}."
        )
    confidence = check_int("compare_systems", "confidence_samples", confidence_samples, 0)
    if not 0 < level < 1:
        raise ValueError(f"compare_systems: level must be in (0, 1); received {level!r}.")
    named = list(systems.items())
    with _sacrebleu_seed(seed):
        test = PairedTest(
            named,
            {name: make_metric(name) for name in metrics},
            references=[references],
            test_type=method,
            n_samples=n_samples,
            n_ar_confidence=(confidence or -1) if method == "ar" else -1,
        )
    signatures, columns = test()
    keys = list(columns)[1:]  # sacreBLEU's score names ("BLEU", "chrF2"), in metrics' order
    baseline = named[0][1]
    records = []
    for index, (name, hypotheses) in enumerate(named):
        identical = index > 0 and hypotheses == baseline
        record = {"name": name, "baseline": index == 0}
        for metric, key in zip(metrics, keys, strict=True):
            record[metric] = _record(columns[key][index], index == 0, identical, level)
        records.append(record)
    return {
        "method": method,
        "method_name": METHOD_NAMES[method],
        "n_samples": n_samples,
        "seed": seed,
        "confidence_samples": confidence if method == "ar" else None,
        "level": level,
        "sentences": len(references),
        "metrics": list(metrics),
        "signatures": {
            metric: str(signatures[key]) for metric, key in zip(metrics, keys, strict=True)
        },
        "baseline": named[0][0],
        "systems": records,
    }
