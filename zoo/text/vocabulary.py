"""Plain-text vocabularies and the in-graph helpers shared by the word-based tokenizers.

A vocabulary is a list of tokens whose first four entries are `zoo.constants.RESERVED_TOKENS`
(so PAD 0, START 1, END 2, UNK 3); it is saved as `vocab.txt`, one token per line, UTF-8.

Spacing is kept in the tokens themselves: a token that was written without a space before
it (punctuation such as the "." in "dog." or the "t" in "don't", or the second half of a
split word) carries the prefix `JOINER` ("##", as in WordPiece). Detokenisation joins the
tokens with spaces and removes " ##", which restores the original spacing exactly.

`VocabularyTokenizer`: what the tokenizers with a plain `vocab.txt` share.
"""

import os

import tensorflow as tf

from zoo.constants import RESERVED_TOKENS, UNK_ID
from zoo.text.tokenizer import Tokenizer

JOINER = "##"
WORD_START = "\u2581"  # SentencePiece's mark of a piece that begins a word
VOCAB_FILE = "vocab.txt"


def check_vocab(vocab, where="vocabulary"):
    """Raises ValueError unless `vocab` starts with the reserved tokens and has no duplicates."""
    vocab = list(vocab)
    if tuple(vocab[: len(RESERVED_TOKENS)]) != RESERVED_TOKENS:
        raise ValueError(
            f"The {where} must start with {RESERVED_TOKENS}, received {tuple(vocab[:4])}."
        )
    seen = set()
    for index, token in enumerate(vocab):
        if not token or any(c in token for c in "\n\r"):
            raise ValueError(f"The {where} has an empty or multi-line token at index {index}.")
        if token in seen:
            raise ValueError(f"The {where} has the token {token!r} twice (index {index}).")
        seen.add(token)
    return vocab


def write_vocab(vocab, directory):
    path = os.path.join(directory, VOCAB_FILE)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(token + "\n" for token in vocab)
    return path


def read_vocab(directory):
    path = os.path.join(directory, VOCAB_FILE)
    if not os.path.isfile(path):
        raise ValueError(f"Missing vocabulary file {path}.")
    with open(path, encoding="utf-8") as f:
        vocab = f.read().split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()
    return check_vocab(vocab, where=path)


def lookup_table(vocab, default_value=UNK_ID):
    """`tf.lookup.StaticHashTable` token (string) -> id (int64); missing -> `default_value`."""
    initializer = tf.lookup.KeyValueTensorInitializer(
        keys=tf.constant(vocab, dtype=tf.string),
        values=tf.range(len(vocab), dtype=tf.int64),
    )
    return tf.lookup.StaticHashTable(initializer, default_value=default_value)


def join_tokens(tokens):
    """Ragged tokens `(B, None)` -> `(B,)` strings: join with spaces, glue `JOINER` tokens."""
    text = tf.strings.reduce_join(tokens, axis=-1, separator=" ")
    text = tf.strings.regex_replace(text, " " + JOINER, "")
    return tf.strings.regex_replace(text, "^" + JOINER, "")


class VocabularyTokenizer(Tokenizer):
    """Base class of `WordTokenizer` and `WordPieceTokenizer`: a token list (`vocab`, saved
    as `vocab.txt`, see `zoo.text.vocabulary`), a lookup table token -> id, and
    detokenisation that joins the tokens and glues "##" pieces.

    Subclasses set `kind` and implement `_tokenize(normalized_strings)` with `self._table`.

    Args:
        vocab: list of tokens starting with `zoo.constants.RESERVED_TOKENS`.
        lowercase: lowercase text before tokenizing.
        missing_id: the table's id for a token not in `vocab`.
    """

    def __init__(self, vocab, lowercase=False, name=None, missing_id=-1):
        super().__init__(lowercase=lowercase, name=name)
        self.vocab = check_vocab(vocab)
        self._vocab_size = len(self.vocab)
        self._table = lookup_table(self.vocab, default_value=missing_id)
        self._tokens = tf.constant(self.vocab, dtype=tf.string)

    @property
    def vocab_size(self):
        return self._vocab_size

    def id_to_token(self, ids):
        """Ids (any shape) -> their tokens (`tf.string`, same shape)."""
        return tf.gather(self._tokens, ids)

    def _detokenize(self, ids):
        return join_tokens(tf.gather(self._tokens, ids))

    def _save_files(self, directory):
        write_vocab(self.vocab, directory)

    @classmethod
    def _from_files(cls, directory, config):
        return cls(read_vocab(directory), lowercase=config["lowercase"])
