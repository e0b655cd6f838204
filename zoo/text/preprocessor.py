"""`Preprocessor`: strings to model ids and back, for a source and a target tokenizer.

The one place where text becomes what a model reads and its ids become text again, shared
by the training pipelines (`zoo.data.encode_source`, `zoo.data.token_lengths`) and the
translator (its graph and its SavedModel):

    preprocessor = Preprocessor(source_tokenizer, target_tokenizer)
    source_ids, source_lengths = preprocessor.encode_source(tf.constant(["Ein Hund."]))
    texts = preprocessor.detokenize(result_ids)

The methods on tensors are made of TensorFlow ops and run eagerly, inside `tf.function`
and in a SavedModel; `source_lengths` and `source_word_lists` take and give Python lists.
"""

import numpy as np
import tensorflow as tf

from zoo.constants import PAD_ID

TOKENIZE_BATCH = 1024
"""Sentences tokenized together in the tf.data pipelines (`zoo.data`)."""

EAGER_LENGTHS = 4096
"""`token_lengths` tokenizes up to this many sentences in one eager call; more go through a
parallel tf.data pipeline."""


def valid_utf8(strings):
    """`tf.string` (B,) with invalid UTF-8 (possible through a SavedModel's input) replaced
    by U+FFFD, one per invalid sequence."""
    strings = tf.convert_to_tensor(strings, tf.string)
    return tf.strings.unicode_transcode(
        strings, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
    )


def encode(tokenizer, strings):
    """Strings `(B,)` -> `(ids (B, T) int32 right-padded with PAD_ID, lengths (B,) int32)`.

    The rows hold the tokens only (no START/END), as the training batches' source rows do;
    `T >= 1` even when every string is empty (the encoders need one column). Invalid UTF-8
    reads as U+FFFD."""
    ragged = tokenizer.tokenize(valid_utf8(strings))
    lengths = tf.cast(ragged.row_lengths(), tf.int32)
    ids = tf.cast(ragged.to_tensor(default_value=PAD_ID), tf.int32)
    missing = tf.maximum(1 - tf.shape(ids)[1], 0)
    return tf.pad(ids, [[0, 0], [0, missing]], constant_values=PAD_ID), lengths


def token_lengths(tokenizer, sentences):
    """NumPy int64 array: the number of tokens of each sentence (a sequence of str).

    Up to `EAGER_LENGTHS` sentences are tokenized in one call; a larger corpus goes through
    a tf.data pipeline of `TOKENIZE_BATCH`-sentence batches, tokenized in parallel."""
    sentences = list(sentences)
    if len(sentences) <= EAGER_LENGTHS:
        strings = tf.constant(sentences, tf.string, shape=[len(sentences)])
        return tokenizer.tokenize(strings).row_lengths().numpy().astype(np.int64)
    dataset = tf.data.Dataset.from_tensor_slices(tf.constant(sentences, tf.string))
    dataset = dataset.batch(TOKENIZE_BATCH).map(
        lambda s: tokenizer.tokenize(s).row_lengths(), num_parallel_calls=tf.data.AUTOTUNE
    )
    return np.concatenate(list(dataset.as_numpy_iterator())).astype(np.int64)


def padded_tokens(tokenizer, ids, lengths):
    """`ids (B, T)` -> `(B, T)` tf.string: each id's token, `""` past each row's length."""
    keep = tf.sequence_mask(lengths, tf.shape(ids)[1])
    return tf.where(keep, tokenizer.id_to_token(ids), tf.constant(""))


def _check_tokenizer(label, tokenizer):
    if not all(hasattr(tokenizer, m) for m in ("tokenize", "detokenize", "id_to_token")):
        raise ValueError(
            f"{label}_tokenizer must be a zoo.text tokenizer (tokenize, detokenize, "
            f"id_to_token), received {type(tokenizer).__name__}."
        )
    return tokenizer


class Preprocessor:
    """A source and a target tokenizer as the model's inputs and outputs (module docstring).

    Args:
        source_tokenizer, target_tokenizer: `zoo.text` tokenizers.
    """

    def __init__(self, source_tokenizer, target_tokenizer):
        self.source_tokenizer = _check_tokenizer("source", source_tokenizer)
        self.target_tokenizer = _check_tokenizer("target", target_tokenizer)

    def encode_source(self, strings):
        """`tf.string` (B,) -> (source_ids (B, Ts >= 1) int32, source_lengths (B,) int32)."""
        return encode(self.source_tokenizer, strings)

    def source_lengths(self, sentences):
        """NumPy int array: the number of source tokens of each sentence (list of str)."""
        return token_lengths(self.source_tokenizer, sentences)

    def source_tokens(self, ids, lengths):
        """(B, Ts) tf.string: the source pieces of `ids`, "" past each length."""
        return padded_tokens(self.source_tokenizer, ids, lengths)

    def target_tokens(self, ids, lengths):
        """(B, T) tf.string: the target pieces of `ids`, "" past each length."""
        return padded_tokens(self.target_tokenizer, ids, lengths)

    def source_words(self, strings):
        """Ragged `(B, None)` tf.string: each source token as written, position by position:
        the word tokenizer's words (`WordTokenizer.split`, an out-of-vocabulary word stays
        itself), the pieces of other tokenizers."""
        strings = valid_utf8(strings)
        split = getattr(self.source_tokenizer, "split", None)
        if split is not None:
            return split(strings)
        tokenizer = self.source_tokenizer
        return tf.ragged.map_flat_values(tokenizer.id_to_token, tokenizer.tokenize(strings))

    def source_word_lists(self, sentences):
        """`source_words` of a list of str, as lists of str."""
        if not sentences:
            return []
        words = self.source_words(tf.constant(sentences, tf.string)).to_list()
        return [[x.decode("utf-8") for x in row] for row in words]

    def padded_source_words(self, strings, source_tokens):
        """(B, Ts) tf.string: `source_words` of `strings` in the shape of `source_tokens`
        (B, Ts) ("" padding); for a tokenizer without words of its own, its pieces:
        `source_tokens` itself."""
        if getattr(self.source_tokenizer, "split", None) is None:
            return source_tokens
        shape = tf.shape(source_tokens, out_type=tf.int64)
        return self.source_words(strings).to_tensor("", shape=shape)

    def detokenize(self, ids):
        """Target ids `(B, T)` (END then PAD, or ragged) -> `(B,)` tf.string."""
        return self.target_tokenizer.detokenize(ids)

    def restore_resources(self):
        """Rebuilds the tokenizers' TensorFlow resources eagerly (`tf.random.set_seed` clears
        the kernel cache that owns tensorflow-text's SentencePiece model; a function traced
        before then must be traced again)."""
        probe = tf.constant(["a"], tf.string)
        for tokenizer in (self.source_tokenizer, self.target_tokenizer):
            tokenizer.id_to_token(tokenizer.tokenize(probe).flat_values)
            tokenizer.detokenize(tf.constant([[4]], tf.int32))
