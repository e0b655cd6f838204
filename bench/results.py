"""The record of measured results, and the README's results table rendered from it.

    python bench/results.py            # rewrite README.md's results table from the record
    python bench/results.py --check    # exit status 1 when README.md's table is not the record's
    python bench/results.py --list     # every recorded figure: id, name, value, unit

The record is `bench/results/*.json`: each file a JSON list of entries, one entry per
measured run (or side-by-side comparison), its current figures only; bench/RESULTS.md keeps
the prose, the tables in full and the figures each entry replaced ("History"). An entry:

    {
      "id": "main_job.seed0",                   # unique across the files
      "what": "main job at its defaults, ...",  # the README row's first cell
      "values": {"bleu_beam": 41.18, "training": "1 h 37 min", ...},   # numbers or strings
      "units": {"bleu_beam": "BLEU, test2016, beam 5", ...},           # one per value
      "command": "python recipes/luong_local_general.py ...",          # as run
      "date": "2026-12-05",                     # UTC, YYYY-MM-DD
      "machine": "2-core AMD EPYC with AVX-512, no GPU",
      "beside": "nothing",                      # what else ran on the machine
      "history": "bench/RESULTS.md#a-heading",  # the section with the run in full
      "superseded": {"bleu_beam": [39.98]},     # optional: the values it replaced
      "paper_table_row": "luong_local_p_general",  # optional: the same run's paper-table record
      "readme": {"order": 10, "result": "**{bleu_beam}** BLEU beam 5 ..."},  # optional
      "quotes": [{"page": "docs/training.md", "text": "test2016 {bleu_beam} and"}]  # optional
    }

Templates ("result", a quote's "text") are `str.format` strings over the entry's values
(`{bleu_beam:.2f}`, `{tokens_per_s:,}`). An entry with "readme" is a row of README.md's
results table, rows in "order": the default command's runs (10-19), shipped trained models
(20-29), other runs of the recipes (30-49), speed against the peers (50-59). A quote is a
piece of text that the page must hold with the current values filled in; tests/docs_test.py
checks every quote, the table, and that no page outside bench/RESULTS.md shows a superseded
value outside a quote. Adding a result: one entry here, the page's sentence that quotes it
(and its "quotes" line), then `python bench/results.py` when it has a README row.
"""

import argparse
import json
import pathlib
import sys

BENCH_DIR = pathlib.Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
RECORD_DIR = BENCH_DIR / "results"
README = REPO_DIR / "README.md"
TABLE_START = "<!-- results table: python bench/results.py -->"
TABLE_END = "<!-- end of the results table -->"
REQUIRED = ("id", "what", "values", "units", "command", "date", "machine", "beside", "history")


def load(record_dir=RECORD_DIR):
    """Every entry of the record, in file order then list order; a ValueError names a
    duplicate id, a missing field or a value without its unit."""
    entries, seen = [], set()
    for path in sorted(pathlib.Path(record_dir).glob("*.json")):
        for entry in json.loads(path.read_text(encoding="utf-8")):
            where = f"{path.name}: {entry.get('id', '?')}"
            missing = [key for key in REQUIRED if key not in entry]
            if missing:
                raise ValueError(f"{where}: missing {missing}")
            if entry["id"] in seen:
                raise ValueError(f"{where}: a second entry with this id")
            if set(entry["values"]) != set(entry["units"]):
                raise ValueError(f"{where}: values and units name different figures")
            seen.add(entry["id"])
            entries.append(entry)
    return entries


def fill(template, entry):
    """`template` with the entry's current values."""
    return template.format(**entry["values"])


def _cell(text):
    return text.replace("|", "\\|")


def readme_table(entries):
    """The README's results table: the entries with a "readme" row, in their order."""
    rows = sorted((e for e in entries if "readme" in e), key=lambda e: e["readme"]["order"])
    lines = [
        "| what | result | command | machine, date | what ran beside it |",
        "|---|---|---|---|---|",
    ]
    for e in rows:
        cells = [
            e["what"],
            fill(e["readme"]["result"], e),
            f"`{e['command']}`",
            f"{e['machine']}, {e['date']}",
            e["beside"],
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def render(text, entries):
    """`text` (README.md's) with the block between TABLE_START and TABLE_END rewritten."""
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"README.md has no line {TABLE_START!r} followed by {TABLE_END!r}")
    return text[: start + len(TABLE_START)] + "\n\n" + readme_table(entries) + "\n" + text[end:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check README.md's table")
    parser.add_argument("--list", action="store_true", help="print every recorded figure")
    args = parser.parse_args(argv)
    entries = load()
    if args.list:
        for e in entries:
            for name, value in e["values"].items():
                print(f"{e['id']}\t{name}\t{value}\t{e['units'][name]}\t{e['date']}")
        return 0
    text = README.read_text(encoding="utf-8")
    rendered = render(text, entries)
    if args.check:
        if rendered != text:
            print("README.md's results table is not the record's: run python bench/results.py")
            return 1
        return 0
    README.write_text(rendered, encoding="utf-8")
    print(f"Rewrote the results table of {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
