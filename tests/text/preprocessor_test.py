"""Tests of zoo.text.preprocessor: the source rows the pipelines and the translator share,
against the tokenizers' own ragged output."""

import numpy as np
import pytest
import tensorflow as tf

from zoo.constants import PAD_ID
from zoo.text import Preprocessor
from zoo.text import preprocessor as module


def test_encode_pads_the_tokenizers_rows_and_keeps_one_column(tokenizers, val_en):
    tok = tokenizers["sentencepiece"]
    sentences = ["", *val_en[:5], "   "]
    ids, lengths = module.encode(tok, tf.constant(sentences))
    rows = tok.tokenize(tf.constant(sentences)).to_list()
    assert lengths.numpy().tolist() == [len(r) for r in rows]
    assert ids.dtype == tf.int32 and ids.shape == (len(sentences), max(map(len, rows)))
    for row, got in zip(rows, ids.numpy(), strict=True):
        assert got[: len(row)].tolist() == row and (got[len(row) :] == PAD_ID).all()
    empty, none = module.encode(tok, tf.constant(["", " "]))
    assert empty.shape == (2, 1) and none.numpy().tolist() == [0, 0]  # one column anyway


def test_invalid_utf8_reads_as_replacement_characters(tokenizers):
    tok = tokenizers["word"]
    ids, _ = module.encode(tok, tf.constant([b"gut \xff hier"]))
    expected, _ = module.encode(tok, tf.constant(["gut \ufffd hier"]))
    np.testing.assert_array_equal(ids.numpy(), expected.numpy())


def test_token_lengths_equal_in_one_call_and_through_tf_data(tokenizers, val_en, monkeypatch):
    tok = tokenizers["wordpiece"]
    sentences = val_en[:50] + [""]
    expected = [len(r) for r in tok.tokenize(tf.constant(sentences)).to_list()]
    assert module.token_lengths(tok, sentences).tolist() == expected
    monkeypatch.setattr(module, "EAGER_LENGTHS", 10)  # the tf.data path, 3 batches of 20
    monkeypatch.setattr(module, "TOKENIZE_BATCH", 20)
    got = module.token_lengths(tok, sentences)
    assert got.dtype == np.int64 and got.tolist() == expected
    assert module.token_lengths(tok, []).shape == (0,)


def test_preprocessor_tokens_words_and_text(tokenizers):
    word, pieces = tokenizers["word"], tokenizers["sentencepiece"]
    preprocessor = Preprocessor(word, pieces)
    sentences = ["A Zyxwvut dog.", ""]
    ids, lengths = preprocessor.encode_source(tf.constant(sentences))
    tokens = preprocessor.source_tokens(ids, lengths).numpy().tolist()
    assert tokens[1] == [b""] * ids.shape[1]  # "" past the length
    assert b"<unk>" in tokens[0]  # out of the vocabulary...
    words = preprocessor.source_word_lists(sentences)
    assert words == [["A", "Zyxwvut", "dog", "##."], []]  # ...but as written here
    padded = preprocessor.padded_source_words(tf.constant(sentences), tf.constant(tokens))
    assert padded.numpy().tolist() == [[w.encode() for w in words[0]], [b""] * 4]
    target = pieces.tokenize(tf.constant(["a dog runs"]))
    assert preprocessor.detokenize(target).numpy()[0].decode() == "a dog runs"
    # A tokenizer without words of its own: its pieces stand for the words.
    other = Preprocessor(pieces, pieces)
    assert other.padded_source_words(tf.constant(["x"]), tf.constant([["p"]])).numpy() == [[b"p"]]


def test_not_a_tokenizer_is_refused():
    with pytest.raises(ValueError, match="source_tokenizer must be a zoo.text tokenizer"):
        Preprocessor(object(), object())
