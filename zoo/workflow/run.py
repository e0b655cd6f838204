"""`main` and `run`: what every recipe does around its `build_model`.

1. strategy (first: multi-worker needs it before any other TF op), seed, precision;
2. the corpus' train / val / test splits (optionally sliced with --train-limit/--eval-limit);
3. one tokenizer per language, trained on the training split and saved in the output
   folder (`source_tokenizer/`, `target_tokenizer/`, `vocab.<lang>.txt`); reused on resume;
4. tf.data pipelines, the recipe's model and the paper's optimizer inside the strategy scope;
5. `zoo.training.train`: progress bar, TensorBoard logs, checkpoints, exact resume, the best
   model by --validation-metric (validation loss or BLEU) in `model.keras`;
6. `zoo.workflow.report`: that model or the mean of the last checkpoints, whichever
   scores the higher validation BLEU (translator.json names the one delivered);
7. `zoo.workflow.report`: greedy and beam-search BLEU/chrF on the test split, perplexity,
   plots, `metrics.json`, the `serving/` SavedModel; then a one-line summary.
"""

import contextlib
import os
import sys
import time

import keras
import tensorflow as tf

from zoo import training
from zoo.constants import LOG_DIR, MODEL_FILE
from zoo.errors import exit_on_user_error
from zoo.json_files import write_json
from zoo.models import model_dropout
from zoo.training.settings import OPTIMIZER_DESCRIPTIONS
from zoo.translator import SERVING_DIR
from zoo.workflow import data as recipe_data
from zoo.workflow.arguments import make_parser, resolve_defaults
from zoo.workflow.flags import apply_model_flags, recipe_family, training_options
from zoo.workflow.report import (
    ATTENTION_PLOT,
    BLEU_BY_LENGTH,
    METRICS_FILE,
    TRANSLATIONS_FILE,
    evaluate_and_report,
)
from zoo.workflow.run_folder import (
    RESUMABLE_CHANGES,
    RUN_FILE,
    OutLock,
    RunRecord,
    Terminated,
    ending_on_sigterm,
)
from zoo.workflow.starting_points import apply_config, init_weights

__all__ = ["RESUMABLE_CHANGES", "RUN_FILE", "main", "run", "written_files"]


class _Say:
    """print() for the chief worker only, flushed (progress bars share the terminal)."""

    def __init__(self, enabled):
        self.enabled = bool(enabled)

    def __call__(self, message):
        if self.enabled:
            print(message, flush=True)


def main(
    build_model,
    *,
    recipe,
    family=None,
    description=None,
    switches=None,
    add_arguments=None,
    argv=None,
    prog=None,
):
    """Parses the command line and runs the recipe: train, evaluate, export.

    Args:
        build_model: `build_model(args, source_vocab_size, target_vocab_size) -> keras.Model`,
            the recipe's functional model ({"source_ids", "target_ids"} -> logits, with
            layers "encoder" and "decoder"). Called inside the distribution strategy's scope.
        recipe: the recipe's name (default output folder `saved_models/<recipe>/`).
        family: "bahdanau" or "luong" (the paper optimizer and default epochs); default: the
            family of the preset the recipe trains (`recipe_preset`).
        description: --help text; recipes pass their module docstring.
        switches: the architecture switches the recipe accepts (see `make_parser`).
        add_arguments: optional `add_arguments(parser)` adding recipe-specific flags.
        argv: the arguments (default: `sys.argv[1:]`).
        prog: the command's name in --help and errors (default: `python recipes/<recipe>.py`).

    Returns:
        the metrics dict also written to `<out>/metrics.json` (on the chief worker).

    Example (the end of a recipe):
        if __name__ == "__main__":
            zoo.workflow.main(build_model, recipe="luong_global_dot", description=__doc__)
    """
    if family is None:
        try:
            family = recipe_family(recipe)
        except ValueError:
            raise ValueError(
                f"zoo.workflow.main: recipe {recipe!r} is no preset's name; pass "
                "family='bahdanau' or family='luong'."
            ) from None
    parser = make_parser(recipe, family, description=description, switches=switches, prog=prog)
    if add_arguments is not None:
        add_arguments(parser)
    argv = sys.argv[1:] if argv is None else list(argv)
    apply_config(parser, argv, recipe)  # --config: a recorded run's settings as defaults
    args = parser.parse_args(argv)
    try:
        resolve_defaults(args)
    except ValueError as error:
        parser.error(str(error))

    def job():
        with ending_on_sigterm():  # SIGTERM ends the run at any stage, releasing run.lock
            try:
                return run(build_model, args)
            except (training.TrainingInterrupted, Terminated) as interrupted:  # checkpointed
                print(f"\n{args.recipe}: {interrupted}", file=sys.stderr, flush=True)
                sys.exit(interrupted.exit_code)

    return exit_on_user_error(job, prog=parser.prog, debug=args.debug)


def written_files(files, model_file=MODEL_FILE):
    """The names the final line lists: what this run wrote, given the report's `files` and
    the model file delivered."""
    names = [
        model_file,
        METRICS_FILE,
        TRANSLATIONS_FILE.format(split="*", search="*"),
        BLEU_BY_LENGTH.format(extension="png"),
    ]
    if files.get("attention_png"):
        names.append(ATTENTION_PLOT.format(index="*"))
    if files.get("serving"):
        names.append(SERVING_DIR + "/")
    return names + [LOG_DIR + "/"]


def _optimizer_note(args, steps_per_epoch, dropout):
    note = OPTIMIZER_DESCRIPTIONS[args.optimizer]
    after = args.decay_after
    if after is None and args.optimizer == "luong":
        after = training.luong_decay_after(dropout)
    if after is not None:
        note += f"; here: halving after epoch {after}, {steps_per_epoch} steps per epoch"
    if args.learning_rate is not None:
        note += f"; initial learning rate set to {args.learning_rate}"
    note += f"; loss normalised per {args.loss_normalization[:-1]}"
    return f"Optimizer: {note}"  # the description names its source


def _duration(seconds):
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


def run(build_model, args):
    """Runs a recipe on parsed, resolved arguments (see `main`); returns the metrics dict."""
    started = time.perf_counter()
    training.check_training_backend()  # before the data: PyTorch trains with model.fit
    strategy = training.make_strategy(args.strategy)
    chief = training.is_chief(strategy)
    say = _Say(chief)
    keras.utils.set_random_seed(args.seed)
    if args.deterministic:
        tf.config.experimental.enable_op_determinism()
    if args.precision == training.AUTO:
        args.precision, why = training.auto_precision()
        say(f"Precision: {args.precision} (--precision auto: {why})")
    previous_precision = training.set_precision(args.precision)
    try:
        return _run(build_model, args, strategy, chief, say, started)
    finally:
        training.set_precision(previous_precision)


def _run(build_model, args, strategy, chief, say, started):
    out = os.path.abspath(args.out)
    lock = contextlib.nullcontext()
    if chief:
        os.makedirs(out, exist_ok=True)
        lock = OutLock(out)  # one run at a time in `out`, refused at once otherwise
    with lock:
        return _locked_run(build_model, args, strategy, chief, say, started, out)


def _locked_run(build_model, args, strategy, chief, say, started, out):
    record = RunRecord(out, args, say, enabled=chief)
    record.check_settings()
    say(f"{args.recipe}: size {args.size}, precision {args.precision}, output {out}")
    train, val, test, files = recipe_data.load_splits(args, say)
    record.check_corpus(files)
    record.phase_done("data")
    tokenizers = recipe_data.tokenizers(args, train, out, chief, say)
    record.phase_done("tokenizers")
    say(
        f"Vocabularies: {tokenizers[0].vocab_size} ({args.source_lang}), "
        f"{tokenizers[1].vocab_size} ({args.target_lang})"
    )
    train_data, val_data, steps_per_epoch, data_callbacks = recipe_data.pipelines(
        args, train, val, tokenizers, out, chief, say
    )
    record.phase_done("pipelines")
    steps_per_epoch = training.updates_per_epoch(steps_per_epoch, args.accumulate_steps)
    with strategy.scope():
        model = apply_model_flags(
            build_model(args, tokenizers[0].vocab_size, tokenizers[1].vocab_size), args
        )
        if args.init_from:  # fine-tuning (a resumed run's checkpoint replaces these)
            init_weights(model, args, say)
        dropout = model_dropout(model)
        optimizer = training.make_optimizer(
            args.optimizer,
            steps_per_epoch=steps_per_epoch,
            dropout=dropout,
            learning_rate=args.learning_rate,
            decay_after_epochs=args.decay_after,
        )
    say(f"Model {model.name}: {int(model.count_params()):,} parameters")
    say(_optimizer_note(args, steps_per_epoch, dropout))
    data = (train_data, val_data, steps_per_epoch)
    options = training_options(args, val, tokenizers)  # accumulation, early stopping
    summary = _train(args, model, optimizer, data, strategy, out, say, data_callbacks, options)
    record.phase_done("training")
    if not chief:
        return {"training": summary}
    from zoo.workflow.report import select_model  # noqa: PLC0415 (needs the translator)

    translator, selection = select_model(
        summary["model_path"],
        out,
        val,
        tokenizers,
        average_last=args.average_last,
        best_by=args.validation_metric,
        translator_settings=_translator_settings(args),
        say=say,
        progress=say.enabled,
    )
    report = _report(args, translator, test, tokenizers, out, say, selection["model_file"])
    record.phase_done("evaluation")
    metrics = _metrics(args, model, summary, report, time.perf_counter() - started)
    metrics["selection"] = selection
    metrics["peak_memory_mib"] = dict(record.record["peak_memory_mib"])
    write_json(os.path.join(out, METRICS_FILE), metrics)
    say(record.memory_line())
    beam, greedy = report["beam"], report["greedy"]
    say(
        f"{args.recipe}: BLEU {beam['bleu']:.2f} (beam {args.beam_size}), "
        f"{greedy['bleu']:.2f} (greedy), chrF {beam['chrf']:.2f} on {args.data} "
        f"{args.test_split} {args.source_lang}->{args.target_lang} after "
        f"{summary['epochs']:.2f} epochs ({summary['steps']} steps, "
        f"{_duration(summary['train_time_s'])} training); files in {out}/ "
        f"({', '.join(written_files(report['files'], selection['model_file']))})"
    )
    return metrics


def _train(args, model, optimizer, data, strategy, out, say, callbacks, options):
    train_data, val_data, steps_per_epoch = data
    cap = f", at most {args.max_steps} steps" if args.max_steps else ""
    if args.label_smoothing:
        cap += f", label smoothing {args.label_smoothing}"
    if args.early_stopping:
        cap += f", early stopping after {args.early_stopping} epoch(s) without a better "
        cap += f"validation {args.validation_metric}"
    unit = "batches" if args.accumulate_steps == 1 else f"steps of {args.accumulate_steps} batches"
    say(
        f"Training: {args.epochs} epochs of {steps_per_epoch} {unit} of {args.batch_size} "
        f"pairs{cap}; checkpoints every {args.checkpoint_every} steps in {out}/checkpoints"
    )
    summary = training.train(
        model,
        train_data,
        val_data,
        out_dir=out,
        optimizer=optimizer,
        epochs=args.epochs,
        max_minutes=args.max_minutes or 0,  # its TimeLimit and halving plan; 0: no limit
        max_steps=args.max_steps,
        steps_per_epoch=steps_per_epoch,
        checkpoint_every=args.checkpoint_every,
        keep_checkpoints=args.keep_checkpoints,
        resume=args.resume,
        strategy=strategy,
        jit_compile=args.jit_compile,
        label_smoothing=args.label_smoothing,
        loss_normalization=args.loss_normalization,
        callbacks=callbacks or None,
        **options,
        verbose=1 if say.enabled else 0,  # the chief's progress bar
    )
    return summary  # its "time_plan": the halving plan fitted to the time limit, or None


def _translator_settings(args):
    return dict(
        beam_size=args.beam_size,
        length_penalty=args.length_penalty,
        coverage_penalty=args.coverage_penalty,
        batch_size=args.eval_batch_size,
    )


def _report(args, translator, test, tokenizers, out, say, model_file):
    """Scores the chosen model on the test split and writes the report files and serving/."""
    return evaluate_and_report(
        translator.model,
        translator,
        test,
        *tokenizers,
        out=out,
        beam_size=args.beam_size,
        length_penalty=args.length_penalty,
        batch_size=args.eval_batch_size,
        attention_plots=args.attention_plots,
        export=not args.no_export,
        say=say,
        metadata={
            "recipe": args.recipe,
            "data": args.data,
            "source_lang": args.source_lang,
            "target_lang": args.target_lang,
            "model_file": model_file,
        },
    )


def _metrics(args, model, summary, report, wall_time_s):
    """The metrics.json of a run."""
    beam, greedy = report["beam"], report["greedy"]
    return {
        "recipe": args.recipe,
        "model": model.name,
        "data": args.data,
        "source_lang": args.source_lang,
        "target_lang": args.target_lang,
        "test_split": args.test_split,
        "size": args.size,
        "parameters": int(model.count_params()),
        "bleu": beam["bleu"],
        "chrf": beam["chrf"],
        "bleu_greedy": greedy["bleu"],
        "chrf_greedy": greedy["chrf"],
        "bleu_signature": beam["bleu_signature"],
        "chrf_signature": beam["chrf_signature"],
        "beam_size": args.beam_size,
        "ppl": report["test"]["ppl"],
        "train_time_s": summary["train_time_s"],
        "steps": summary["steps"],
        "epochs": summary["epochs"],
        "tokens_per_s": summary["tokens_per_s"],
        "wall_time_s": wall_time_s,
        "test": report["test"],
        "greedy": greedy,
        "beam": beam,
        "training": summary,
        "bleu_by_length": report["bleu_by_length"],
        "files": report["files"],
        "args": vars(args),
    }
