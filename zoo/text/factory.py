"""`train_tokenizer` and `load_tokenizer`: make any `zoo.text` tokenizer by its kind."""

from zoo.text.sentencepiece_tokenizer import SentencePieceTokenizer
from zoo.text.tokenizer import read_config
from zoo.text.word_tokenizer import WordTokenizer
from zoo.text.wordpiece_tokenizer import WordPieceTokenizer

TOKENIZERS = {
    SentencePieceTokenizer.kind: SentencePieceTokenizer,
    WordPieceTokenizer.kind: WordPieceTokenizer,
    WordTokenizer.kind: WordTokenizer,
}
KINDS = tuple(TOKENIZERS)
DEFAULT_KIND = SentencePieceTokenizer.kind  # the recipes' --tokenizer
SAMPLING_KINDS = tuple(k for k, t in TOKENIZERS.items() if t.samples_segmentations)


def _tokenizer_class(kind):
    if kind not in TOKENIZERS:
        raise ValueError(f"Unknown tokenizer kind {kind!r}; expected one of {KINDS}.")
    return TOKENIZERS[kind]


def train_tokenizer(kind, sentences, vocab_size, lowercase=False, model_type="unigram", seed=0):
    """Trains a tokenizer of `kind` ("sentencepiece", "wordpiece" or "word") on `sentences`.

    Args:
        kind: "sentencepiece" (`DEFAULT_KIND`, the recipes' choice), "wordpiece" or "word".
        sentences: iterable of `str`, the training split of one language.
        vocab_size: vocabulary size, the 4 reserved ids included (the recipes use
            `DEFAULT_VOCAB_SIZE`).
        lowercase: lowercase text before training and tokenizing.
        model_type: SentencePiece model type, "unigram" or "bpe" (sentencepiece only).
        seed: SentencePiece's random seed (sentencepiece only).

    Example:
        >>> tok = zoo.text.train_tokenizer("sentencepiece", corpus.source, vocab_size=8000)
    """
    cls = _tokenizer_class(kind)
    if cls is SentencePieceTokenizer:
        return cls.train(
            sentences, vocab_size=vocab_size, model_type=model_type, lowercase=lowercase, seed=seed
        )
    if model_type != "unigram":
        raise ValueError(f"model_type applies to 'sentencepiece' only, not to {kind!r}.")
    return cls.train(sentences, vocab_size=vocab_size, lowercase=lowercase)


def load_tokenizer(directory):
    """Loads any tokenizer written by `Tokenizer.save(directory)`."""
    config = read_config(directory)
    return _tokenizer_class(config["kind"]).load(directory)
