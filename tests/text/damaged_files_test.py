"""A vocabulary too small for SentencePiece, and a tokenizer folder with a damaged file: a
ValueError that names the value or the file and what is expected, never sentencepiece's
own RuntimeError."""

import re

import pytest

from zoo.text import load_tokenizer, train_tokenizer


def test_a_vocabulary_too_small_names_the_smallest_that_trains(train_en):
    sentences = train_en[:200]
    with pytest.raises(ValueError, match=r"vocab_size 5 is too small") as error:
        train_tokenizer("sentencepiece", sentences, vocab_size=5)
    needed = int(re.search(r"at least (\d+) pieces", str(error.value)).group(1))
    characters = {c for s in sentences for c in s if not c.isspace()}
    assert needed > len(characters)  # every character, the reserved ids and the word mark
    assert train_tokenizer("sentencepiece", sentences, vocab_size=needed).vocab_size == needed
    with pytest.raises(ValueError, match=f"vocab_size {needed - 1} is too small.*{needed}"):
        train_tokenizer("sentencepiece", sentences, vocab_size=needed - 1)


@pytest.mark.parametrize("cut", ["half", "ten bytes", "empty"])
def test_a_truncated_sentencepiece_model_names_the_file(train_en, tmp_path, cut):
    folder = tmp_path / "tokenizer"
    train_tokenizer("sentencepiece", train_en[:200], vocab_size=100).save(folder)
    model = folder / "sentencepiece.model"
    data = model.read_bytes()
    model.write_bytes({"half": data[: len(data) // 2], "ten bytes": data[:10], "empty": b""}[cut])
    with pytest.raises(ValueError, match="not a valid SentencePiece model") as error:
        load_tokenizer(folder)
    assert str(error.value).startswith(f"{model}: ")


@pytest.mark.parametrize("text", ['{"kind": "sentencepiece", "format', "[1, 2]", "\udcff"])
def test_a_damaged_tokenizer_config_names_the_file(train_en, tmp_path, text):
    folder = tmp_path / "tokenizer"
    train_tokenizer("sentencepiece", train_en[:200], vocab_size=100).save(folder)
    (folder / "tokenizer.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError, match=re.escape(str(folder / "tokenizer.json"))):
        load_tokenizer(folder)
