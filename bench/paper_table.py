"""The table of paper rows: every recipe trained at its defaults for the same epochs.

Each row runs `python recipes/<recipe>.py --epochs N --max-minutes 0 --out OUT/<row>` (plus
the row's own flags) in a subprocess, alone, and reads its `metrics.json`. A finished row's
`metrics.json` is also recorded in git, as `bench/paper_table/<N>_epochs/<row>.json` (a few
kB), and a row recorded there is reused, so the table can be filled over several runs and
machines (`--rows` picks the rows to train; `--retrain` trains recorded ones again). The
outputs hold every row recorded for these epochs: `OUT/table.md` (markdown, one line per
row: recipe, parameters, epochs, training minutes, best validation and test perplexity, test
BLEU greedy and beam, chrF, beam BLEU by source length) and `OUT/bleu_by_length.png` (every
row's beam BLEU by source length: Bahdanau et al. 2014, fig. 2, for all rows).

The epoch count is fixed (not minutes), so the table does not depend on what else the
machine runs; the recipes' defaults stop training after 60 minutes, which `--max-minutes 0`
lifts here. Each run delivers its model by validation alone (the best checkpoint by
validation loss, or the mean of the last checkpoints if it scores the higher validation
BLEU), never by the test set.

    python bench/paper_table.py                      # all rows, 12 epochs, bench/out/paper_table
    python bench/paper_table.py --rows luong_base,luong_base_forward
    python bench/paper_table.py --table-only --epochs 7   # the rows recorded for 7 epochs
    python bench/paper_table.py --list               # the rows and their commands
    python bench/paper_table.py --table-only         # rewrite the table from finished rows
    python bench/paper_table.py --rows luong_global_dot --note "beside another row"
    python bench/paper_table.py --rows luong_global_dot --retrain   # train a recorded row again
    python bench/paper_table.py --table-only --readme docs/papers.md   # also update docs/papers.md

`--readme FILE` rewrites the block between FILE's two marker lines (README_START and
README_END below) with the table and the figure, and copies the figure beside FILE as
paper_table_bleu_by_length.png (for docs/papers.md: docs/paper_table_bleu_by_length.png),
which the block shows by that name, relative to FILE's folder. Measured tables, with their
machines and what ran beside them: bench/RESULTS.md, "Translation quality".

A row trained while something else ran has its train minutes marked, with the run's note
(`--note`) under the table: its accuracy holds (a fixed number of epochs), its time does not.

Under the table, the differences the papers' findings rest on (PAIRS: attention against
none, reversing the source, input feeding, local against global attention, ...) are tested
for significance: paired bootstrap resampling of the rows' test BLEU with beam search
(`zoo.evaluation.compare_systems`, as `python -m zoo compare` runs it), p < 0.05 marking a
difference as beyond chance. It reads each row's beam translations,
OUT/<row>/translations.<test split>.beam.txt, which the row's run writes, and keeps a copy of
them in git beside the row's metrics, bench/paper_table/<N>_epochs/<row>.translations.<test
split>.beam.txt.gz (gzip, about 20 kB), which it reads where the run folder is gone: a table
written on another machine, or after one row of a pair is trained again, still tests the
pair. Translations that are not the recorded run's (their BLEU differs from the recorded one)
count as missing, and the table says which rows miss them and how to produce them. Each
verdict is recorded too, in bench/paper_table/<N>_epochs/significance.json with both rows'
recorded BLEU, and reused while both rows stay the recorded runs, for rows recorded before
their translations were kept.
"""

import gzip
import math
import pathlib
import shutil
import signal
import subprocess
import sys
import time

from common import BENCH_DIR, OUT_DIR, REPO_DIR, read_json, write_json
from common import parser as script_parser

from zoo.evaluation.scores import MIN_BUCKET_SENTENCES
from zoo.workflow.report import METRICS_FILE, TRANSLATIONS_FILE

RECORDED_DIR = BENCH_DIR / "paper_table"  # tracked: <N>_epochs/<row>.json, a finished row's metrics
README_START = (
    "<!-- paper table: python bench/paper_table.py --table-only --readme docs/papers.md -->"
)
README_END = "<!-- end of the paper table -->"
README_FIGURE = "paper_table_bleu_by_length.png"  # written beside --readme FILE
RUN_NOTES_LINE = (
    "Train minutes are wall minutes of training on 2-core CPUs, most rows two at a time with "
    "one thread each, so they compare loosely; what ran beside each row is in "
    'bench/RESULTS.md ("Translation quality", the paper table).'
)
DEFAULT_OUT = OUT_DIR / "paper_table"  # the rows' run folders, table.md, the figure
EPOCHS = 12  # the table's epochs by default, and the table that --readme writes
# A recipe stopped by Ctrl-C or SIGTERM exits with the shell's 128 + signal, checkpointed.
INTERRUPTED_CODES = (128 + signal.SIGINT, 128 + signal.SIGTERM)


SIGNIFICANCE_FILE = "significance.json"  # in recorded_folder(N): the verdicts


def recorded_folder(epochs):
    """bench/paper_table/<epochs>_epochs: the rows' metrics, their beam translations and the
    significance verdicts, recorded in git."""
    return RECORDED_DIR / f"{epochs}_epochs"


def recorded_path(label, epochs):
    return recorded_folder(epochs) / f"{label}.json"


# label -> (recipe, extra flags, the paper's row it reproduces)
ROWS = {
    "bahdanau_rnnencdec": ("bahdanau_rnnencdec", [], "Bahdanau Table 1, RNNencdec"),
    "bahdanau_rnnsearch": ("bahdanau_rnnsearch", [], "Bahdanau Table 1, RNNsearch"),
    "luong_base": ("luong_base", [], "Luong Table 1, base + reverse + dropout"),
    "luong_base_forward": (
        "luong_base",
        ["--no-reverse-source"],
        "Luong Table 1, base + dropout (source not reversed)",
    ),
    "luong_global_dot": ("luong_global_dot", [], "Luong Table 4, global (dot)"),
    "luong_global_general": ("luong_global_general", [], "Luong Table 4, global (general)"),
    "luong_global_concat": ("luong_global_concat", [], "Luong Table 4, global (concat)"),
    "luong_global_location": ("luong_global_location", [], "Luong Table 4, global (location)"),
    "luong_local_m_dot": (
        "luong_local_dot",
        ["--mode", "monotonic"],
        "Luong Table 4, local-m (dot)",
    ),
    "luong_local_p_dot": ("luong_local_dot", [], "Luong Table 4, local-p (dot)"),
    "luong_local_m_general": (
        "luong_local_general",
        ["--mode", "monotonic"],
        "Luong Table 4, local-m (general)",
    ),
    # The local-p (general) rows untied, as the papers (the recipe ties them by default).
    "luong_local_p_general": (
        "luong_local_general",
        ["--no-tie-embeddings"],
        "Luong Table 4, local-p (general)",
    ),
    "luong_local_p_general_feed": (
        "luong_local_general",
        ["--input-feeding", "--no-tie-embeddings"],
        "Luong Table 1, local-p (general) with input feeding (the paper's; the default has none)",
    ),
    "luong_local_p_general_paper_model": (
        "luong_local_general",
        ["--input-feeding", "--no-bidirectional", "--dropout", "0.2", "--no-tie-embeddings"],
        "Luong Table 4, local-p (general), the paper's model at base sizes",
    ),
}


def command(label, epochs, out):
    recipe, flags, _ = ROWS[label]
    return [
        sys.executable,
        str(REPO_DIR / "recipes" / f"{recipe}.py"),
        "--epochs",
        str(epochs),
        "--max-minutes",
        "0",
        "--out",
        str(out / label),
        *flags,
    ]


def recorded(label, epochs):
    """The row's recorded metrics (bench/paper_table/<epochs>_epochs/<label>.json), or None."""
    path = recorded_path(label, epochs)
    if not path.exists():
        return None
    metrics = read_json(path)
    return metrics if metrics["args"]["epochs"] == epochs else None


def run_row(label, epochs, out, note=None, retrain=False):
    """Trains and evaluates one row (its log in OUT/<label>.log, which a resumed run appends
    to), records its metrics in bench/paper_table/<epochs>_epochs/<label>.json (with `note`,
    if given, as "run_note") and returns them; a row recorded for `epochs` epochs is reused,
    unless `retrain`.

    The recipe resumes a run folder it finds (OUT/<label>): an interrupted run goes on from
    its last checkpoint. So `retrain` refuses a folder that holds a finished run (its
    metrics.json), which would only be evaluated again. Ctrl-C reaches the recipe too, which
    saves a checkpoint and stops; this waits for it, then says how to resume."""
    metrics = None if retrain else recorded(label, epochs)
    if metrics is not None:
        print(f"{label}: reusing {recorded_path(label, epochs)}", flush=True)
        return metrics
    metrics_path = out / label / METRICS_FILE
    if retrain and metrics_path.exists():
        raise SystemExit(
            f"{label}: {out / label} holds a finished run ({metrics_path.name}), which the "
            "recipe would resume rather than train again; move that folder aside (it holds "
            "the run's translations) or give another --out."
        )
    argv = command(label, epochs, out)
    print(f"{label}: {' '.join(argv[1:])}", flush=True)
    started = time.perf_counter()
    resumed = (out / label).exists()  # the log of the run it resumes is kept, appended to
    with open(out / f"{label}.log", "a" if resumed else "w") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_DIR)
        try:
            code = process.wait()
        except KeyboardInterrupt:  # the recipe got it too: let it save its checkpoint
            code = process.wait()
    if code in INTERRUPTED_CODES:
        print(
            f"{label}: interrupted; its checkpoints are in {out / label}, and the same "
            "command resumes it",
            flush=True,
        )
        raise SystemExit(code)
    if code != 0 or not metrics_path.exists():
        raise SystemExit(f"{label}: the recipe failed (exit {code}); see {out / label}.log")
    print(f"{label}: done in {(time.perf_counter() - started) / 60:.1f} min", flush=True)
    metrics = read_json(metrics_path)
    if note:
        metrics["run_note"] = note
    write_json(recorded_path(label, epochs), metrics)
    return metrics


def _number(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}"


# A length bucket with fewer test sentences is left out of table and figure (one BLEU point
# per bucket would say little): the library's own minimum, which the per-run plots use too.
MIN_SENTENCES = MIN_BUCKET_SENTENCES


def _beam_rows(metrics):
    tables = metrics["bleu_by_length"]
    return tables[next(k for k in tables if k.startswith("beam"))]


def _buckets(results):
    """(shown, left out): the length buckets with at least MIN_SENTENCES test sentences, as
    (index, label with its sentence count), and the labels of the others that have any."""
    first = _beam_rows(next(iter(results.values())))
    shown = [
        (i, f"{r['bin']} ({r['sentences']})")
        for i, r in enumerate(first)
        if r["sentences"] >= MIN_SENTENCES
    ]
    left_out = [
        f"{r['bin']}: {r['sentences']}" for r in first if 0 < r["sentences"] < MIN_SENTENCES
    ]
    return shown, left_out


def table(results, significance_notes="", run_notes=True):
    """The markdown table of finished rows (dict label -> metrics), then a line naming the
    length buckets left out for having fewer than MIN_SENTENCES sentences, then
    `significance_notes` (markdown, from `significance`). With `run_notes`, each row's
    "run_note" (what ran beside it) is a numbered note to its train minutes; without, one
    line points to bench/RESULTS.md for them (the guide's table)."""
    shown, left_out = _buckets(results)
    head = "| row | paper row | params | epochs | train min | val ppl | test ppl |"
    head += " BLEU greedy | BLEU beam | chrF |" + "".join(f" {b} |" for _, b in shown)
    lines = [head, "|" + "---|" * (10 + len(shown))]
    notes = {}  # run note -> its mark, in order of first use
    for label, m in results.items():
        mark = ""
        if run_notes and m.get("run_note"):
            mark = notes.setdefault(m["run_note"], f" [{len(notes) + 1}]")
        by_length = _beam_rows(m)
        training = m["training"]
        best_val = training.get("best_val_loss")
        val_ppl = None if best_val is None else math.exp(best_val)
        cells = [
            label,
            ROWS[label][2] if label in ROWS else "-",
            f"{m['parameters']:,}",
            _number(m["epochs"], 2),
            _number(m["train_time_s"] / 60, 1) + mark,
            _number(val_ppl),
            _number(m["ppl"]),
            _number(m["bleu_greedy"]),
            _number(m["bleu"]),
            _number(m["chrf"]),
            *(_number(by_length[i]["bleu"]) for i, _ in shown),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "BLEU by source length in words, beam; the test sentences in each bucket in brackets."
        + (
            f" Left out, under {MIN_SENTENCES} sentences: {'; '.join(left_out)}."
            if left_out
            else ""
        )
    )
    if not run_notes:
        lines.append("")
        lines.append(RUN_NOTES_LINE)
    if notes:  # one list item per note, so that markdown keeps them on separate lines
        lines.append("")
        lines.extend(f"- {mark.strip()} Train minutes: {note}." for note, mark in notes.items())
    return "\n".join(lines) + "\n" + (f"\n{significance_notes}" if significance_notes else "")


# (baseline row, row, what the papers compare): the differences their findings rest on
PAIRS = (
    (
        "bahdanau_rnnencdec",
        "bahdanau_rnnsearch",
        "attention against a fixed context (Bahdanau Table 1)",
    ),
    ("luong_base", "luong_global_location", "global attention against none (Luong Table 1)"),
    ("luong_base_forward", "luong_base", "reversing the source, no attention (Luong Table 1)"),
    ("luong_local_p_general", "luong_local_p_general_feed", "input feeding (Luong Table 1)"),
    (
        "luong_global_general",
        "luong_local_p_general",
        "local-p against global, general (Luong Table 4)",
    ),
    ("luong_global_dot", "luong_local_p_dot", "local-p against global, dot (Luong Table 4)"),
    (
        "luong_local_m_general",
        "luong_local_p_general",
        "local-p against local-m, general (Luong Table 4)",
    ),
    (
        "luong_global_dot",
        "luong_global_general",
        "general score against dot, global (Luong Table 4)",
    ),
    (
        "luong_global_general",
        "luong_global_location",
        "location score against general, global (Luong Table 4)",
    ),
    (
        "luong_local_p_general",
        "luong_local_p_general_paper_model",
        "the paper's model against the default (Luong Table 4 settings)",
    ),
)
SAME_RUN_BLEU = 0.005  # translations or a verdict are the recorded run's within this BLEU


def beam_file(split):
    """The name of a run's beam translations of `split`, e.g. translations.test2016.beam.txt."""
    return TRANSLATIONS_FILE.format(split=split, search="beam")


def translations_path(out, label, metrics):
    """The beam translations of the test split that the row's run wrote in its folder."""
    return out / label / beam_file(metrics["test_split"])


def kept_translations_path(recorded, label, metrics):
    """The copy of the row's beam translations kept in the `recorded` folder (gzip)."""
    return recorded / f"{label}.{beam_file(metrics['test_split'])}.gz"


def _shown(path):
    """`path` relative to the repository where it lies inside it (for the table's text)."""
    path = pathlib.Path(path)
    return str(path.relative_to(REPO_DIR)) if path.is_relative_to(REPO_DIR) else str(path)


def _references(metrics, cache):
    """The test references of a row's run (its corpus, languages, split and --eval-limit)."""
    from zoo.data import load_corpus

    limit = metrics["args"].get("eval_limit")
    key = (metrics["data"], metrics["source_lang"], metrics["target_lang"], metrics["test_split"])
    if (key, limit) not in cache:
        corpus = load_corpus(*key)
        cache[key, limit] = list((corpus.take(limit) if limit else corpus).target)
    return cache[key, limit]


def _lines(text):
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def _translations(label, metrics, out, recorded, cache):
    """The row's beam translations and references, from its run folder (OUT/<label>) or,
    where that holds none, from their copy kept in `recorded` (None: no copy); None when
    neither holds the recorded run's (their BLEU is not the recorded one).

    A run folder's translations that are the recorded run's are kept in `recorded`, gzipped
    (deterministic bytes, so an unchanged copy is not rewritten)."""
    from zoo.evaluation import corpus_scores

    references = _references(metrics, cache)
    run_path = translations_path(out, label, metrics)
    kept = None if recorded is None else kept_translations_path(recorded, label, metrics)
    for path in (run_path, kept):
        if path is None or not path.is_file():
            continue
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path == kept else raw).decode("utf-8")
        lines = _lines(text)
        if len(lines) != len(references):
            continue
        if abs(corpus_scores(lines, references)["bleu"] - metrics["bleu"]) > SAME_RUN_BLEU:
            continue
        if path == run_path and kept is not None:
            packed = gzip.compress(text.encode("utf-8"), mtime=0)
            if not kept.is_file() or kept.read_bytes() != packed:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_bytes(packed)
        return lines, references
    return None


def _verdict(baseline, row, found):
    """The paired bootstrap verdict on test BLEU (beam) of `row` against `baseline`, with both
    rows' BLEU (their recorded BLEU: `_translations` checks it), which tells later whether
    they are still the rows tested."""
    from zoo.evaluation.significance import DEFAULT_SAMPLES, DEFAULT_SEED, compare_systems

    (baseline_lines, references), (row_lines, _) = found[baseline], found[row]
    systems = {baseline: baseline_lines, row: row_lines}
    result = compare_systems(references, systems, metrics=("bleu",))
    first, second = (s["bleu"] for s in result["systems"])
    return {
        "baseline": baseline,
        "row": row,
        "bleu": [first["score"], second["score"]],
        "p_value": second["p_value"],
        "significant": second["significant"],
        "samples": DEFAULT_SAMPLES["bs"],
        "seed": DEFAULT_SEED,
    }


def _saved_verdicts(path, results):
    """The verdicts recorded in `path` (None: none) that still hold: both rows are the
    recorded runs (the same recorded BLEU) and the test's settings are the same."""
    from zoo.evaluation.significance import DEFAULT_SAMPLES, DEFAULT_SEED

    if path is None or not pathlib.Path(path).is_file():
        return {}
    saved = {}
    for v in read_json(path):
        rows = (v["baseline"], v["row"])
        if (
            all(label in results for label in rows)
            and all(
                abs(results[label]["bleu"] - bleu) <= SAME_RUN_BLEU
                for label, bleu in zip(rows, v["bleu"], strict=True)
            )
            and (v["samples"], v["seed"]) == (DEFAULT_SAMPLES["bs"], DEFAULT_SEED)
        ):
            saved[rows] = v
    return saved


def significance(results, out, recorded=None):
    """Markdown: whether each difference of PAIRS between recorded rows is significant (paired
    bootstrap resampling of test BLEU, beam), or what it needs where translations are missing.

    `recorded` (a folder, or None for none: `recorded_folder(N)` for the table): where the
    rows' translations are kept (`_translations`), and its SIGNIFICANCE_FILE, the verdicts,
    read for the pairs whose translations are missing (a verdict holds while both rows'
    recorded BLEU is the one it was computed with) and rewritten with every verdict the table
    shows."""
    from zoo.evaluation.significance import DEFAULT_SAMPLES, DEFAULT_SEED

    pairs = [p for p in PAIRS if p[0] in results and p[1] in results]
    if not pairs:
        return ""
    cache, found = {}, {}
    for label in dict.fromkeys(label for pair in pairs for label in pair[:2]):
        found[label] = _translations(label, results[label], out, recorded, cache)
    record = None if recorded is None else pathlib.Path(recorded) / SIGNIFICANCE_FILE
    saved = _saved_verdicts(record, results)
    verdicts = {}
    for baseline, row, _ in pairs:
        if found[baseline] and found[row]:
            verdicts[baseline, row] = _verdict(baseline, row, found)
        elif (baseline, row) in saved:
            verdicts[baseline, row] = saved[baseline, row]
    if record is not None:
        write_json(record, list(verdicts.values()))
    head = (
        "Significance of the differences the papers' findings rest on: paired bootstrap "
        f"resampling of test BLEU (beam), {DEFAULT_SAMPLES['bs']} resamples, seed "
        f"{DEFAULT_SEED}, as `python -m zoo compare` runs it; p < 0.05 marks a difference "
        "beyond chance in the choice of test sentences (not in the training seed: one run per "
        "row)."
    )
    lines = [head, ""]
    tested = [p for p in pairs if (p[0], p[1]) in verdicts]
    if tested:
        lines += [
            "| the papers compare | baseline row | row | BLEU | difference | p | significant |",
            "|---|---|---|---|---:|---:|---|",
        ]
    for baseline, row, what in tested:
        v = verdicts[baseline, row]
        first, second = v["bleu"]
        lines.append(
            f"| {what} | {baseline} | {row} | {first:.2f} → {second:.2f} | "
            f"{second - first:+.2f} | {v['p_value']:.4f} | "
            f"{'yes' if v['significant'] else 'no'} |"
        )
    untested = [p for p in pairs if (p[0], p[1]) not in verdicts]
    missing = [
        label
        for label in dict.fromkeys(label for p in untested for label in p[:2])
        if found[label] is None
    ]
    if missing:
        split = results[missing[0]]["test_split"]
        folder, name = f"{_shown(out)}/ROW", beam_file(split)
        path = f"{folder}/{name}"
        out_flag = "" if out == DEFAULT_OUT.resolve() else f" --out {_shown(out)}"
        kept = "" if recorded is None else f", or their copy `{_shown(recorded)}/ROW.{name}.gz`"
        lines += [
            "" if tested else None,
            f"Not tested ({len(untested)} of {len(pairs)} comparisons): the test "
            f"reads each row's beam translations of {split}, `{path}`, which the row's run "
            f"writes{kept}; they are missing (or are another run's) for "
            f"{', '.join(missing)}. To produce them, train the row again, `python "
            f"bench/paper_table.py --rows ROW --retrain{out_flag}`, or translate with its "
            f"delivered model folder, `python -m zoo evaluate {folder} --split {split} "
            f"--hypotheses {path}`, then `python bench/paper_table.py --table-only{out_flag}`.",
        ]
    return "\n".join(line for line in lines if line is not None) + "\n"


def write_outputs(results, out, significance_notes=""):
    from zoo.evaluation import plot_bleu_by_length

    curves = {label: _beam_rows(m) for label, m in results.items()}
    (out / "table.md").write_text(table(results, significance_notes))
    plot_bleu_by_length(
        curves,
        str(out / "bleu_by_length.png"),
        title="test2016 BLEU (beam 5) by source length, every row",
        min_sentences=MIN_SENTENCES,
    )
    print(table(results, significance_notes))
    print(f"Wrote {out / 'table.md'} and {out / 'bleu_by_length.png'}")


def update_readme(path, results, out, significance_notes=""):
    """Replaces the block between README_START and README_END in `path` with the table and
    the figure, copied beside `path` as README_FIGURE and linked relative to `path`'s folder;
    a file without both markers is an error."""
    path = pathlib.Path(path)
    text = path.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(
            f"{path} has no paper-table block: expected a line {README_START!r} and, after "
            f"it, a line {README_END!r}."
        )
    figure = path.parent / README_FIGURE
    shutil.copyfile(out / "bleu_by_length.png", figure)
    alt = "test2016 BLEU by source length for every recorded row"
    rows = table(results, significance_notes, run_notes=False)
    block = f"{README_START}\n\n{rows}\n![{alt}]({README_FIGURE})\n\n"
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")
    print(f"Updated the paper table in {path} and {figure}")


def main(argv=None):
    parser = script_parser(__doc__)
    parser.add_argument(
        "--epochs",
        type=int,
        default=EPOCHS,
        help=f"epochs for every row (default: {EPOCHS}, the Luong recipes' default, near "
        "convergence for the best rows; rows recorded for 7 epochs are in "
        "bench/paper_table/7_epochs/)",
    )
    parser.add_argument(
        "--rows", default="all", help=f"comma-separated rows, or 'all' (default): {', '.join(ROWS)}"
    )
    parser.add_argument(
        "--out",
        default=str(DEFAULT_OUT),
        help="output folder: the rows' runs and logs, table.md, bleu_by_length.png "
        f"(default: {_shown(DEFAULT_OUT)})",
    )
    parser.add_argument("--list", action="store_true", help="print the rows' commands and exit")
    parser.add_argument(
        "--table-only",
        action="store_true",
        help="train nothing: tabulate the rows recorded in bench/paper_table/ (every run "
        "tabulates them all, the rows it trained included)",
    )
    parser.add_argument(
        "--retrain",
        action="store_true",
        help="train the rows again even where they are recorded (their new metrics replace "
        "the recorded ones, and their comparisons are tested again); a row's run folder must "
        "not hold a finished run, and one left by an interrupted run is resumed",
    )
    parser.add_argument(
        "--note",
        help="recorded with each row this run trains, and shown under the table beside its "
        "train minutes: say here what else ran (e.g. 'two rows at a time, one thread each')",
    )
    parser.add_argument(
        "--readme",
        metavar="FILE",
        help="also write the table into FILE (e.g. docs/papers.md) between its paper-table "
        f"markers, and copy the figure beside FILE as {README_FIGURE}",
    )
    args = parser.parse_args(argv)
    labels = list(ROWS) if args.rows == "all" else args.rows.split(",")
    unknown = [label for label in labels if label not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; valid: {', '.join(ROWS)}")
    if args.epochs < 1:
        parser.error(f"--epochs must be >= 1, got {args.epochs}")
    if args.retrain and args.table_only:
        parser.error("--retrain trains rows and --table-only trains none; give one of them")
    if args.readme and args.epochs != EPOCHS:
        parser.error(f"--readme writes the {EPOCHS}-epoch table; got --epochs {args.epochs}")
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.list:
        for label in labels:
            print(f"{label}: {' '.join(command(label, args.epochs, out)[1:])}")
        return
    if not args.table_only:
        for label in labels:
            run_row(label, args.epochs, out, args.note, args.retrain)
    # The table and figure hold every row recorded for these epochs, in ROWS' order, so a
    # run of some rows adds them to those recorded earlier.
    results = {label: m for label in ROWS if (m := recorded(label, args.epochs)) is not None}
    if results:
        notes = significance(results, out, recorded_folder(args.epochs))
        write_outputs(results, out, notes)
        if args.readme:
            update_readme(args.readme, results, out, notes)
    else:
        print("No finished rows yet.")


if __name__ == "__main__":
    main()
