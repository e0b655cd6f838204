"""The target texts a search is given: prefixes its translations start with and phrases they
contain, tokenized and checked before the search (`zoo.translator.graph.search_inputs`).

A text whose tokenization holds `<unk>` is refused (`TargetTextError`, naming the words or
characters the target vocabulary lacks): the search would write `<unk>` into the translation
(detokenized as "⁇"), and with `ban_unknown` it could not finish at all. A phrase that
repeats an n-gram `no_repeat_ngram_size` bans is refused too. Sentences without
a prefix or phrases cost nothing here.
"""

import tensorflow as tf

from zoo.constants import UNK_ID
from zoo.text.vocabulary import JOINER


class TargetTextError(ValueError):
    """A prefix or constraint phrase the search cannot honour.

    Attributes: `argument` ("prefix" or "constraints"), `index` (the sentence's, 0-based)
    and `reason` (what is wrong with its text), so that a caller can name the input the way
    its user gave it (the command line: the file's line)."""

    def __init__(self, argument, index, reason):
        super().__init__(f"{argument}[{index}]: {reason}")
        self.argument = argument
        self.index = index
        self.reason = reason


def tokenize_texts(tokenizer, texts):
    """The target ids of `texts` (a list of str), tokenized as the targets are (no START or
    END), in one call: a list of lists of int."""
    if not texts:
        return []
    return tokenizer.tokenize(tf.constant(texts, tf.string)).to_list()


def unknown_parts(tokenizer, text):
    """What of `text` the target vocabulary lacks: ("words", the words a word tokenizer maps
    to `<unk>`), else ("characters", those that are `<unk>` on their own: SentencePiece,
    WordPiece), else ("text", [text]) when only their combination is."""
    if hasattr(tokenizer, "split"):  # a word tokenizer: a word is known or not
        words = tokenizer.split(tf.constant([text], tf.string)).to_list()[0]
        ids = tokenize_texts(tokenizer, [text])[0]
        unknown = [w.decode("utf-8") for w, i in zip(words, ids, strict=True) if i == UNK_ID]
        return "words", list(dict.fromkeys(w.removeprefix(JOINER) for w in unknown))
    characters = list(dict.fromkeys(text))
    ids = tokenize_texts(tokenizer, characters)
    unknown = [c for c, c_ids in zip(characters, ids, strict=True) if UNK_ID in c_ids]
    return ("characters", unknown) if unknown else ("text", [text])


def check_target_ids(tokenizer, argument, index, text, ids, what):
    """A `TargetTextError` when `ids`, the tokenization of sentence `index`'s `text` (its
    prefix or one of its phrases, `what` names which), is empty (a phrase only) or holds
    `<unk>`."""
    if not ids and argument == "constraints":
        raise TargetTextError(argument, index, f"the constraint {text!r} has no target tokens.")
    if UNK_ID not in ids:
        return
    kind, parts = unknown_parts(tokenizer, text)
    shown = ", ".join(repr(p) for p in parts[:10])
    shown += f" and {len(parts) - 10} more" if len(parts) > 10 else ""
    raise TargetTextError(
        argument,
        index,
        f"{what} {text!r} holds {kind} that the target vocabulary lacks ({shown}): the "
        "translation would hold <unk> (shown as ⁇) in their place; remove or replace them.",
    )


def check_prefix_texts(tokenizer, prefixes):
    """A `TargetTextError` for the first of `prefixes` (one str per sentence, "" for none)
    whose tokenization holds `<unk>`; one tokenizer call for the non-empty ones."""
    given = [(i, text) for i, text in enumerate(prefixes) if text]
    ids = tokenize_texts(tokenizer, [text for _, text in given])
    if not any(UNK_ID in row for row in ids):
        return
    for (index, text), row in zip(given, ids, strict=True):
        check_target_ids(tokenizer, "prefix", index, text, row, "the prefix")


def check_repeats(index, text, ids, no_repeat_ngram_size):
    """A `TargetTextError` when phrase `text` (target `ids`) of sentence `index` holds an
    n-gram twice, n = `no_repeat_ngram_size` (0: off): no translation could contain it."""
    n = no_repeat_ngram_size
    grams = [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)] if n else []
    if len(set(grams)) < len(grams):
        raise TargetTextError(
            "constraints",
            index,
            f"the constraint {text!r} repeats a sequence of {n} target token(s), which "
            f"no_repeat_ngram_size={n} forbids: no translation could contain it; lower "
            "no_repeat_ngram_size or change the phrase.",
        )


def phrase_ids(tokenizer, constraints, no_repeat_ngram_size=0):
    """The target ids of `constraints` (per sentence, a list of phrases), checked: per
    sentence, a list of its phrases' id lists; a `TargetTextError` names the first phrase
    with no tokens, with `<unk>`, or repeating an n-gram that `no_repeat_ngram_size` bans."""
    flat = [phrase for phrases in constraints for phrase in phrases]
    ids = tokenize_texts(tokenizer, flat)
    rows, start = [], 0
    for index, phrases in enumerate(constraints):
        row = ids[start : start + len(phrases)]
        for text, text_ids in zip(phrases, row, strict=True):
            check_target_ids(tokenizer, "constraints", index, text, text_ids, "the constraint")
            check_repeats(index, text, text_ids, no_repeat_ngram_size)
        rows.append(row)
        start += len(phrases)
    return rows
