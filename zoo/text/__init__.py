"""zoo.text: tokenizers from `tf.string` to ragged int ids and back, in TensorFlow ops.

Every tokenizer reserves ids 0-3 as in `zoo.constants` (PAD, START, END, UNK), normalises
text the same way (`normalize`: NFKC, Unicode spaces to one ASCII space, optional
lowercasing), is a `tf.Module` (its resources export with a SavedModel), and saves as plain
files (`tokenizer.json` + `sentencepiece.model` or `vocab.txt`). `Preprocessor` turns
strings into a model's padded source ids and its output ids back into text, for the
training pipelines and the translator alike. `DEFAULT_KIND` and `DEFAULT_VOCAB_SIZE` are
the tokenizer the recipes train unless told otherwise.
"""

from zoo.text.factory import (
    DEFAULT_KIND,
    KINDS,
    SAMPLING_KINDS,
    load_tokenizer,
    train_tokenizer,
)
from zoo.text.normalize import normalize
from zoo.text.preprocessor import Preprocessor
from zoo.text.sentencepiece_tokenizer import SentencePieceTokenizer
from zoo.text.tokenizer import DEFAULT_VOCAB_SIZE, Tokenizer, clean_ids
from zoo.text.word_tokenizer import WordTokenizer
from zoo.text.wordpiece_tokenizer import WordPieceTokenizer

__all__ = [
    "DEFAULT_KIND",
    "DEFAULT_VOCAB_SIZE",
    "KINDS",
    "SAMPLING_KINDS",
    "Preprocessor",
    "SentencePieceTokenizer",
    "Tokenizer",
    "WordPieceTokenizer",
    "WordTokenizer",
    "clean_ids",
    "load_tokenizer",
    "normalize",
    "train_tokenizer",
]
