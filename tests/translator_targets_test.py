"""Tests of zoo.translator.targets: prefixes and constraint phrases whose target tokenization
holds <unk> are refused, naming the sentence, the text and what the vocabulary lacks."""

import pytest
from translator_toy import VOCAB_SIZE, read_lines

from zoo.constants import UNK_ID
from zoo.text import train_tokenizer
from zoo.translator.targets import (
    TargetTextError,
    check_prefix_texts,
    phrase_ids,
    tokenize_texts,
)

KINDS = ("sentencepiece", "wordpiece", "word")


@pytest.fixture(scope="module", params=KINDS)
def tokenizer(request, data_dir):
    return train_tokenizer(request.param, read_lines("train.en"), vocab_size=VOCAB_SIZE)


def test_known_texts_pass_and_keep_their_ids(tokenizer):
    constraints = [[], ["a dog", "two men"], ["woman"]]
    expected = tokenize_texts(tokenizer, ["a dog", "two men", "woman"])
    assert all(UNK_ID not in ids for ids in expected)
    assert phrase_ids(tokenizer, constraints) == [[], expected[:2], expected[2:]]
    check_prefix_texts(tokenizer, ["", "A dog", "Two men are"])  # no error
    check_prefix_texts(tokenizer, ["", ""])


def test_a_phrase_with_unknown_characters_is_named(tokenizer):
    text = "a dog 日本語 ✓"
    assert UNK_ID in tokenize_texts(tokenizer, [text])[0]  # the reason for the refusal
    with pytest.raises(TargetTextError) as refused:
        phrase_ids(tokenizer, [["a dog"], [], ["woman", text]])
    error = refused.value
    assert (error.argument, error.index) == ("constraints", 2)
    message = str(error)
    assert message.startswith("constraints[2]: the constraint 'a dog 日本語 ✓' holds ")
    assert "<unk>" in message and "'dog'" not in message
    if tokenizer.kind == "word":  # whole words are known or not
        assert "words that the target vocabulary lacks ('日本語', '✓')" in message
    else:
        assert "characters that the target vocabulary lacks ('日', '本', '語', '✓')" in message
    assert isinstance(error, ValueError)


def test_a_prefix_with_control_characters_is_named(tokenizer):
    with pytest.raises(TargetTextError) as refused:
        check_prefix_texts(tokenizer, ["A dog", "", "xyz\x01\x02"])
    error = refused.value
    assert (error.argument, error.index) == ("prefix", 2)
    assert str(error).startswith("prefix[2]: the prefix 'xyz\\x01\\x02' holds ")
    assert "'\\x01', '\\x02'" in str(error)


def test_an_empty_phrase_is_named_with_its_sentence(tokenizer):
    with pytest.raises(TargetTextError, match=r"constraints\[1\]: the constraint '  ' has no"):
        phrase_ids(tokenizer, [["a dog"], ["  "]])


def test_a_phrase_repeating_a_banned_ngram_is_named(tokenizer):
    """No translation can contain "man man" when no word may repeat; "a man" may."""
    assert phrase_ids(tokenizer, [["a man"]], no_repeat_ngram_size=1)  # no error
    assert phrase_ids(tokenizer, [["man man"]], no_repeat_ngram_size=2)  # one bigram: allowed
    with pytest.raises(TargetTextError) as refused:
        phrase_ids(tokenizer, [["a dog"], ["two men", "man man"]], no_repeat_ngram_size=1)
    assert (refused.value.argument, refused.value.index) == ("constraints", 1)
    assert str(refused.value).startswith(
        "constraints[1]: the constraint 'man man' repeats a sequence of 1 target token(s), "
        "which no_repeat_ngram_size=1 forbids"
    )
    phrase_ids(tokenizer, [["man man"]])  # without the ban: fine
