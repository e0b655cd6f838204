"""`TranslationHyperModel`: the keras-tuner HyperModel of zoo's translation models."""

import os
import tempfile

import keras
import keras_tuner
import numpy as np
import tensorflow as tf

from zoo import models, text, training
from zoo.data import encode_source
from zoo.evaluation import corpus_scores
from zoo.search import defaults as search_defaults
from zoo.search import search
from zoo.tuning import space

OBJECTIVES = {"val_loss": "min", "val_bleu": "max"}


def _trial_epochs(x, steps_per_epoch, initial_epoch):
    """`x` for `zoo.training.train`: itself per epoch, or with `steps_per_epoch`, epoch e is
    the next `steps_per_epoch` batches of `x` repeated (epoch e re-reads the e earlier
    epochs' batches to skip them: cheap for the few epochs of a trial)."""
    if not steps_per_epoch:
        return x
    return lambda epoch: (
        x.repeat().skip((initial_epoch + epoch) * steps_per_epoch).take(steps_per_epoch)
    )


class TranslationHyperModel(keras_tuner.HyperModel):
    """Builds, compiles and trains one translation model per trial of a keras-tuner search.

    The space (`zoo.tuning.space`): attention family and variant (Bahdanau et al. 2014 §3.1;
    Luong et al. 2015 §3.1 global dot/general/concat/location, §3.2 local-m/local-p with
    window D), input feeding (Luong §3.3), embedding and hidden sizes around the `size`
    preset, layers, dropout, optimizer and learning rate. Models come from
    `zoo.models.build(preset, size, ..., **overrides)` and are compiled with
    `zoo.training.keras_loss()` and `zoo.training.make_optimizer`.

    `fit(hp, model, x, validation_data, epochs, steps_per_epoch)` trains with
    `zoo.training.train`, the recipes' own training step (loss normalisation of the trial's
    optimizer, global-norm clipping after the all-reduce, loss scaling), with the tuner's
    callbacks (x and validation_data: tf.data sets, or zero-argument functions that make
    them inside the trial, after keras-tuner's `clear_session`), and then returns, for the
    tuner, a dict of validation metrics over the whole `validation_data` (token-weighted):
    `val_loss`, `val_perplexity`, `val_accuracy`, and with `objective="val_bleu"` also
    `val_bleu`: sacreBLEU (13a, cased) of greedy translations (`zoo.search.search`,
    detokenised by `target_tokenizer`) of `bleu_sources` against `bleu_references`.

    Args:
        source_vocab_size, target_vocab_size: vocabulary sizes (ids 0-3 reserved).
        size: "tiny", "base" or "paper": the preset sizes the space is centred on.
        fixed: `{dimension: value}` held fixed (see `space.parse_fixed` for `--fix`).
        objective: "val_loss" (minimised) or "val_bleu" (maximised).
        max_source_length: longest source sentence in tokens (location attention needs it).
        source_tokenizer, target_tokenizer: `zoo.text` tokenizers or the directories they
            were saved in (needed for `objective="val_bleu"`). Pass directories when a tuner
            runs several trials: keras-tuner calls `keras.backend.clear_session()` before
            each trial, which frees the tokenizers' TensorFlow resources (SentencePiece), so
            each trial loads them anew (`tokenizers()`).
        bleu_sources, bleu_references: lists of str, for `objective="val_bleu"`.
        steps_per_epoch: optimizer steps per epoch, for the "luong" optimizer's schedule
            (halving after epoch 5 or 8); None counts 1000 steps as an epoch.
        seed: weights are initialised from this seed in every trial.
        jit_compile: compile training steps with XLA (`model.compile(jit_compile=...)`);
            off by default, since compiling recurrent steps costs more than a short trial.
        verbose: `model.fit` verbosity.

    Example:
        >>> hypermodel = TranslationHyperModel(500, 500, size="tiny",
        ...                                    fixed={"attention": "luong_local_p_general"})
        >>> tuner = keras_tuner.RandomSearch(hypermodel, objective=keras_tuner.Objective(
        ...     "val_loss", "min"), max_trials=3, directory="runs/tune")
        >>> tuner.search(train_ds, validation_data=val_ds, epochs=1)  # doctest: +SKIP
    """

    def __init__(
        self,
        source_vocab_size,
        target_vocab_size,
        size="tiny",
        fixed=None,
        objective="val_loss",
        max_source_length=None,
        source_tokenizer=None,
        target_tokenizer=None,
        bleu_sources=None,
        bleu_references=None,
        bleu_batch_size=search_defaults.BATCH_SIZE,
        steps_per_epoch=None,
        seed=0,
        jit_compile=False,
        verbose=0,
    ):
        super().__init__(name="translation")
        if objective not in OBJECTIVES:
            raise ValueError(
                f"Unknown objective {objective!r}; expected one of {list(OBJECTIVES)}."
            )
        if size not in space.SIZES:
            raise ValueError(f"Unknown size {size!r}; expected one of {space.SIZES}.")
        if objective == "val_bleu":
            missing = [
                label
                for label, value in (
                    ("source_tokenizer", source_tokenizer),
                    ("target_tokenizer", target_tokenizer),
                    ("bleu_sources", bleu_sources),
                    ("bleu_references", bleu_references),
                )
                if value is None
            ]
            if missing:
                raise ValueError(f"objective='val_bleu' needs {', '.join(missing)}; got None.")
            if len(bleu_sources) != len(bleu_references) or not bleu_sources:
                raise ValueError(
                    f"bleu_sources ({len(bleu_sources)}) and bleu_references "
                    f"({len(bleu_references)}) must be non-empty and of equal length."
                )
        self.source_vocab_size = source_vocab_size
        self.target_vocab_size = target_vocab_size
        self.size = size
        self.fixed = space.check_fixed(fixed or {})
        self.objective = objective
        self.max_source_length = max_source_length
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.bleu_sources = None if bleu_sources is None else list(bleu_sources)
        self.bleu_references = None if bleu_references is None else list(bleu_references)
        self.bleu_batch_size = int(bleu_batch_size)
        self.steps_per_epoch = steps_per_epoch
        self.seed = seed
        self.jit_compile = jit_compile
        self.verbose = verbose

    def declare_hyperparameters(self, hp):
        space.declare(hp, self.size, self.fixed)

    def values(self, hp):
        """The active hyperparameter values of `hp` (declaring the space on it if needed)."""
        return space.declare(hp, self.size, self.fixed)

    def build_model(self, values, compile=True):
        """The model of the active `values` (a dict from `values(hp)`), compiled or not."""
        preset, overrides = space.model_arguments(values, self.size, self.max_source_length)
        keras.utils.set_random_seed(self.seed)
        model = models.build(
            preset,
            self.size,
            source_vocab_size=self.source_vocab_size,
            target_vocab_size=self.target_vocab_size,
            **overrides,
        )
        if compile:
            name, learning_rate = space.optimizer_arguments(values)
            optimizer = training.make_optimizer(
                name,
                steps_per_epoch=self.steps_per_epoch or 1000,
                dropout=overrides.get("dropout", 0.0),
                learning_rate=learning_rate,
            )
            model.compile(
                optimizer=optimizer,
                loss=training.keras_loss(),
                jit_compile=self.jit_compile,
            )
        return model

    def build(self, hp):
        return self.build_model(self.values(hp))

    def fit(
        self,
        hp,
        model,
        x,
        validation_data=None,
        epochs=1,
        steps_per_epoch=None,
        initial_epoch=0,
        callbacks=None,
        verbose=None,
        **kwargs,
    ):
        if callable(x):
            x = x()
        if callable(validation_data):
            validation_data = validation_data()
        if validation_data is None:
            raise ValueError("TranslationHyperModel.fit needs validation_data (a tf.data set).")
        if kwargs:
            raise ValueError(f"Unexpected fit arguments {sorted(kwargs)}.")
        if epochs <= initial_epoch:  # nothing left to train (as model.fit)
            stats = training.evaluate(model, validation_data)
            return self._metrics(model, stats["loss"], stats["ppl"], stats["accuracy"])
        name, _ = space.optimizer_arguments(self.values(hp))
        with tempfile.TemporaryDirectory() as out:  # the trial's checkpoints, not kept
            summary = training.train(
                model,
                _trial_epochs(x, steps_per_epoch, initial_epoch),
                validation_data,
                out_dir=os.path.join(out, "trial"),
                optimizer=model.optimizer,
                epochs=epochs - initial_epoch,
                steps_per_epoch=steps_per_epoch,
                loss_normalization=training.default_loss_normalization(name),
                jit_compile=self.jit_compile,
                callbacks=callbacks,
                resume=False,
                verbose=self.verbose if verbose is None else verbose,
            )
        # The best epoch's figures: keras-tuner keeps that epoch's weights (SaveBestEpoch).
        best = min(summary["history"], key=lambda r: np.nan_to_num(r["val_loss"], nan=np.inf))
        return self._metrics(model, best["val_loss"], best["val_ppl"], best["val_accuracy"])

    def _metrics(self, model, loss, ppl, accuracy):
        """The dict `fit` returns to the tuner (an infinite loss for a non-finite one)."""
        metrics = {
            "val_loss": float(loss) if np.isfinite(loss) else float("inf"),
            "val_perplexity": float(ppl),
            "val_accuracy": float(accuracy),
        }
        if self.objective == "val_bleu":
            metrics["val_bleu"] = self.bleu(model)
        return metrics

    def tokenizers(self):
        """`(source_tokenizer, target_tokenizer)`, loaded anew when given as directories."""
        return tuple(
            None if t is None else t if isinstance(t, text.Tokenizer) else text.load_tokenizer(t)
            for t in (self.source_tokenizer, self.target_tokenizer)
        )

    def translate(self, model, sentences):
        """Greedy translations (detokenised str) of `sentences` by `model`."""
        source_tokenizer, target_tokenizer = self.tokenizers()
        translations = []
        for start in range(0, len(sentences), self.bleu_batch_size):
            batch = tf.constant(sentences[start : start + self.bleu_batch_size], tf.string)
            source_ids = encode_source(source_tokenizer, batch)
            result = search(model, source_ids, beam_size=1, return_attention=False)
            texts = target_tokenizer.detokenize(result.ids).numpy()
            translations.extend(t.decode("utf-8") for t in texts)
        return translations

    def bleu(self, model):
        """sacreBLEU of greedy translations of `bleu_sources` against `bleu_references`."""
        hypotheses = self.translate(model, self.bleu_sources)
        return float(corpus_scores(hypotheses, self.bleu_references)["bleu"])
