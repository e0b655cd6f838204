"""zoo.workflow: what every recipe shares (command line, data, training, evaluation, files).

A recipe is a `build_model(args, source_vocab_size, target_vocab_size)` that builds its
functional model in the open, then hands everything else to `main`:

    def build_model(args, source_vocab_size, target_vocab_size):
        hp = zoo.workflow.hyperparameters(args, "luong_global_dot")  # sizes for --size
        ...  # keras.Input, encoder "encoder", attention, decoder "decoder", keras.Model
        return model

    if __name__ == "__main__":
        zoo.workflow.main(build_model, recipe="luong_global_dot", description=__doc__)

`main` parses the shared flags (`make_parser`), trains with the chosen optimizer and
checkpoints (resumable), keeps the best model by the validation metric (the loss unless
`--validation-metric bleu`), scores it on the test split with greedy and beam search
(sacreBLEU BLEU and chrF), and writes `model.keras`, tokenizers and vocabularies,
`serving/`, `metrics.json`, `bleu_by_length.{png,tsv,md}`, `attention_*.png` and TensorBoard
logs into `--out` (default `saved_models/<recipe>/`).
"""

from zoo.workflow.arguments import (
    ARCHITECTURE_SWITCHES,
    add_mode_argument,
    hyperparameters,
    make_parser,
    resolve_defaults,
)
from zoo.workflow.report import evaluate_and_report
from zoo.workflow.run import main, run

__all__ = [
    "ARCHITECTURE_SWITCHES",
    "add_mode_argument",
    "evaluate_and_report",
    "hyperparameters",
    "main",
    "make_parser",
    "resolve_defaults",
    "run",
]
