import pytest

from zoo.text import SentencePieceTokenizer, WordPieceTokenizer, WordTokenizer, train_tokenizer


@pytest.mark.parametrize(
    "kind, cls",
    [("sentencepiece", SentencePieceTokenizer), ("word", WordTokenizer)],
)
def test_train_tokenizer_makes_the_kind(train_en, kind, cls):
    tok = train_tokenizer(kind, train_en[:300], vocab_size=120)
    assert type(tok) is cls and tok.vocab_size <= 120


def test_factory_kinds_are_complete(tokenizers):
    assert isinstance(tokenizers["wordpiece"], WordPieceTokenizer)


def test_train_tokenizer_rejects_bad_options(train_en):
    with pytest.raises(ValueError, match="Unknown tokenizer kind"):
        train_tokenizer("bytes", train_en[:10], vocab_size=100)
    with pytest.raises(ValueError, match="model_type"):
        train_tokenizer("word", train_en[:10], vocab_size=100, model_type="bpe")
