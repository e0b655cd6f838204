"""Makes a shipped translator: saved_models/NAME/ from a recipe's runs, with its model card.

    python bench/ship_translator.py --name luong_local_general_multi30k_de_en \\
        --runs RUN_SEED0 RUN_SEED1 --commit COMMIT --beside "nothing"

1. Chooses the run of the highest validation BLEU (of the model each run kept, recorded in
   metrics.json; never the test split).
2. Writes its hub layout (`zoo.hub.package_translator`) with float16 weights, and keeps them
   only when test BLEU (greedy and beam) stays within FLOAT16_TOLERANCE of float32's.
3. Scores the shipped files exactly as `python -m zoo evaluate NAME` does, on the validation
   and test splits, greedy and beam, with 95% bootstrap confidence intervals (sacreBLEU's
   paired bootstrap, `zoo.evaluation.compare_systems`).
4. Writes the model card, README.md: Hugging Face front matter (JSON, which is YAML) with
   the figures, the command, seed, commit, machine and training time, and the translations
   of EXAMPLES and OUT_OF_DOMAIN that tests/saved_models_test.py checks; then the checksums.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import common  # the repository on the path, the CPU's description

REPO = common.REPO_DIR

from zoo.constants import CONFIG_FILE, RUN_FILE  # noqa: E402

FLOAT16_TOLERANCE = 0.1  # BLEU points
LIMIT = None  # --limit: evaluate on the first N pairs only (a trial of this script)
EXAMPLES = [
    "Ein Hund rennt über eine Wiese.",
    "Zwei Männer lachen.",
    "Eine Frau mit einem roten Hut sitzt auf einer Bank und liest ein Buch.",
    "Kinder spielen im Sand am Strand.",
    "Ein Mann in einem blauen Hemd repariert ein Fahrrad.",
]
OUT_OF_DOMAIN = [
    "Die Bundesregierung hat am Mittwoch neue Maßnahmen zur Senkung der Energiepreise beschlossen.",
    "Bitte starten Sie den Computer neu, nachdem Sie die Aktualisierung installiert haben.",
]
PAPERS = {
    "luong": "Luong, Pham and Manning (2015), *Effective Approaches to Attention-based Neural "
    "Machine Translation*",
    "bahdanau": "Bahdanau, Cho and Bengio (2014), *Neural Machine Translation by Jointly "
    "Learning to Align and Translate*",
}


def choose(runs, scratch):
    """(the run folder of the highest validation BLEU, one row per run): the BLEU each run
    measured when it chose its model, else `python -m zoo evaluate RUN --split val`'s."""
    rows = []
    for run in runs:
        metrics = common.read_json(pathlib.Path(run) / "metrics.json")
        selection = metrics["selection"]
        val_bleu = selection["val_bleu"].get(selection["model_file"])
        if val_bleu is None:
            val_bleu = evaluate(run, _settings(run)["validation"], None, scratch)[0]["bleu"]
        rows.append(
            {
                "run": str(run),
                "seed": metrics["args"]["seed"],
                "model_file": selection["model_file"],
                "val_bleu": val_bleu,
                "test_bleu": metrics["bleu"],
            }
        )
    best = max(rows, key=lambda row: row["val_bleu"])
    return pathlib.Path(best["run"]), rows


def other_run(text):
    """--other-run SEED:VAL_BLEU:WHERE as a row of the card's other runs."""
    seed, val_bleu, where = text.split(":", 2)
    return {"seed": int(seed), "val_bleu": float(val_bleu), "run": where}


def _settings(run):
    """The run's corpus: data, languages, validation and test split names."""
    from zoo.data.splits import VALIDATION_NAMES

    settings = common.read_json(pathlib.Path(run) / RUN_FILE)
    return {
        "data": settings["data"],
        "source_lang": settings["source_lang"],
        "target_lang": settings["target_lang"],
        "validation": VALIDATION_NAMES[0],
        "test": settings["test_split"],
    }


def _evaluation(folder, split, beam_size, scratch):
    """(the command of `python -m zoo evaluate FOLDER --split SPLIT`, its two output files)."""
    name = f"{abs(hash(str(folder)))}.{split}.{beam_size}"
    output, hypotheses = scratch / f"{name}.json", scratch / f"{name}.txt"
    command = [sys.executable, "-m", "zoo", "evaluate", str(folder), "--split", split]
    command += ["--output", str(output), "--hypotheses", str(hypotheses)]
    if beam_size == 1:
        command += ["--beam-size", "1"]
    if LIMIT:
        command += ["--limit", str(LIMIT)]
    return command, output, hypotheses


def evaluate_many(jobs, scratch, parallel=2):
    """Runs the evaluations `jobs` ((folder, split, beam size) each; None: the folder's beam
    size), `parallel` at a time; returns their (scores, translations) in order."""
    pending = [_evaluation(*job, scratch) for job in jobs]
    running = []
    for command, output, _ in pending:
        if output.exists():
            continue
        if len(running) == parallel:
            _wait(running.pop(0))
        running.append(subprocess.Popen(command, stdout=subprocess.DEVNULL))
    for process in running:
        _wait(process)
    return [
        (common.read_json(o), h.read_text(encoding="utf-8").splitlines()) for _, o, h in pending
    ]


def _wait(process):
    if process.wait() != 0:
        raise RuntimeError(f"{' '.join(process.args)} exited with {process.returncode}")


def evaluate(folder, split, beam_size, scratch):
    """(scores, translations) of `python -m zoo evaluate FOLDER --split SPLIT`."""
    return evaluate_many([(folder, split, beam_size)], scratch)[0]


def with_intervals(references, systems):
    """{system: {"bleu", "bleu_ci", "chrf", "chrf_ci"}}: scores and the half-widths of their
    95% bootstrap intervals (1000 resamples, sacreBLEU's seed)."""
    from zoo.evaluation import compare_systems

    result = compare_systems(references, systems)
    return {
        record["name"]: {
            key: round(record[metric][part], 2)
            for metric in ("bleu", "chrf")
            for key, part in ((metric, "score"), (f"{metric}_ci", "ci"))
        }
        for record in result["systems"]
    }


def score_all(folder, corpus, scratch):
    """The shipped files' scores and the evaluation's signatures."""
    from zoo.data import load_corpus

    scores, translations, signatures = {}, {}, {}
    splits, searches = (corpus["validation"], corpus["test"]), (("greedy", 1), ("beam", None))
    jobs = [(folder, split, beam) for split in splits for _, beam in searches]
    done = iter(evaluate_many(jobs, scratch))
    for split in splits:
        references = load_corpus(
            corpus["data"], corpus["source_lang"], corpus["target_lang"], split
        ).target[:LIMIT]
        systems = {}
        for search, _ in searches:
            result, hypotheses = next(done)
            systems[search] = hypotheses
            signatures = {"bleu": result["bleu_signature"], "chrf": result["chrf_signature"]}
            translations[(split, search)] = result
        scores[split] = with_intervals(references, systems)
        for search in systems:  # the card's figures are the command's own
            for metric in ("bleu", "chrf"):
                evaluated = round(translations[(split, search)][metric], 2)
                if evaluated != scores[split][search][metric]:
                    raise RuntimeError(
                        f"{split} {search} {metric}: {evaluated} from evaluate, "
                        f"{scores[split][search][metric]} from the bootstrap"
                    )
    return scores, signatures


def package(run, destination, test, scratch):
    """Writes the hub layout of `run` with float16 weights where they keep test BLEU;
    returns (dtype, float32 and float16 test BLEU)."""
    from zoo.hub import package_translator

    metrics = common.read_json(run / "metrics.json")  # the run's own evaluation, in float32
    float32 = {"greedy": metrics["bleu_greedy"], "beam": metrics["bleu"]}
    package_translator(run, destination, float16=True)
    greedy, beam = evaluate_many([(destination, test, 1), (destination, test, None)], scratch)
    float16 = {"greedy": greedy[0]["bleu"], "beam": beam[0]["bleu"]}
    if all(abs(float16[s] - float32[s]) <= FLOAT16_TOLERANCE for s in float32):
        return "float16", float32, float16
    shutil.rmtree(destination)
    for stale in scratch.glob(f"{abs(hash(str(destination)))}.*"):  # float16's evaluations
        stale.unlink()
    package_translator(run, destination, float16=False)
    return "float32", float32, float16


def translate(folder, sentences):
    from zoo.translator import Translator

    return Translator.from_directory(folder).translate(sentences)


def front_matter(name, run_settings, facts):
    scores = facts["scores"]
    metrics = [
        {"type": metric, "value": scores[facts["splits"]["test"]][search][metric], "name": label}
        for search, label_search in (("beam", f"beam {facts['beam_size']}"), ("greedy", "greedy"))
        for metric, label in (
            ("bleu", f"BLEU ({label_search})"),
            ("chrf", f"chrF ({label_search})"),
        )
    ]
    source, target = run_settings["source_lang"], run_settings["target_lang"]
    return {
        "language": [source, target],
        "license": "apache-2.0",
        "library_name": "zoo",
        "pipeline_tag": "translation",
        "tags": ["keras", "translation", "attention", "rnn", facts["family"]],
        "datasets": [run_settings["data"]],
        "metrics": ["bleu", "chrf"],
        "model-index": [
            {
                "name": name,
                "results": [
                    {
                        "task": {"type": "translation", "name": f"Translation {source}-{target}"},
                        "dataset": {
                            "type": run_settings["data"],
                            "name": run_settings["data"],
                            "split": facts["splits"]["test"],
                        },
                        "metrics": metrics,
                    }
                ],
            }
        ],
        "zoo": facts,
    }


def card(name, run_settings, facts):
    """The model card's text."""
    f = facts
    s = f["scores"]
    pair = f"{run_settings['source_lang']}→{run_settings['target_lang']}"
    rows = "\n".join(
        f"| {split} | {search} | {s[split][search]['bleu']:.2f} ± {s[split][search]['bleu_ci']:.2f}"
        f" | {s[split][search]['chrf']:.2f} ± {s[split][search]['chrf_ci']:.2f} |"
        for split in (f["splits"]["test"], f["splits"]["validation"])
        for search in ("beam", "greedy")
    )
    seeds = ", ".join(f"seed {r['seed']}: {r['val_bleu']:.2f}" for r in f["seeds"])
    if len(f["seeds"]) > 1:
        chosen = f"Chosen of {len(f['seeds'])} seeds by validation BLEU (beam {f['beam_size']}; "
        chosen += f"{seeds}): seed {f['seed']}"
    else:
        chosen = f"Seed {f['seed']} (validation BLEU {f['seeds'][0]['val_bleu']:.2f}, beam "
        chosen += f"{f['beam_size']}), the one run trained for this folder"
    others = "".join(
        f"\n- Another run of the same command: seed {r['seed']}, validation BLEU "
        f"{r['val_bleu']:.2f}, {r['run']}."
        for r in f["other_runs"]
    )
    examples = "\n".join(
        f"| {e['source']} | {e['translation']} |" for e in f["examples"] + f["out_of_domain"]
    )
    hours, minutes = divmod(round(f["training_time_s"] / 60), 60)
    return f"""---
{json.dumps(front_matter(name, run_settings, facts), indent=2, ensure_ascii=False)}
---

# {name}

{f["description"]}, trained with zoo on Multi30k {pair} (image captions) by the recipe
`recipes/{run_settings["recipe"]}.py` at its defaults: {f["parameters"]:,} parameters.

## Use

```bash
python -m zoo translate {name} "Ein Hund rennt über eine Wiese."
python -m zoo evaluate {name}                  # {f["splits"]["test"]}, beam {f["beam_size"]}: the figures below
python -m zoo serve {name}
```

```python
from zoo.translator import Translator

translator = Translator.from_directory("{name}")  # or the folder's path, or hf://owner/name
print(translator.translate(["Ein Hund rennt über eine Wiese."]))
```

The model file loads with `keras.models.load_model` in any process that has imported zoo
(TensorFlow, JAX or PyTorch): its weights are stored as {f["weights_dtype"]} and load into
float32. Fine-tune it on your own pairs (it keeps its tokenizers; pieces they lack train as
the unknown id, and the run says how many):

```bash
python recipes/{run_settings["recipe"]}.py --init-from {name} --data my_pairs.tsv \\
    --source-lang {run_settings["source_lang"]} --target-lang {run_settings["target_lang"]} --epochs 2
```

## Results

sacreBLEU on Multi30k, the score of `python -m zoo evaluate {name} --split SPLIT` (add
`--beam-size 1` for greedy search), ± the half-width of the 95% bootstrap confidence
interval (1000 resamples):

| split | search | BLEU | chrF |
|---|---|---:|---:|
{rows}

Signatures: `{f["signatures"]["bleu"]}`, `{f["signatures"]["chrf"]}`.

## Training

- Command: `{f["command"]}`, at commit `{f["commit"]}`.
- Machine: {f["hardware"]} (CPU flags: {", ".join(f["cpu_flags"]) or "none of note"}),
  {f["date"]}. Ran beside it: {f["beside"]}.
- Training time: {hours} h {minutes:02d} min for {f["epochs"]:g} epochs ({f["steps"]:,} steps).
- {chosen}: its {f["delivered"]}, the model the run kept on validation.{others}
- Weights stored as {f["weights_dtype"]}: {f["splits"]["test"]} BLEU in float32
  {f["float32"]["beam"]:.2f} (beam) and {f["float32"]["greedy"]:.2f} (greedy), in float16
  {f["float16"]["beam"]:.2f} and {f["float16"]["greedy"]:.2f} (float16 is kept when within
  {FLOAT16_TOLERANCE} BLEU).
- Retrain it: `python recipes/{run_settings["recipe"]}.py --config {name}` (the settings of its
  `run.json`; training on another machine gives another model of about the same quality).

## What it is for

Translating short descriptions of images, {pair}: the sentences of Multi30k are captions of
Flickr photographs (people, animals, places, everyday actions), 11 to 12 words on average.
Text of other kinds translates badly (the first five rows below are captions, the last two
are not):

| source | translation |
|---|---|
{examples}

## Training data

Multi30k (Elliott et al. 2016, https://github.com/multi30k/dataset): 29,000 training, 1,014
validation and 1,000 test (test2016) caption pairs; `run.json` lists the files read, with
their sizes and a SHA-256 of each one's first and last MiB, under `corpus_files`. Its authors provide it "solely for
researchers and educators who wish to use the dataset for non-commercial research and/or
educational purposes"; the images come under the Flickr Terms of Use. The weights are
released with zoo under the Apache License 2.0; check the data's terms before other use.
"""


def main(argv=None):
    parser = common.parser(__doc__)
    parser.add_argument("--name", required=True, help="the folder's name in saved_models/")
    parser.add_argument("--runs", nargs="+", required=True, help="the recipe's run folders")
    parser.add_argument("--commit", required=True, help="the commit the runs trained at")
    parser.add_argument("--hardware", default=None, help="default: the CPU's model name")
    parser.add_argument("--beside", default="nothing", help="what ran beside the runs")
    parser.add_argument(
        "--other-run",
        type=other_run,
        action="append",
        default=[],
        metavar="SEED:VAL_BLEU:WHERE",
        help="a run of the same command made elsewhere, whose weights were not kept: its seed, "
        "validation BLEU and where it is recorded (the card lists it; it is no candidate)",
    )
    parser.add_argument("--date", required=True, help="the day the runs ended, YYYY-MM-DD (UTC)")
    parser.add_argument("--out", default=str(REPO / "saved_models"), help="default: %(default)s")
    parser.add_argument("--limit", type=int, help="a trial: evaluate on the first N pairs only")
    parser.add_argument(
        "--record",
        default=str(REPO / "bench" / "results" / "shipped.json"),
        help="the record of results the translator's figures join (default: %(default)s; "
        "'' for none)",
    )
    args = parser.parse_args(argv)
    global LIMIT
    LIMIT = args.limit
    from zoo.hub import write_checksums

    destination = pathlib.Path(args.out) / args.name
    if destination.exists():
        parser.error(f"{destination} exists; a shipped translator is never replaced in place.")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        run, seeds = choose(args.runs, scratch)

        corpus = _settings(run)
        dtype, float32, float16 = package(run, destination, corpus["test"], scratch)
        scores, signatures = score_all(destination, corpus, scratch)
    metrics = common.read_json(run / "metrics.json")
    run_settings = common.read_json(run / RUN_FILE)
    family = "bahdanau" if run_settings["recipe"].startswith("bahdanau") else "luong"
    command = (
        f"python recipes/{run_settings['recipe']}.py --max-minutes 0 --seed {run_settings['seed']}"
    )
    facts = {
        "description": f"{metrics['model']}, a model of {PAPERS[family]}",
        "family": family,
        "command": command,
        "seed": run_settings["seed"],
        "commit": args.commit,
        "date": args.date,
        "hardware": args.hardware or f"{common.cpu_name()}, {os.cpu_count()} cores",
        "cpu_flags": common.matrix_flags(),
        "beside": args.beside,
        "training_time_s": round(metrics["train_time_s"]),
        "epochs": metrics["epochs"],
        "steps": metrics["steps"],
        "parameters": metrics["parameters"],
        "beam_size": common.read_json(destination / CONFIG_FILE)["beam_size"],
        "delivered": metrics["selection"]["model_file"],
        "seeds": [{"seed": r["seed"], "val_bleu": r["val_bleu"]} for r in seeds],
        "other_runs": args.other_run,
        "weights_dtype": dtype,
        "float32": float32,
        "float16": float16,
        "splits": {"validation": corpus["validation"], "test": corpus["test"]},
        "scores": scores,
        "signatures": signatures,
        "examples": [
            {"source": s, "translation": t}
            for s, t in zip(EXAMPLES, translate(destination, EXAMPLES), strict=True)
        ],
        "out_of_domain": [
            {"source": s, "translation": t}
            for s, t in zip(OUT_OF_DOMAIN, translate(destination, OUT_OF_DOMAIN), strict=True)
        ],
    }
    (destination / "README.md").write_text(card(args.name, run_settings, facts), encoding="utf-8")
    write_checksums(destination)
    if args.record:
        record(args.name, facts, args.record)
    print(
        f"{destination}: seed {facts['seed']}, test BLEU {scores[corpus['test']]['beam']['bleu']}"
    )


def record(name, facts, path):
    """Adds (or replaces) the translator's entry in the record of results `path`, a README
    row that `python bench/results.py` renders."""
    test, val = facts["splits"]["test"], facts["splits"]["validation"]
    beam, greedy = facts["scores"][test]["beam"], facts["scores"][test]["greedy"]
    hours, minutes = divmod(round(facts["training_time_s"] / 60), 60)
    entry = {
        "id": f"shipped.{name}",
        "what": f"shipped translator `{name}` (seed {facts['seed']})",
        "values": {
            "bleu_beam": beam["bleu"],
            "bleu_beam_ci": beam["bleu_ci"],
            "bleu_greedy": greedy["bleu"],
            "chrf_beam": beam["chrf"],
            "validation_bleu": facts["scores"][val]["beam"]["bleu"],
            "training": f"{hours} h {minutes:02d} min",
        },
        "units": {
            "bleu_beam": f"BLEU, {test}, beam {facts['beam_size']}",
            "bleu_beam_ci": "half-width of the 95% bootstrap interval, BLEU",
            "bleu_greedy": f"BLEU, {test}, greedy",
            "chrf_beam": f"chrF, {test}, beam {facts['beam_size']}",
            "validation_bleu": f"BLEU, {val}, beam {facts['beam_size']}",
            "training": "wall time of training",
        },
        "command": f"python -m zoo evaluate {name}",
        "date": facts["date"],
        "machine": facts["hardware"],
        "beside": facts["beside"],
        "history": "bench/RESULTS.md#shipped-translators",
        "readme": {
            "order": 20,
            "result": "**{bleu_beam:.2f}** ± {bleu_beam_ci:.2f} BLEU beam "
            f"{facts['beam_size']} ({{bleu_greedy:.2f}} greedy), "
            f"chrF {{chrf_beam:.2f}}; trained by `{facts['command']}` in {{training}}",
        },
    }
    entries = common.read_json(path) if os.path.exists(path) else []
    common.write_json(path, [e for e in entries if e["id"] != entry["id"]] + [entry])


if __name__ == "__main__":
    main()
