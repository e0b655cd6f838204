import collections
import unicodedata

import pytest

from zoo.constants import RESERVED_TOKENS, UNK_ID
from zoo.text import WordTokenizer


def _reference_tokens(text):
    """Runs of letters/digits/marks, or single other characters; '##' if no space before."""
    tokens, current, attached, previous_end = [], "", False, -1
    for i, ch in enumerate(text + " "):
        wordy = unicodedata.category(ch)[0] in "LNM"
        if wordy:
            if not current:
                attached = i == previous_end
            current += ch
            continue
        if current:
            tokens.append(("##" if attached else "") + current)
            current, previous_end = "", i
        if not ch.isspace():
            tokens.append(("##" if i == previous_end else "") + ch)
            previous_end = i + 1
    return tokens


def test_reference_tokenizer_sanity():
    assert _reference_tokens("don't stop, (dog).") == [
        "don", "##'", "##t", "stop", "##,", "(", "##dog", "##)", "##.",
    ]  # fmt: skip


def test_ids_match_reference(tokenizers, val_en):
    tok = tokenizers["word"]
    index = {t: i for i, t in enumerate(tok.vocab)}
    normalized = [s.decode() for s in tok.normalize(val_en).numpy()]
    want = [[index.get(t, UNK_ID) for t in _reference_tokens(s)] for s in normalized]
    assert tok.tokenize(val_en).to_list() == want


def test_vocab_is_the_most_frequent_words(train_en):
    tok = WordTokenizer.train(train_en[:500], vocab_size=54)
    counts = collections.Counter(t for s in train_en[:500] for t in _reference_tokens(s))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    assert tok.vocab == list(RESERVED_TOKENS) + [w for w, _ in ranked[:50]]


def test_rare_words_become_unk_and_detokenize_as_unk(tokenizers):
    tok = tokenizers["word"]
    ids = tok.tokenize(["A zyzzyva."]).to_list()[0]
    assert ids[1] == UNK_ID and len(ids) == 3
    assert tok.detokenize([ids]).numpy()[0] == b"A <unk>."


def test_lowercase_option(train_en):
    tok = WordTokenizer.train(train_en[:300], vocab_size=100, lowercase=True)
    assert all(t == t.lower() for t in tok.vocab)
    assert tok.tokenize(["A DOG"]).to_list() == tok.tokenize(["a dog"]).to_list()


def test_rejects_tiny_vocab():
    with pytest.raises(ValueError, match="vocab_size must be an int greater than 4"):
        WordTokenizer.train(["a"], vocab_size=4)
