"""`WordPieceTokenizer`: WordPiece subwords learnt with tensorflow-text's vocabulary tool, run in
the graph by `tensorflow_text.WordpieceTokenizer`."""

import collections

import tensorflow as tf
import tensorflow_text as tf_text

from zoo.constants import RESERVED_TOKENS, UNK_TOKEN
from zoo.text.normalize import normalize_texts
from zoo.text.tokenizer import DEFAULT_VOCAB_SIZE, check_vocab_size
from zoo.text.vocabulary import JOINER, VocabularyTokenizer


class WordPieceTokenizer(VocabularyTokenizer):
    """WordPiece subword tokenizer (Wu et al., 2016, Sec. 4.1) with exact punctuation spacing.

    Text is split on whitespace only; each whitespace-delimited word is then cut into
    WordPiece units by greedy longest match, so punctuation attached to a word becomes a
    continuation piece ("dog." -> "dog", "##."). Detokenisation glues continuation pieces
    back, which restores the spacing of punctuation exactly (as sacreBLEU's references have
    it). A word that cannot be spelt with the vocabulary becomes one UNK_ID.

    The vocabulary comes from tensorflow-text's WordPiece learner
    (`tensorflow_text.tools.wordpiece_vocab.wordpiece_tokenizer_learner_lib.learn`, the
    algorithm behind `bert_vocab_from_dataset`), fed with whitespace word counts instead of
    BERT's punctuation-splitting pre-tokenizer.

    Args:
        vocab: list of tokens starting with `zoo.constants.RESERVED_TOKENS`; continuation
            pieces carry the prefix "##".
        lowercase: lowercase text before tokenizing.

    Shapes: `tokenize` `(B,)` string -> ragged `(B, None)` int32; `detokenize` back to `(B,)`.

    Example:
        >>> tok = WordPieceTokenizer.train(train_sentences, vocab_size=8000)
        >>> tok.detokenize(tok.tokenize(["A dog, running."])).numpy()
        array([b'A dog, running.'], dtype=object)
    """

    kind = "wordpiece"

    def __init__(self, vocab, lowercase=False, name=None):
        super().__init__(vocab, lowercase=lowercase, name=name, missing_id=-1)
        self._wordpiece = tf_text.WordpieceTokenizer(
            self._table,
            suffix_indicator=JOINER,
            max_bytes_per_word=200,
            token_out_type=tf.int64,
            unknown_token=UNK_TOKEN,
        )

    @classmethod
    def train(
        cls, sentences, vocab_size=DEFAULT_VOCAB_SIZE, lowercase=False, min_count=2, max_chars=1000
    ):
        """Learns a WordPiece vocabulary of about `vocab_size` tokens from `sentences`.

        Args:
            sentences: training text (`str` items), the training split only.
            vocab_size: target size, reserved tokens included (the learner may land a
                little under or over it).
            lowercase: lowercase before learning and tokenizing.
            min_count: words seen fewer times are ignored when learning.
            max_chars: at most this many distinct characters are kept as single pieces.
        """
        from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib

        vocab_size = check_vocab_size(vocab_size)
        counts = collections.Counter()
        for text in normalize_texts(sentences, lowercase):
            counts.update(text.split(" ") if text else ())
        if not counts:
            raise ValueError("Cannot learn a WordPiece vocabulary from no (non-empty) sentences.")
        word_counts = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        vocab = wordpiece_tokenizer_learner_lib.learn(
            word_counts,
            vocab_size=vocab_size,
            reserved_tokens=list(RESERVED_TOKENS),
            lower_thresh=int(min_count),
            max_unique_chars=int(max_chars),
            include_joiner_token=True,
            joiner=JOINER,
        )
        vocab = list(dict.fromkeys(vocab))  # the learner never repeats, but be sure
        return cls(vocab, lowercase=lowercase)

    def _tokenize(self, strings):
        words = tf.strings.split(strings, sep=" ")
        words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
        return self._wordpiece.tokenize(words).merge_dims(-2, -1)
