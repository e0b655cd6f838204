"""`python -m zoo average`: the mean of a run's last checkpoints."""

import os
import sys

from zoo.checks import positive_int
from zoo.cli.flags import add_debug_flag
from zoo.constants import CHECKPOINT_DIR
from zoo.errors import UsageError
from zoo.training import average_checkpoints
from zoo.translator import MODEL_FILE
from zoo.workflow.flags import library_default
from zoo.workflow.report import AVERAGED_FILE


def add_average_command(commands):
    average = commands.add_parser(
        "average",
        help="average the model weights of a run's last checkpoints into one model file",
        description="Set every weight to its mean over the newest N intact checkpoints in "
        "MODEL_DIR/checkpoints (zoo.training.average_checkpoints) and save the model beside "
        "model.keras; score it with `python -m zoo evaluate MODEL_DIR --model-file FILE`.",
    )
    average.add_argument("model_dir", metavar="MODEL_DIR", help="a zoo output folder")
    average.add_argument(
        "--last",
        type=positive_int,
        default=library_default(average_checkpoints, "last"),
        help="how many checkpoints (default: %(default)s)",
    )
    average.add_argument(
        "--output",
        default=AVERAGED_FILE,
        help="file name inside MODEL_DIR (default: %(default)s)",
    )
    add_debug_flag(average)


def check_output_name(name):
    """--output: a .keras file name inside MODEL_DIR other than model.keras; else a usage
    error."""
    if os.path.basename(name) != name or not name.endswith(".keras") or name == ".keras":
        raise UsageError(
            f"--output must be a file name inside MODEL_DIR ending in .keras, such as "
            f"{AVERAGED_FILE!r}; received {name!r}."
        )
    if name == MODEL_FILE:
        raise UsageError(
            f"--output {MODEL_FILE} would replace the run's best model; choose another name, "
            f"such as {AVERAGED_FILE!r}."
        )
    return name


def run_average(args, out=None):
    """Writes the mean of the last --last checkpoints to MODEL_DIR/--output."""
    out = sys.stdout if out is None else out
    from zoo.hub import check_folder
    from zoo.translator.output_folder import CONFIG_FILE, load_model_file, model_file

    name = check_output_name(args.output)
    directory = check_folder(args.model_dir)
    checkpoints = os.path.join(directory, CHECKPOINT_DIR)
    if not os.path.isdir(checkpoints):
        raise ValueError(
            f"{directory} holds no {CHECKPOINT_DIR}/ folder to average (training writes it)."
        )
    model = load_model_file(os.path.join(directory, MODEL_FILE))
    used = average_checkpoints(model, checkpoints, args.last)
    target = os.path.join(directory, name)
    model.save(target)
    names = ", ".join(os.path.basename(p) for p in used)
    print(f"Averaged {len(used)} checkpoints ({names}) into {target}", file=out)
    if os.path.isfile(os.path.join(directory, CONFIG_FILE)) and model_file(directory) == name:
        print(
            f"{target} is the model {CONFIG_FILE} names: translate, evaluate and serve now "
            "load this average.",
            file=out,
        )
    return 0
