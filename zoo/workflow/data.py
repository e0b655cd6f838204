"""A recipe's data: the splits, the tokenizers and the tf.data pipelines.

Two paths, chosen by `--streaming` (zoo.workflow.flags):
- in memory (`zoo.data.load_corpus` + `make_dataset`): the corpus in lists, tokenized once
  and cached, shuffled whole. Multi30k and the Anki corpora take it under "auto".
- streamed (`zoo.data.open_stream` + `stream_dataset`): the training files are read from
  disk each epoch, shuffled in a bounded buffer, batched in sorted pools; memory does not
  grow with the corpus. The validation and test splits are read whole (they are small).
  The counting pass (`count_stream`: kept and dropped pairs, batches per epoch) runs once and
  is cached in `<out>/stream_counts.json` beside the vocabulary; `--steps-per-epoch` skips it,
  and a `StreamCounter` then counts the drops as the first epoch reads the stream.
"""

import hashlib
import json
import os
import shutil

import keras
import tensorflow as tf

from zoo.data import (
    StreamCounter,
    StreamedCorpus,
    check_files,
    count_stream,
    load_corpus,
    materialise,
    open_stream,
    report_drops,
    stream_steps,
    total_bytes,
    worker_stream,
)
from zoo.data.files import MissingDataError, recording_reads
from zoo.data.registry import tfds_name
from zoo.json_files import write_json
from zoo.text import load_tokenizer, train_tokenizer
from zoo.training import PerWorkerDataset
from zoo.translator import SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR
from zoo.workflow.flags import STREAM_ABOVE_MIB, subword_regularization
from zoo.workflow.report import VOCABULARY_FILE, write_lines
from zoo.workflow.starting_points import init_tokenizers, report_unknown

STREAM_ABOVE_BYTES = STREAM_ABOVE_MIB * 2**20  # Multi30k's training files hold 4 MB
COUNTS_FILE = "stream_counts.json"


def wants_stream(args):
    """Whether the run streams its training split (--streaming on|off|auto)."""
    if args.streaming != "auto":
        return args.streaming == "on"
    if tfds_name(args.data, args.source_lang, args.target_lang) is not None:
        return True
    if "{split}" not in args.data:
        return False
    try:
        stream = open_stream(args.data, args.source_lang, args.target_lang, "train")
    except MissingDataError:  # load_corpus says what is missing
        return False
    return any(p.endswith(".gz") for p in stream.paths()) or total_bytes(stream) > (
        STREAM_ABOVE_BYTES
    )


def load_splits(args, say):
    """(train, val, test, files): `Corpus` objects, or for a streamed run a `StreamedCorpus`
    train split beside in-memory val and test splits; `files`, the corpus files the training
    and validation splits were read from (absolute paths, for their fingerprints). A streamed
    training split's files are checked first (`check_files`: a truncated gzip file, CR-only
    line ends), so that no part of the run reads them unchecked."""
    streaming = wants_stream(args)

    def load(split, limit):
        if streaming:
            corpus = materialise(open_stream(args.data, args.source_lang, args.target_lang, split))
        else:
            corpus = load_corpus(args.data, args.source_lang, args.target_lang, split)
        return corpus.take(limit) if limit else corpus

    with recording_reads() as files:
        if streaming:
            if args.train_limit:
                raise ValueError(
                    "--train-limit applies to corpora read in memory (--streaming off)."
                )
            train = open_stream(args.data, args.source_lang, args.target_lang, "train")
            check_files(train)
            size = f"streamed from {', '.join(train.paths()) or train.name}"
        else:
            train = load("train", args.train_limit)
            size = f"{len(train)} training"
        val = load("val", args.eval_limit)
    test = load(args.test_split, args.eval_limit)
    say(
        f"Data: {args.data} {args.source_lang}->{args.target_lang}: {size}, "
        f"{len(val)} validation, {len(test)} test ({args.test_split}) pairs"
    )
    return train, val, test, files


def _tokenizer_sentences(args, train, say):
    """The sentences each tokenizer trains on: all of an in-memory split, else a seeded
    sample of at most --tokenizer-sample pairs (both in memory and streamed)."""
    if isinstance(train, StreamedCorpus):
        say(f"Tokenizers: sampling at most {args.tokenizer_sample:,} pairs of the stream")
    return train.sample(args.tokenizer_sample, seed=args.seed)


def tokenizers(args, train, out, chief, say):
    """The two tokenizers: reused from `out` on resume, else trained and saved there. With
    --shared-vocabulary one tokenizer trained on both sides of the sampled pairs, saved as
    both source_tokenizer/ and target_tokenizer/ (the same files)."""
    directories = [os.path.join(out, SOURCE_TOKENIZER_DIR), os.path.join(out, TARGET_TOKENIZER_DIR)]
    if args.resume and all(os.path.exists(d) for d in directories):
        say(f"Tokenizers: reusing {directories[0]} and {directories[1]}")
        return [load_tokenizer(d) for d in directories]
    sides = _tokenizer_sentences(args, train, say)
    if getattr(args, "init_from", None):  # fine-tuning keeps the model's vocabulary
        made = init_tokenizers(args, out, chief, say)
        report_unknown(args, sides, made, say)
        if chief:
            for lang, tokenizer in zip((args.source_lang, args.target_lang), made, strict=True):
                _write_vocabulary(tokenizer, os.path.join(out, VOCABULARY_FILE.format(lang=lang)))
        return made
    if getattr(args, "shared_vocabulary", False):
        return _shared_tokenizer(args, sides, directories, out, chief, say)
    made = []
    for lang, sentences, directory in zip(
        (args.source_lang, args.target_lang), sides, directories, strict=True
    ):
        say(f"Tokenizer: training a {args.vocab_size}-piece {args.tokenizer} model for {lang!r}")
        tokenizer = train_tokenizer(
            args.tokenizer,
            sentences,
            vocab_size=args.vocab_size,
            lowercase=args.lowercase,
            seed=args.seed,
        )
        if chief:
            shutil.rmtree(directory, ignore_errors=True)
            tokenizer.save(directory)
            _write_vocabulary(tokenizer, os.path.join(out, VOCABULARY_FILE.format(lang=lang)))
        made.append(tokenizer)
    return made


def _shared_tokenizer(args, sides, directories, out, chief, say):
    """[tokenizer, tokenizer]: one model trained on the source and target sentences together
    (Press and Wolf 2017's shared vocabulary), saved in both tokenizer directories."""
    langs = f"{args.source_lang!r} and {args.target_lang!r}"
    say(f"Tokenizer: training one {args.vocab_size}-piece {args.tokenizer} model for {langs}")
    source, target = sides
    tokenizer = train_tokenizer(
        args.tokenizer,
        [*source, *target],
        vocab_size=args.vocab_size,
        lowercase=args.lowercase,
        seed=args.seed,
    )
    if chief:
        for directory, lang in zip(directories, (args.source_lang, args.target_lang), strict=True):
            shutil.rmtree(directory, ignore_errors=True)
            tokenizer.save(directory)
            _write_vocabulary(tokenizer, os.path.join(out, VOCABULARY_FILE.format(lang=lang)))
    return [tokenizer, tokenizer]


def _vocabulary(tokenizer):
    """The tokens of ids 0 .. vocab_size - 1, as bytes."""
    return list(tokenizer.id_to_token(tf.range(tokenizer.vocab_size, dtype=tf.int32)).numpy())


def _vocabulary_hash(tokenizer):
    return hashlib.sha1(b"\n".join(_vocabulary(tokenizer))).hexdigest()


def _write_vocabulary(tokenizer, path):
    write_lines(path, [t.decode("utf-8", "replace") for t in _vocabulary(tokenizer)])


def pipelines(args, train, val, tokenizers, out, chief, say):
    """(train_data(epoch) -> dataset, val_data, steps per epoch or None, callbacks): the
    callbacks (for `zoo.training.train`) report what the data pipeline saw while training.

    A streamed corpus under --strategy multiworker gives `PerWorkerDataset`s: each worker
    reads its own shard, the same number of steps as the others (zoo.data.worker_stream)."""

    def dataset(corpus, **kwargs):
        return corpus.dataset(*tokenizers, batch_size=args.batch_size, **kwargs)

    val_data = dataset(val, max_length=None, shuffle=False, batching="plain")  # exact pieces
    sampling = dict(subword_regularization=subword_regularization(args, tokenizers))
    if isinstance(train, StreamedCorpus):
        return _streamed(args, train, tokenizers, out, chief, say, val_data, sampling)

    def epoch_data(epoch):  # seeded per epoch: a resumed run sees the same batches
        return dataset(
            train,
            max_length=args.max_length,
            shuffle=True,
            seed=args.seed + epoch,
            batching=args.batching,
            pool_batches=args.pool_batches,
            log_drops=epoch == 0,  # later epochs drop the same pairs: said once
            **sampling,
        )

    first_epoch = epoch_data(0)

    def train_data(epoch):
        return first_epoch if epoch == 0 else epoch_data(epoch)

    return train_data, val_data, len(first_epoch), []


def _streamed(args, train, tokenizers, out, chief, say, val_data, sampling):
    """`pipelines` for a streamed training split. The drops are reported before training
    by the counting pass, or with --steps-per-epoch (no count) after the first epoch, from
    what it read (on one worker; under multiworker only the counting pass reports them)."""
    counts = None
    steps = args.steps_per_epoch
    if steps is None:
        counts = _counts(args, train, tokenizers, out, chief, say)
        steps = stream_steps(counts, args.batch_size, args.batching)
    counter = None
    if counts is None and args.strategy != "multiworker":
        counter = StreamCounter(args.max_length)

    def options(epoch):  # seeded per epoch: a resumed run reads the same batches
        return dict(
            max_length=args.max_length,
            shuffle=True,
            seed=args.seed + epoch,
            batching=args.batching,
            pool_batches=args.pool_batches,
            shuffle_buffer=args.shuffle_buffer,
            **sampling,
        )

    if args.strategy == "multiworker":
        say(f"Stream: each worker reads its shard, {steps:,} steps per epoch on every worker")

        def train_data(epoch):
            make = worker_stream(
                train, *tokenizers, batch_size=args.batch_size, steps=steps, **options(epoch)
            )
            return PerWorkerDataset(make, steps)

        return train_data, val_data, steps, []

    def train_data(epoch):
        return train.dataset(
            *tokenizers, batch_size=args.batch_size, counts=counts, counter=counter,
            **options(epoch),
        )  # fmt: skip

    callbacks = [] if counter is None else [_DropReport(counter, f"{args.data} train", say)]
    return train_data, val_data, steps, callbacks


class _DropReport(keras.callbacks.Callback):
    """Reports, at the end of the first epoch a run trains (or at the end of training when
    that comes first), the pairs its stream has read so far and what the length filter
    dropped of them (`report_drops`' warning and one line)."""

    def __init__(self, counter, what, say):
        super().__init__()
        self.counter, self.what, self.say = counter, what, say
        self.done = False

    def on_epoch_end(self, epoch, logs=None):
        self._report(f"epoch {epoch + 1}")

    def on_train_end(self, logs=None):
        self._report("end of training")

    def _report(self, when):
        if self.done:
            return
        self.done = True
        counts = self.counter.counts()
        self.say(
            f"Stream, {when}: read {counts['pairs']:,} pairs so far; kept {counts['kept']:,} "
            f"({counts['too_long']:,} longer than {counts['max_length']} tokens, "
            f"{counts['empty']:,} without tokens)"
        )
        if counts["pairs"]:
            report_drops(counts, self.what)


def _counts(args, train, tokenizers, out, chief, say):
    """`count_stream` of the training split, cached in `out/stream_counts.json` for these
    files (sizes, modification times), tokenizers and --max-length."""
    key = {
        "files": train.fingerprint(),
        "max_length": args.max_length,
        "vocabularies": [_vocabulary_hash(t) for t in tokenizers],
    }
    path = os.path.join(out, COUNTS_FILE)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            cached = json.load(f)
        if cached.get("key") == key:
            say(f"Stream: {cached['counts']['kept']:,} training pairs (counted before: {path})")
            report_drops(cached["counts"], f"{args.data} train")
            return cached["counts"]
    say("Stream: counting the training pairs (one pass; cached for later runs)")
    counts = count_stream(train, *tokenizers, args.max_length)
    report_drops(counts, f"{args.data} train")
    say(
        f"Stream: kept {counts['kept']:,} of {counts['pairs']:,} pairs ({counts['too_long']:,} "
        f"longer than {args.max_length} tokens, {counts['empty']:,} without tokens)"
    )
    if chief:
        write_json(path, {"key": key, "counts": counts})
    return counts
