"""`WordTokenizer`: the papers' word-level vocabulary (the K most frequent words and <unk>)."""

import collections

import tensorflow as tf
import tensorflow_text as tf_text

from zoo.constants import RESERVED_TOKENS, UNK_ID
from zoo.text.tokenizer import check_vocab_size
from zoo.text.vocabulary import JOINER, VocabularyTokenizer

# A token is a run of letters / digits / marks, or a single other (punctuation) character.
_SPLIT = r"\s+|[^\p{L}\p{N}\p{M}\s]"
_KEEP = r"[^\p{L}\p{N}\p{M}\s]"


def split_words(strings):
    """Normalised strings `(B,)` -> ragged word tokens `(B, None)`, attached ones "##"-prefixed.

    "don't stop." -> ["don", "##'", "##t", "stop", "##."]: punctuation is split off, and a
    token written with no space before it carries `JOINER`, so that joining restores the text.
    """
    tokens, begins, ends = tf_text.regex_split_with_offsets(strings, _SPLIT, _KEEP)
    previous_ends = tf.concat([tf.fill([tokens.nrows(), 1], tf.constant(-1, tf.int64)), ends], 1)
    attached = tf.equal(begins, previous_ends[:, :-1])
    flat = tokens.flat_values
    return tokens.with_flat_values(tf.where(attached.flat_values, JOINER + flat, flat))


class WordTokenizer(VocabularyTokenizer):
    """Word-level tokenizer of Bahdanau et al. (2014, Sec. 5.1) and Luong et al. (2015, Sec. 4.1):
    the K most frequent words of the training text, every other word mapped to <unk>.

    Punctuation is split from words; a token that had no space before it is stored with the
    prefix "##" (see `zoo.text.vocabulary`), so detokenisation restores the original spacing.

    Args:
        vocab: list of tokens starting with `zoo.constants.RESERVED_TOKENS`.
        lowercase: lowercase text before tokenizing.

    Shapes: `tokenize` `(B,)` string -> ragged `(B, None)` int32; `detokenize` back to `(B,)`.

    Example:
        >>> tok = WordTokenizer.train(train_sentences, vocab_size=30000)
        >>> tok.tokenize(["A dog."])      # ids of "A", "dog", "##."
    """

    kind = "word"

    def __init__(self, vocab, lowercase=False, name=None):
        super().__init__(vocab, lowercase=lowercase, name=name, missing_id=UNK_ID)

    @classmethod
    def train(cls, sentences, vocab_size=30000, lowercase=False, min_count=1):
        """Keeps the `vocab_size - 4` most frequent tokens of `sentences` (ties: alphabetical)."""
        from zoo.text.normalize import normalize_texts

        vocab_size = check_vocab_size(vocab_size)
        counts = collections.Counter()
        texts = normalize_texts(sentences, lowercase)
        for start in range(0, len(texts), 8192):
            tokens = split_words(tf.constant(texts[start : start + 8192], dtype=tf.string))
            counts.update(t.decode("utf-8") for t in tokens.flat_values.numpy().tolist())
        for token in RESERVED_TOKENS:
            counts.pop(token, None)
        ranked = sorted(
            (kv for kv in counts.items() if kv[1] >= min_count), key=lambda kv: (-kv[1], kv[0])
        )
        words = [w for w, _ in ranked[: vocab_size - len(RESERVED_TOKENS)]]
        return cls(list(RESERVED_TOKENS) + words, lowercase=lowercase)

    def split(self, strings):
        """Strings `(B,)` -> ragged `(B, None)` tf.string: the words that `tokenize` looks up,
        position by position, as written (a word outside the vocabulary stays itself,
        where its id is <unk>); attached tokens carry "##". For unknown-word replacement
        (`zoo.unknown_words`)."""
        return split_words(self.normalize(strings))

    def _tokenize(self, strings):
        return tf.ragged.map_flat_values(self._table.lookup, split_words(strings))
