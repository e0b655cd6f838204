"""The `zoo` command line: `python -m zoo COMMAND ...`, the commands train, translate,
evaluate, aer, average, serve, compare, export, score, params, list and push.

    python -m zoo train luong_global_dot --size tiny --epochs 1
    python -m zoo translate saved_models/luong_local_general "Ein Hund rennt."
    python -m zoo translate saved_models/luong_local_general --alignments "Ein Hund rennt."
    python -m zoo aer saved_models/luong_local_general --source s.de --target t.en --gold g.txt
    python -m zoo average saved_models/luong_local_general --last 3
    python -m zoo serve saved_models/luong_local_general --port 8080
    python -m zoo compare ref.en system_a.en system_b.en
    python -m zoo export saved_models/luong_local_general --format tflite --out model.tflite
    python -m zoo score saved_models/luong_local_general --source s.de --target t.en
    cat sentences.de | python -m zoo translate saved_models/luong_local_general --beam-size 5
    python -m zoo evaluate saved_models/luong_local_general --split test2016 --beam-size 5
    python -m zoo params --size paper
    python -m zoo list
    python -m zoo translate luong_local_general_multi30k_de_en "Ein Hund rennt."
    python -m zoo push saved_models/luong_local_general hf://owner/name

MODEL_DIR is an output folder written by `zoo.translator.Translator.save` (model.keras,
source_tokenizer/, target_tokenizer/, translator.json), the name of a shipped translator
(`python -m zoo list`) or a hub handle `hf://owner/name` (`zoo.hub.resolve_translator`).
One module per command (`zoo/cli/translate.py`, ...; `export.py` also holds list and push),
each with its parser and its `run_<command>(args, out)`; `flags.py` holds the flags several
commands share, `loading.py` opens MODEL_DIR. The search
flags' defaults are translator.json's, else the library's (`zoo.search.defaults`).
"""

import sys

from zoo.cli.aer import run_aer
from zoo.cli.average import run_average
from zoo.cli.compare import run_compare
from zoo.cli.evaluate import run_evaluate
from zoo.cli.export import run_export, run_list, run_push
from zoo.cli.parser import build_parser, parse_arguments
from zoo.cli.score import run_score
from zoo.cli.serve import run_serve
from zoo.cli.translate import run_translate
from zoo.errors import exit_on_user_error
from zoo.hub import resolve_translator

__all__ = [
    "build_parser",
    "main",
    "run_aer",
    "run_average",
    "run_evaluate",
    "run_serve",
    "run_translate",
]

COMMANDS = {
    "translate": run_translate,
    "evaluate": run_evaluate,
    "aer": run_aer,
    "average": run_average,
    "serve": run_serve,
    "compare": run_compare,
    "export": run_export,
    "score": run_score,
    "list": run_list,
    "push": run_push,
}


def main(argv=None):
    """Entry point of `python -m zoo` and of the `zoo` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "params":
        from zoo.models import params

        params.main(argv[1:])
        return 0
    if argv and argv[0] == "train":  # the recipes' own parser (zoo.workflow)
        from zoo.cli.train import run_train

        return run_train(argv[1:])
    args = parse_arguments(argv)
    command = COMMANDS[args.command]

    def job():
        if getattr(args, "model_dir", None) is not None:
            args.model_dir = resolve_translator(args.model_dir)  # a name or hub handle
        for index, member in enumerate(getattr(args, "ensemble", None) or []):
            args.ensemble[index] = resolve_translator(member)
        return command(args)

    return exit_on_user_error(job, prog=f"python -m zoo {args.command}", debug=args.debug)
