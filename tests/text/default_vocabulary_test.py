"""The default tokenizer (`zoo.text.DEFAULT_KIND`, `DEFAULT_VOCAB_SIZE`) is stated once: the
tokenizers, the tuner, the recipes' flags and the benchmarks take it, and the guides that
name it state the same value."""

import argparse
import inspect
from pathlib import Path

from zoo import data, text, tuning
from zoo.workflow.flags import add_data_flags

REPO = Path(__file__).resolve().parents[2]


def default(function, name):
    return inspect.signature(function).parameters[name].default


def test_the_library_takes_one_vocabulary_size():
    assert text.DEFAULT_KIND in text.KINDS
    for function in (
        text.SentencePieceTokenizer.train,
        text.WordPieceTokenizer.train,
        tuning.tune,
    ):
        assert default(function, "vocab_size") == text.DEFAULT_VOCAB_SIZE, function


def test_the_data_flags_render_the_library_defaults():
    parser = argparse.ArgumentParser()
    add_data_flags(parser)
    args = parser.parse_args([])
    assert (args.tokenizer, args.vocab_size) == (text.DEFAULT_KIND, text.DEFAULT_VOCAB_SIZE)
    assert (args.max_length, args.batching, args.pool_batches) == (
        data.DEFAULT_MAX_LENGTH,
        data.DEFAULT_BATCHING,
        data.DEFAULT_POOL_BATCHES,
    )
    help_text = " ".join(parser.format_help().split())
    assert f"(default: {text.DEFAULT_VOCAB_SIZE};" in help_text
    assert f"length buckets of width {data.DEFAULT_BUCKET_WIDTH};" in help_text


def test_both_pipelines_share_their_defaults():
    shared = {
        "batch_size": data.DEFAULT_BATCH_SIZE,
        "max_length": data.DEFAULT_MAX_LENGTH,
        "batching": data.DEFAULT_BATCHING,
        "pool_batches": data.DEFAULT_POOL_BATCHES,
        "bucket_width": data.DEFAULT_BUCKET_WIDTH,
    }
    for function in (data.make_dataset, data.stream_dataset):
        assert {name: default(function, name) for name in shared} == shared, function
    assert default(data.stream_steps, "batching") == data.DEFAULT_BATCHING
    assert default(data.stream_steps, "bucket_width") == data.DEFAULT_BUCKET_WIDTH
    assert data.DEFAULT_BATCHING in data.BATCHINGS


def test_the_guides_state_the_library_defaults():
    corpora = " ".join((REPO / "docs" / "corpora.md").read_text(encoding="utf-8").split())
    assert f"`--vocab-size` (default {text.DEFAULT_VOCAB_SIZE})" in corpora
    assert f"`{text.DEFAULT_KIND}` (default," in corpora
    training = " ".join((REPO / "docs" / "training.md").read_text(encoding="utf-8").split())
    assert f"`--vocab-size` ({text.DEFAULT_VOCAB_SIZE})" in training
    assert f"`--max-length` ({data.DEFAULT_MAX_LENGTH}," in training
