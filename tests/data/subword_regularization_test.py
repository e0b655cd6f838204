"""Subword regularisation: the training pairs' SentencePiece segmentations sampled in the
tf.data graph (make_dataset, stream_dataset, --subword-regularization), the exact ones
elsewhere, and the pipelines unchanged when it is off."""

import json
import runpy
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.data import count_stream, encode_source, make_dataset, open_stream, stream_dataset
from zoo.errors import UsageError
from zoo.text import load_tokenizer, train_tokenizer
from zoo.workflow import add_mode_argument, make_parser, resolve_defaults
from zoo.workflow import data as recipe_data
from zoo.workflow.flags import subword_regularization

ALPHA = 0.5


def rows(ids):
    """A padded batch (NumPy) -> its rows as tuples, the padding cut."""
    return [tuple(int(i) for i in row if i != PAD_ID) for row in ids]


def epoch_rows(dataset):
    """(source rows, target rows, target_out rows) of one pass over `dataset`."""
    sources, targets, outs = [], [], []
    for features, target_out in dataset.as_numpy_iterator():
        sources += rows(features["source_ids"])
        targets += rows(features["target_ids"])
        outs += rows(target_out)
    return sources, targets, outs


def texts(tokenizer, id_rows):
    return [t.decode() for t in tokenizer.detokenize(tf.ragged.constant(id_rows)).numpy()]


def check_rows(sources, targets, outs):
    for target, out in zip(targets, outs, strict=True):
        assert target[0] == START_ID and out[-1] == END_ID and target[1:] == out[:-1]
    assert all(sources) and all(len(out) > 1 for out in outs)


def test_each_epoch_samples_new_segmentations_of_the_same_text(small_corpus, tokenizer_pair):
    pairs = small_corpus.take(32)
    source_tok, target_tok = tokenizer_pair
    dataset = make_dataset(pairs.source, pairs.target, *tokenizer_pair, batch_size=32,
                           max_length=None, shuffle=False, batching="plain",
                           subword_regularization=ALPHA)  # fmt: skip
    exact = epoch_rows(make_dataset(pairs.source, pairs.target, *tokenizer_pair, batch_size=32,
                                    max_length=None, shuffle=False, batching="plain"))  # fmt: skip
    exact_sources, exact_targets = texts(source_tok, exact[0]), texts(target_tok, exact[2])
    seen = defaultdict(set)
    for _ in range(4):  # the same dataset read four times: four epochs
        sources, targets, outs = epoch_rows(dataset)
        check_rows(sources, targets, outs)
        # In order (no shuffling): each row spells its pair's text, whatever its pieces.
        assert texts(source_tok, sources) == exact_sources
        assert texts(target_tok, outs) == exact_targets
        for i, (source, out) in enumerate(zip(sources, outs, strict=True)):
            seen["source", i].add(source)
            seen["target", i].add(out)
    varied = sum(len(segmentations) > 1 for segmentations in seen.values())
    assert varied > len(seen) // 2, f"only {varied} of {len(seen)} sentences varied"
    exact_rows = {("source", i): s for i, s in enumerate(exact[0])}
    exact_rows.update({("target", i): s for i, s in enumerate(exact[2])})
    assert sum(exact_rows[key] not in found for key, found in seen.items()) > 0


def test_pools_keep_the_exact_pairs_and_the_length_limit(small_corpus, tokenizer_pair):
    pairs = small_corpus.take(96)
    source_tok, target_tok = tokenizer_pair
    kwargs = dict(batch_size=8, max_length=28, seed=3, pool_batches=4)
    exact = make_dataset(pairs.source, pairs.target, *tokenizer_pair, **kwargs)
    sampled = make_dataset(pairs.source, pairs.target, *tokenizer_pair, **kwargs,
                           subword_regularization=ALPHA)  # fmt: skip
    exact_sources, _, exact_outs = epoch_rows(exact)
    assert len(pairs.source) // 2 < len(exact_sources) < len(pairs.source)  # some dropped
    for _ in range(2):
        batches = list(sampled.as_numpy_iterator())
        assert len(batches) == len(sampled) == len(exact)
        for features, target_out in batches:  # cut from pools sorted by the sampled lengths
            keys = list(zip(rows(target_out), rows(features["source_ids"]), strict=True))
            lengths = [(len(target), len(source)) for target, source in keys]
            assert lengths == sorted(lengths)
        sources, targets, outs = epoch_rows(sampled)
        check_rows(sources, targets, outs)
        assert max(map(len, sources)) <= 28 and max(map(len, outs)) <= 29
        # The same pairs as the exact pipeline keeps (each spelled by its own pieces).
        assert Counter(texts(source_tok, sources)) == Counter(texts(source_tok, exact_sources))
        assert Counter(texts(target_tok, outs)) == Counter(texts(target_tok, exact_outs))
    # No length limit: the pools sort by (target, source) all the same.
    unbounded = make_dataset(pairs.source, pairs.target, *tokenizer_pair, **{**kwargs,
                             "max_length": None}, subword_regularization=ALPHA)  # fmt: skip
    for features, target_out in unbounded.as_numpy_iterator():
        keys = zip(rows(target_out), rows(features["source_ids"]), strict=True)
        lengths = [(len(target), len(source)) for target, source in keys]
        assert lengths == sorted(lengths)


def test_off_gives_the_exact_batches(small_corpus, tokenizer_pair):
    pairs = small_corpus.take(64)
    source_tok, target_tok = tokenizer_pair
    # Independent reference: exact pieces, the filter, pools sorted by (target, source).
    x = source_tok.tokenize(pairs.source).to_list()
    y = target_tok.tokenize(pairs.target).to_list()
    kept = [(s, t) for s, t in zip(x, y, strict=True) if 0 < len(s) <= 14 and 0 < len(t) <= 14]
    kept.sort(key=lambda pair: (len(pair[1]), len(pair[0])))
    off = make_dataset(pairs.source, pairs.target, *tokenizer_pair, batch_size=8, max_length=14,
                       shuffle=False, subword_regularization=0.0)  # fmt: skip
    batches = list(off.as_numpy_iterator())
    assert len(batches) == -(-len(kept) // 8)
    for b, (features, target_out) in enumerate(batches):
        chunk = kept[8 * b : 8 * b + 8]
        width = max(len(s) for s, _ in chunk), max(len(t) for _, t in chunk) + 1
        expect = np.zeros([len(chunk), width[0]], np.int32)
        expect_in, expect_out = (np.zeros([len(chunk), width[1]], np.int32) for _ in range(2))
        for i, (s, t) in enumerate(chunk):
            expect[i, : len(s)] = s
            expect_in[i, : len(t) + 1] = [START_ID, *t]
            expect_out[i, : len(t) + 1] = [*t, END_ID]
        np.testing.assert_array_equal(features["source_ids"], expect)
        np.testing.assert_array_equal(features["target_ids"], expect_in)
        np.testing.assert_array_equal(target_out, expect_out)
    # Shuffled: the default and an explicit 0 give the same batches, bit for bit.
    default = make_dataset(pairs.source, pairs.target, *tokenizer_pair, batch_size=8, seed=5)
    zero = make_dataset(pairs.source, pairs.target, *tokenizer_pair, batch_size=8, seed=5,
                        subword_regularization=0)  # fmt: skip
    for (fa, ya), (fb, yb) in zip(default, zero, strict=True):
        for name in fa:
            np.testing.assert_array_equal(fa[name].numpy(), fb[name].numpy())
        np.testing.assert_array_equal(ya.numpy(), yb.numpy())


def test_the_stream_samples_too_and_keeps_its_count(tmp_path, small_corpus, tokenizer_pair):
    pairs = small_corpus.take(48)
    for lang, lines in (("de", pairs.source), ("en", pairs.target)):
        (tmp_path / f"train.{lang}").write_text("\n".join(lines) + "\n")
    stream = open_stream(str(tmp_path / "{split}"), "de", "en", "train")
    counts = count_stream(stream, *tokenizer_pair, 28)
    assert 24 <= counts["kept"] < 48  # the length filter dropped some
    dataset = stream_dataset(stream, *tokenizer_pair, batch_size=8, max_length=28, counts=counts,
                             shuffle_buffer=16, subword_regularization=ALPHA)  # fmt: skip
    source_tok = tokenizer_pair[0]
    seen = defaultdict(set)
    for _ in range(3):
        sources, targets, outs = epoch_rows(dataset)  # assert_cardinality checks the count
        check_rows(sources, targets, outs)
        assert len(sources) == counts["kept"] and max(map(len, sources)) <= 28
        for text, source in zip(texts(source_tok, sources), sources, strict=True):
            seen[text].add(source)
    exact = {source_tok.detokenize([row]).numpy()[0].decode(): row for row in
             source_tok.tokenize(pairs.source).to_list()}  # fmt: skip
    assert set(seen) <= set(exact)
    assert sum(len(found) > 1 for found in seen.values()) > len(seen) // 2


def test_validation_batches_keep_the_exact_segmentation(tmp_path, small_corpus, tokenizer_pair):
    parser = make_parser("luong_base", "luong")
    add_mode_argument(parser)
    argv = ["--batch-size", "8", "--subword-regularization", str(ALPHA)]
    args = resolve_defaults(parser.parse_args(argv))
    assert args.subword_regularization == ALPHA
    train, val = small_corpus.take(32), small_corpus.take(16)
    train_data, val_data, steps, _ = recipe_data.pipelines(
        args, train, val, tokenizer_pair, str(tmp_path), True, print
    )
    exact_val = make_dataset(val.source, val.target, *tokenizer_pair, batch_size=8,
                             max_length=None, shuffle=False, batching="plain")  # fmt: skip
    for _ in range(2):
        assert epoch_rows(val_data) == epoch_rows(exact_val)
    assert steps == len(train_data(0)) == 4
    epochs = [Counter(epoch_rows(train_data(0))[0]) for _ in range(2)]
    assert epochs[0] != epochs[1]  # the training pairs are sampled anew when read again


def test_the_tokenizers_translation_uses_stay_exact(tmp_path, small_corpus, tokenizer_pair):
    tokenizer, text = tokenizer_pair[0], small_corpus.source[:16]
    exact = tokenizer.tokenize(text).to_list()
    sampler = tokenizer.sampling_tokenizer(ALPHA)
    assert sampler.sampling_alpha == ALPHA and tokenizer.sampling_alpha == 0
    assert any(sampler.tokenize(text).to_list() != exact for _ in range(3))
    assert tokenizer.tokenize(text).to_list() == exact
    # The source rows of the Translator and the SavedModel (zoo.text.preprocessor.encode).
    assert rows(encode_source(tokenizer, text).numpy()) == [tuple(row) for row in exact]
    sampler.save(tmp_path / "saved")  # a sampler saves its model, which loads exact
    assert load_tokenizer(tmp_path / "saved").tokenize(text).to_list() == exact


def test_refused_where_it_cannot_sample(small_corpus, tokenizer_pair):
    pairs = small_corpus.take(40)
    word = train_tokenizer("word", pairs.source, vocab_size=200)
    bpe = train_tokenizer("sentencepiece", pairs.source, vocab_size=200, model_type="bpe")
    for tokenizer, kind in ((word, "'word' tokenizer"), (bpe, "'bpe' model")):
        with pytest.raises(ValueError, match=kind):
            make_dataset(pairs.source, pairs.target, tokenizer, tokenizer_pair[1],
                         subword_regularization=0.1)  # fmt: skip
    # The same tokenizers train without it.
    assert len(make_dataset(pairs.source, pairs.target, word, bpe, max_length=None)) == 1
    with pytest.raises(ValueError, match="batching='buckets'"):
        make_dataset(pairs.source, pairs.target, *tokenizer_pair, batching="buckets",
                     subword_regularization=0.1)  # fmt: skip
    with pytest.raises(ValueError, match="subword_regularization must be a finite float >= 0"):
        make_dataset(pairs.source, pairs.target, *tokenizer_pair, subword_regularization=-1)
    parser = make_parser("luong_base", "luong")
    argv = ["--subword-regularization", "0.2"]
    with pytest.raises(UsageError, match="--batching pools or plain"):  # when parsed
        resolve_defaults(parser.parse_args([*argv, "--batching", "buckets"]))
    with pytest.raises(UsageError, match="--tokenizer word has one segmentation"):
        resolve_defaults(parser.parse_args([*argv, "--tokenizer", "word"]))
    with pytest.raises(UsageError, match="this is a 'word' tokenizer"):
        subword_regularization(resolve_defaults(parser.parse_args(argv)), (word, word))


RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "luong_base.py"
TINY = [
    "--size", "tiny", "--train-limit", "48", "--batch-size", "16", "--max-steps", "2",
    "--vocab-size", "300", "--eval-limit", "4", "--eval-batch-size", "4", "--beam-size", "1",
    "--attention-plots", "0", "--no-export", "--max-minutes", "0", "--average-last", "0",
]  # fmt: skip


def test_a_recipe_trains_with_subword_regularization(data_dir, tmp_path, capsys):
    out = tmp_path / "run"
    argv = sys.argv
    sys.argv = [str(RECIPE), *TINY, "--out", str(out), "--subword-regularization", "0.1"]
    try:
        runpy.run_path(str(RECIPE), run_name="__main__")
    finally:
        sys.argv = argv
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["training"]["steps"] == 2
    assert np.isfinite(metrics["training"]["train_loss"]) and metrics["training"]["target_tokens"]
    assert metrics["args"]["subword_regularization"] == 0.1
    assert json.loads((out / "run.json").read_text())["subword_regularization"] == 0.1
    help_text = make_parser("luong_base", "luong").format_help()
    assert "--subword-regularization ALPHA" in help_text
