"""sacreBLEU's own command line as the reference of the paired tests, and small test files.

`sacrebleu_paired(reference, systems, method, samples, seed)` runs `python -m sacrebleu REF -i
A B ... -m bleu chrf --paired-bs|--paired-ar` in a subprocess and reads the numbers it prints
(its LaTeX table, 6 decimals; p-values have 4): {system path: {metric: {"score", "mean",
"ci", "p_value"}}}, mean and ci None where it prints none, p_value None for the baseline.
"""

import os
import random
import re
import subprocess
import sys

COLUMNS = {"BLEU": "bleu", "chrF2": "chrf"}
CELL = re.compile(
    r"^(?P<score>-?[\d.]+)(?: \((?P<mean>-?[\d.]+) ± (?P<ci>[\d.]+)\))?"
    r"(?: \(p = (?P<p>[\d.]+)\)\*?)?$"
)
WORDS = "a the dog cat man woman child runs sits plays on in red blue ball grass street".split()


def sacrebleu_paired(reference, systems, method, samples, seed, metrics=("bleu", "chrf")):
    flag = {"bs": "--paired-bs", "ar": "--paired-ar"}[method]
    argv = [sys.executable, "-m", "sacrebleu", str(reference), "-i", *map(str, systems)]
    argv += ["-m", *metrics, flag, f"{flag}-n", str(samples), "-f", "latex", "-w", "6"]
    argv += ["--no-color", "-q"]
    env = {**os.environ, "SACREBLEU_SEED": str(seed)}
    printed = subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stdout
    rows = [line for line in printed.splitlines() if line.rstrip().endswith("\\\\")]
    head = [cell.strip() for cell in rows[0].rstrip(" \\").split("&")]
    names = [COLUMNS[cell.split(" (")[0]] for cell in head[1:]]
    table = {}
    for row in rows[1:]:
        cells = [cell.strip() for cell in row.rstrip(" \\").split("&")]
        system = cells[0].removeprefix("Baseline: ")
        table[system] = {}
        for metric, cell in zip(names, cells[1:], strict=True):
            match = CELL.match(cell)
            assert match, f"unexpected sacreBLEU cell {cell!r}"
            table[system][metric] = {
                key: None if match[group] is None else float(match[group])
                for key, group in (
                    ("score", "score"),
                    ("mean", "mean"),
                    ("ci", "ci"),
                    ("p_value", "p"),
                )
            }
    return table


def write_files(folder, sentences=60, seed=0):
    """REF and three systems of `sentences` lines: a.txt (many words replaced), b.txt (fewer:
    clearly better), c.txt (a.txt with two lines of b.txt: barely different). Returns their
    paths and lines, {"ref": (path, lines), "a": ..., "b": ..., "c": ...}."""
    rng = random.Random(seed)
    refs = [" ".join(rng.choices(WORDS, k=rng.randint(3, 14))) + " ." for _ in range(sentences)]

    def noisy(rate):
        return [
            " ".join(w if rng.random() > rate else rng.choice(WORDS) for w in r.split())
            for r in refs
        ]

    a, b = noisy(0.35), noisy(0.15)
    c = list(a)
    c[0], c[1] = b[0], b[1]
    files = {}
    for name, lines in (("ref", refs), ("a", a), ("b", b), ("c", c)):
        path = folder / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files[name] = (path, lines)
    return files
