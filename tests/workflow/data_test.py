"""zoo.workflow.data: a streamed run without the counting pass reports its drops after the
first epoch, from what the epoch read."""

import logging

from zoo.data import open_stream
from zoo.workflow import add_mode_argument, make_parser, resolve_defaults
from zoo.workflow import data as recipe_data


def test_steps_per_epoch_stream_reports_its_drops_after_the_first_epoch(
    tmp_path, small_corpus, tokenizer_pair, caplog
):
    for lang, lines in (("de", small_corpus.source), ("en", small_corpus.target)):
        for split in ("train", "val"):
            (tmp_path / f"{split}.{lang}").write_text("\n".join(lines[:200]) + "\n")
    parser = make_parser("luong_base", "luong")
    add_mode_argument(parser)
    argv = ["--data", str(tmp_path / "{split}"), "--source-lang", "de", "--target-lang", "en",
            "--streaming", "on", "--steps-per-epoch", "3",
            "--batch-size", "8", "--max-length", "16", "--shuffle-buffer", "16"]  # fmt: skip
    args = resolve_defaults(parser.parse_args(argv))
    train = open_stream(args.data, "de", "en", "train")
    val = small_corpus.take(8)
    said = []
    train_data, _, steps, callbacks = recipe_data.pipelines(
        args, train, val, tokenizer_pair, str(tmp_path / "out"), True, said.append
    )
    assert steps == 3 and len(callbacks) == 1
    assert not (tmp_path / "out" / "stream_counts.json").exists()  # no counting pass
    trained = sum(len(y) for _, y in train_data(0))  # an epoch ends where the data ends
    with caplog.at_level(logging.WARNING, logger="zoo.data"):
        callbacks[0].on_epoch_end(0)
        callbacks[0].on_epoch_end(1)  # once only
        callbacks[0].on_train_end()
    (line,) = [s for s in said if s.startswith("Stream, epoch 1: read ")]
    counts = callbacks[0].counter.counts()
    assert counts["pairs"] == 200 and counts["kept"] == trained
    assert 0 < counts["too_long"] == 200 - trained - counts["empty"]
    assert f"kept {counts['kept']:,} ({counts['too_long']:,} longer than 16 tokens" in line
    (warning,) = [r.getMessage() for r in caplog.records]
    assert f"kept {counts['kept']} of {counts['pairs']} pairs" in warning


def test_an_in_memory_corpus_logs_its_drops_once_not_every_epoch(
    tmp_path, small_corpus, tokenizer_pair, caplog
):
    parser = make_parser("luong_base", "luong")
    add_mode_argument(parser)
    args = resolve_defaults(parser.parse_args(["--batch-size", "8", "--max-length", "12"]))
    train, val = small_corpus.take(64), small_corpus.take(8)
    with caplog.at_level(logging.WARNING, logger="zoo.data"):
        train_data, _, _, _ = recipe_data.pipelines(
            args, train, val, tokenizer_pair, str(tmp_path / "out"), True, print
        )
        train_data(1), train_data(2)
    drops = [
        r.getMessage() for r in caplog.records if "with more than max_length=12" in r.getMessage()
    ]
    assert len(drops) == 1, drops  # epoch 1's dataset; later epochs drop the same pairs
    assert logging.getLogger("zoo.data").level == logging.NOTSET  # restored after each epoch


def test_tokenizers_train_on_all_of_multi30k_and_a_bounded_sample_of_a_larger_stream(
    tmp_path, multi30k_train, small_corpus
):
    parser = make_parser("luong_base", "luong")
    args = resolve_defaults(parser.parse_args([]))
    # The main job's tokenizers see every Multi30k training pair, in order: the bound is above.
    sources, targets = recipe_data._tokenizer_sentences(args, multi30k_train, print)
    assert (sources, targets) == (multi30k_train.source, multi30k_train.target)
    assert args.tokenizer_sample > len(multi30k_train)
    for lang, lines in (("de", small_corpus.source), ("en", small_corpus.target)):
        (tmp_path / f"train.{lang}").write_text("\n".join(lines) + "\n")
    stream = open_stream(str(tmp_path / "{split}"), "de", "en", "train")
    args = resolve_defaults(parser.parse_args(["--tokenizer-sample", "50"]))
    sources, targets = recipe_data._tokenizer_sentences(args, stream, print)
    pairs = set(zip(small_corpus.source, small_corpus.target, strict=True))
    assert len(sources) == 50 and set(zip(sources, targets, strict=True)) <= pairs
