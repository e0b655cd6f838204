"""Unknown-word replacement: each `<unk>` of a translation becomes a source word.

Luong et al. 2015, section 4.1 (after Jean et al. 2015 and Luong et al. 2015b): with a
word-level vocabulary, the model emits `<unk>` for a word outside it; each such token is
replaced by the source word with the highest attention weight at that step, or by that
word's translation when a dictionary gives one. Luong et al. gained +1.9 BLEU with it
(WMT'14 En-De, their Table 1).

    dictionary = read_dictionary("lexicon.de-en.txt")       # optional
    text = replace_unknown(source_words, translation.target_tokens, translation.weights,
                           dictionary)

`source_words` are the source's own surface tokens, position by position (for the word
tokenizer `WordTokenizer.split`): the ids map an unknown source word to `<unk>` as well,
and copying `<unk>` would restore nothing. A dictionary file has one entry a line, a
source word and its translation separated by a tab or by spaces (the first of a word's
lines wins; `#` starts a comment line).

The rule is written once, in TensorFlow ops over a padded batch (`graph_replaced_tokens`,
`graph_join_tokens`, `graph_replace_unknown`): the translator's graph (the SavedModel's
`translation_unk_replaced` output) runs it, and so do the functions for Python lists here.
"""

import numpy as np
import tensorflow as tf

from zoo.constants import END_TOKEN, UNK_TOKEN
from zoo.data.files import read_raw_lines
from zoo.text.vocabulary import JOINER, WORD_START


def read_dictionary(path):
    """{source word: translation} from a dictionary file (module docstring), read as UTF-8
    (`zoo.data.files.read_raw_lines`); a ValueError names the file and the first line
    that is not UTF-8 or not two fields."""
    dictionary = {}
    for number, line in enumerate(read_raw_lines(path), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) != 2:
            raise ValueError(
                f"{path}, line {number}: expected a source word and its translation "
                f"(tab- or space-separated), received {line!r}."
            )
        dictionary.setdefault(fields[0], fields[1])
    return dictionary


def _starts_with(tokens, prefix):
    return tf.equal(tf.strings.substr(tokens, 0, len(prefix.encode("utf-8"))), prefix)


def _lookup(words, dictionary):
    """`words` (tf.string) with each entry of `dictionary` ({str: str}) translated."""
    if not dictionary:
        return words
    keys = tf.constant(list(dictionary), tf.string)
    values = tf.constant(list(dictionary.values()), tf.string)
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(keys, tf.range(len(keys), dtype=tf.int64)), -1
    )
    index = table.lookup(words)
    return tf.where(index >= 0, tf.gather(values, tf.maximum(index, 0)), words)


def graph_replaced_tokens(source_words, target_tokens, weights, dictionary=None):
    """(B, T) tf.string: `target_tokens` (B, T) with each `<unk>` replaced by the source
    word of highest weight in its row of `weights` (B, T, Ts), or by its translation in
    `dictionary`; the replacement starts a word in a row of SentencePiece pieces.

    Args:
        source_words: (B, Ts >= 1) tf.string, each source token as written ("" padding).
        target_tokens: (B, T) tf.string ("" padding; END may be among them).
        weights: (B, T, Ts) attention weights.
        dictionary: optional {source word: translation}.
    """
    bare = tf.strings.regex_replace(source_words, "^(" + JOINER + "|" + WORD_START + ")", "")
    best = tf.argmax(weights, axis=2, output_type=tf.int32)  # (B, T)
    picked = _lookup(tf.gather(bare, best, batch_dims=1), dictionary)
    pieces = tf.reduce_any(_starts_with(target_tokens, WORD_START), axis=1, keepdims=True)
    picked = tf.where(pieces, WORD_START + picked, picked)
    return tf.where(tf.equal(target_tokens, UNK_TOKEN), picked, target_tokens)


def graph_join_tokens(tokens):
    """(B,) tf.string: the text of each row of `tokens` (B, T): SentencePiece pieces
    (`WORD_START` begins a word) glued, word-level tokens joined by spaces (`JOINER` glues a
    token to the one before); "" and END are dropped."""
    kept = tf.ragged.boolean_mask(
        tokens, tf.not_equal(tokens, "") & tf.not_equal(tokens, END_TOKEN)
    )
    pieces = tf.reduce_any(_starts_with(kept, WORD_START), axis=1)
    glued = tf.strings.reduce_join(kept, axis=1)
    glued = tf.strings.strip(tf.strings.regex_replace(glued, WORD_START, " "))
    spaced = tf.strings.reduce_join(kept, axis=1, separator=" ")
    spaced = tf.strings.regex_replace(spaced, " " + JOINER, "")
    spaced = tf.strings.regex_replace(spaced, "^" + JOINER, "")
    return tf.where(pieces, glued, spaced)


def graph_replace_unknown(source_words, target_tokens, weights, translations, dictionary=None):
    """(B,) tf.string: the rows of `target_tokens` that hold `<unk>` as text with it
    replaced (`graph_replaced_tokens`, `graph_join_tokens`); `translations` (B,) for the
    others."""
    text = graph_join_tokens(
        graph_replaced_tokens(source_words, target_tokens, weights, dictionary)
    )
    unknown = tf.reduce_any(tf.equal(target_tokens, UNK_TOKEN), axis=1)
    return tf.where(unknown, text, translations)


def padded_batch(rows, width=None):
    """Lists of str -> (B, max(width, longest)) tf.string, "" padding."""
    width = max([len(row) for row in rows] + [width or 0])
    return tf.constant([list(row) + [""] * (width - len(row)) for row in rows], tf.string,
                       shape=[len(rows), width])  # fmt: skip


def _as_texts(tensor):
    return [x.decode("utf-8") for x in np.asarray(tensor).reshape([-1])]


def replaced_tokens(source_words, target_tokens, weights, dictionary=None):
    """`target_tokens` (list of str, END last or not) with each `<unk>` replaced by the
    source word of highest weight in its row of `weights` (T, Ts), or by its translation in
    `dictionary` (`graph_replaced_tokens` on one sentence). The replacement stands as a word
    of its own (SentencePiece: it starts with the word-start mark; word level: no joiner)."""
    weights = np.asarray(weights, np.float32)
    if len(target_tokens) and tuple(weights.shape) != (len(target_tokens), len(source_words)):
        raise ValueError(
            f"weights must have shape (len(target_tokens), len(source_words)) = "
            f"{(len(target_tokens), len(source_words))}, received {tuple(weights.shape)}: pass "
            "the source's tokens position by position."
        )
    if not len(source_words) or not len(target_tokens):  # nothing to copy, or to replace
        return list(target_tokens)
    replaced = graph_replaced_tokens(
        padded_batch([source_words]), padded_batch([target_tokens]), weights[None], dictionary
    )
    return _as_texts(replaced)


def join_tokens(tokens):
    """Text from word-level tokens (`JOINER` glues a token to the one before) or from
    SentencePiece pieces (`WORD_START` begins a word); END is dropped (`graph_join_tokens`)."""
    return _as_texts(graph_join_tokens(padded_batch([tokens])))[0]


def replace_unknown(source_words, target_tokens, weights, dictionary=None):
    """The translation's text with its `<unk>` tokens replaced (`replaced_tokens`)."""
    return join_tokens(replaced_tokens(source_words, target_tokens, weights, dictionary))


def replace_unknown_rows(source_words, target_tokens, weights, translations, dictionary=None):
    """`replace_unknown` over many sentences in one `graph_replace_unknown` call: a list of
    str, `translations[i]` where `target_tokens[i]` holds no `<unk>`.

    Args:
        source_words, target_tokens, weights: per sentence, as `replaced_tokens` takes them.
        translations: per sentence, its text as translated.
        dictionary: optional {source word: translation}.
    """
    texts = list(translations)
    rows = [i for i, tokens in enumerate(target_tokens) if UNK_TOKEN in tokens]
    rows = [i for i in rows if len(source_words[i])]  # no source word: nothing to copy
    for i in rows:
        shape, expected = np.shape(weights[i]), (len(target_tokens[i]), len(source_words[i]))
        if tuple(shape) != expected:
            raise ValueError(
                f"weights[{i}] must have shape (len(target_tokens), len(source_words)) = "
                f"{expected}, received {tuple(shape)}."
            )
    if not rows:
        return texts
    words = padded_batch([source_words[i] for i in rows])
    tokens = padded_batch([target_tokens[i] for i in rows])
    padded = np.zeros([len(rows), tokens.shape[1], words.shape[1]], np.float32)
    for row, i in enumerate(rows):
        padded[row, : len(target_tokens[i]), : len(source_words[i])] = weights[i]
    given = tf.constant([texts[i] for i in rows], tf.string)
    replaced = graph_replace_unknown(words, tokens, padded, given, dictionary)
    for i, text in zip(rows, _as_texts(replaced), strict=True):
        texts[i] = text
    return texts


def replace_unknown_in(translations, source_words, dictionary=None):
    """`replace_unknown_rows` of `zoo.translation.Translation`s, whose `source_tokens`
    stand in `source_words` (per translation, its source tokens as written)."""
    return replace_unknown_rows(
        source_words,
        [t.target_tokens for t in translations],
        [t.weights for t in translations],
        [t.translation for t in translations],
        dictionary,
    )
