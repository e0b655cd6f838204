import pytest

from zoo.constants import UNK_ID
from zoo.text import WordPieceTokenizer


def _greedy_wordpiece(text, index):
    """Reference WordPiece (greedy longest match per whitespace word, '##' continuations)."""
    ids = []
    for word in text.split():
        start, pieces = 0, []
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in index:
                    break
                end -= 1
            if end == start:
                pieces = [UNK_ID]
                break
            pieces.append(index[piece])
            start = end
        ids.extend(pieces)
    return ids


def test_ids_match_reference_greedy_longest_match(tokenizers, val_en):
    tok = tokenizers["wordpiece"]
    index = {t: i for i, t in enumerate(tok.vocab)}
    normalized = [s.decode() for s in tok.normalize(val_en).numpy()]
    assert tok.tokenize(val_en).to_list() == [_greedy_wordpiece(s, index) for s in normalized]


def test_punctuation_spacing_restored(tokenizers):
    tok = tokenizers["wordpiece"]
    text = ['A man, in a "red" shirt (left) - sits.', "A woman's dog."]
    assert [s.decode() for s in tok.detokenize(tok.tokenize(text)).numpy()] == text


def test_vocab_starts_with_reserved_and_has_continuations(tokenizers):
    vocab = tokenizers["wordpiece"].vocab
    assert vocab[:4] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert "##." in vocab and len(set(vocab)) == len(vocab)


def test_rejects_bad_vocab():
    with pytest.raises(ValueError, match="must start with"):
        WordPieceTokenizer(["a", "b"])
    with pytest.raises(ValueError, match="twice"):
        WordPieceTokenizer(["<pad>", "<s>", "</s>", "<unk>", "a", "a"])
