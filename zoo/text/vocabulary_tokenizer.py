"""`VocabularyTokenizer`: what the tokenizers with a plain `vocab.txt` share."""

import tensorflow as tf

from zoo.text.tokenizer import Tokenizer
from zoo.text.vocabulary import check_vocab, join_tokens, lookup_table, read_vocab, write_vocab


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
