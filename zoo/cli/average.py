"""`python -m zoo average`: the mean of a run's last checkpoints."""

import os
import sys

from zoo.checks import positive_int
from zoo.cli.flags import add_debug_flag
from zoo.training import average_checkpoints
from zoo.translator import MODEL_FILE
from zoo.workflow.flag_types import library_default
from zoo.workflow.selection import AVERAGED_FILE


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


def run_average(args, out=None):
    """Writes the mean of the last --last checkpoints to MODEL_DIR/--output."""
    out = sys.stdout if out is None else out
    import keras

    path = os.path.join(args.model_dir, MODEL_FILE)
    if not os.path.isfile(path):
        raise ValueError(f"{args.model_dir} is not a zoo output folder: no {MODEL_FILE}.")
    model = keras.models.load_model(path)
    used = average_checkpoints(model, os.path.join(args.model_dir, "checkpoints"), args.last)
    target = os.path.join(args.model_dir, args.output)
    model.save(target)
    names = ", ".join(os.path.basename(p) for p in used)
    print(f"Averaged {len(used)} checkpoints ({names}) into {target}", file=out)
    return 0
