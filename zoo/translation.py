"""`Translation`: one translated sentence with its tokens and attention weights; and the
input checks, the batching runner and the output conversions that the `Translator` and the
exported `SavedModelTranslator` share."""

import dataclasses

import numpy as np


@dataclasses.dataclass
class Translation:
    """One sentence as translated by `zoo.translator.Translator.translate_with_attention`.

    Attributes:
        source: the input sentence (`str`, as given).
        translation: the detokenised output (`str`; `""` for an empty source).
        score: the search score of the hypothesis (float; with `length_penalty=0` the sum of
            its token log-probabilities, END included; 0.0 for an empty source).
        source_tokens: the source's pieces (`list[str]`, Ts of them; no END token).
        target_tokens: the generated pieces (`list[str]`, T of them, the END token `</s>`
            last, since the decoder attends when emitting it too).
        weights: `np.ndarray` float32 `(len(target_tokens), len(source_tokens))`; row t is
            the attention used to emit target token t (Bahdanau et al. 2014, fig. 3).

    Example:
        >>> t = translator.translate_with_attention(["Ein Hund rennt."])[0]  # doctest: +SKIP
        >>> t.weights.shape == (len(t.target_tokens), len(t.source_tokens))  # doctest: +SKIP
        True
        >>> t.plot("attention.png")                                            # doctest: +SKIP
    """

    source: str
    translation: str
    score: float
    source_tokens: list
    target_tokens: list
    weights: np.ndarray

    def __post_init__(self):
        expected = (len(self.target_tokens), len(self.source_tokens))
        if tuple(np.shape(self.weights)) != expected:
            raise ValueError(
                f"Translation weights must have shape (len(target_tokens), len(source_tokens)) "
                f"= {expected}, received {np.shape(self.weights)}."
            )

    def plot(self, path, title=None):
        """Writes the attention heatmap to `path` (`zoo.evaluation.plot_attention`)."""
        from zoo.evaluation import plot_attention

        return plot_attention(
            self.source_tokens, self.target_tokens, self.weights, path, title=title
        )

    def alignment(self):
        """The hard word alignment read from the weights, in the Pharaoh format ("0-0 1-2",
        source word index first; `zoo.evaluation.hard_alignment`)."""
        from zoo.evaluation import format_pharaoh, hard_alignment

        return format_pharaoh(hard_alignment(self.source_tokens, self.target_tokens, self.weights))

    def format_weights(self, digits=2):
        """The weights as a plain-text table (target rows, source columns)."""
        width = max([len(t) for t in self.source_tokens] + [digits + 2, 1])
        left = max([len(t) for t in self.target_tokens] + [1])
        lines = [" " * left + " " + " ".join(f"{t:>{width}}" for t in self.source_tokens)]
        for token, row in zip(self.target_tokens, self.weights, strict=True):
            cells = " ".join(f"{w:>{width}.{digits}f}" for w in row)
            lines.append(f"{token:<{left}} {cells}")
        return "\n".join(lines)


def check_sentences(sentences, name="sentences"):
    """`sentences` as a list of str, or a ValueError naming what was received (a single
    string, a non-iterable, or the index of the first non-string or of the first string
    that is not valid Unicode, such as one with a lone surrogate). `name`: the argument's
    name in the messages."""
    if isinstance(sentences, (str, bytes)):
        raise ValueError(
            f"{name} must be a list of strings, received a single string; wrap it as "
            f"[{'sentence' if name == 'sentences' else 'text'}]."
        )
    try:
        sentences = list(sentences)
    except TypeError:
        raise ValueError(
            f"{name} must be a list of strings, received {type(sentences).__name__}."
        ) from None
    for index, sentence in enumerate(sentences):
        if not isinstance(sentence, str):
            raise ValueError(
                f"{name} must be a list of str, received {type(sentence).__name__} "
                f"{sentence!r} at index {index}."
            )
        try:
            sentence.encode("utf-8")
        except UnicodeEncodeError as error:  # a lone surrogate, e.g. "\ud800"
            raise ValueError(
                f"{name}[{index}] is not valid Unicode text: {error.reason} "
                f"({sentence[error.start : error.end]!r} at character {error.start} of "
                f"{sentence!r}); it cannot be written as UTF-8."
            ) from None
    return sentences


def check_prefixes(prefix, count):
    """None, or `prefix` as a list of `count` str: the target text each of `count`
    sentences' translations starts with ("" or None: none). A ValueError names what was
    received otherwise."""
    if prefix is None:
        return None
    if isinstance(prefix, (str, bytes)):
        raise ValueError(
            "prefix must be a list of strings, one per sentence; received a single string "
            "(wrap it as [prefix])."
        )
    try:
        prefix = ["" if p is None else p for p in prefix]
    except TypeError:
        raise ValueError(
            f"prefix must be a list of strings, one per sentence; received {type(prefix).__name__}."
        ) from None
    if len(prefix) != count:
        raise ValueError(
            f"prefix has {len(prefix)} entries for {count} sentences; give one per sentence "
            '("" for none).'
        )
    return check_sentences(prefix, "prefix")


def check_constraint_lists(constraints, count):
    """None, or `constraints` as `count` lists of str: the target phrases each sentence's
    translation must contain ([] or None: none). A ValueError names what was received
    otherwise (a phrase given as a bare string instead of a list, an empty phrase)."""
    if constraints is None:
        return None
    if isinstance(constraints, (str, bytes)):
        raise ValueError(
            "constraints must be a list, per sentence, of lists of target phrases; received "
            "a single string."
        )
    try:
        constraints = list(constraints)
    except TypeError:
        raise ValueError(
            "constraints must be a list, per sentence, of lists of target phrases; received "
            f"{type(constraints).__name__}."
        ) from None
    if len(constraints) != count:
        raise ValueError(
            f"constraints has {len(constraints)} entries for {count} sentences; give one "
            "list of phrases per sentence ([] for none)."
        )
    checked = []
    for index, phrases in enumerate(constraints):
        if phrases is None:
            phrases = []
        if isinstance(phrases, (str, bytes)) or not isinstance(phrases, (list, tuple)):
            raise ValueError(
                f"constraints[{index}] must be a list of target phrases (str), received "
                f"{phrases!r}; wrap a single phrase as [phrase]."
            )
        phrases = check_sentences(phrases, f"constraints[{index}]")
        for phrase in phrases:
            if not phrase.strip():
                raise ValueError(
                    f"constraints[{index}] holds an empty phrase {phrase!r}; a phrase needs "
                    "at least one word."
                )
        checked.append(phrases)
    return checked


def as_text(value):
    """A str from a str or UTF-8 bytes (a tf.string element's NumPy value)."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def to_translation(sentence, outputs):
    """A `Translation` from one row of `Translator.graph_translate`'s outputs (NumPy values
    of one sentence), cropped to its real source and target tokens."""
    n, t = int(outputs["source_lengths"]), int(outputs["target_lengths"])
    return Translation(
        source=sentence,
        translation=as_text(outputs["translation"]),
        score=float(outputs["score"]),
        source_tokens=[as_text(x) for x in outputs["source_tokens"][:n]],
        target_tokens=[as_text(x) for x in outputs["target_tokens"][:t]],
        weights=np.asarray(outputs["attention"][:t, :n], dtype=np.float32),
    )


def run_in_batches(sentences, batch_size, call, progress=False, lengths=None, extras=None):
    """Runs `call(strings, start)` over `sentences` (a checked list of str) in batches of
    `batch_size`, longest first, and returns one dict of NumPy values per sentence, in
    input order.

    `extras`: None, or a list of one value per sentence (what it asks besides its text,
    such as a target prefix): then `call(strings, start, rows)` gets the values of the
    batch's sentences too, `rows` in the order of `strings`.

    Sorting puts sentences of similar lengths together, so a batch pads little; the order
    is stable, so equal inputs give equal batches. `lengths` are the sentences' lengths in
    source tokens where the caller can count them (the `Translator`; a batch's padding is
    what its token counts differ by, which character counts only approximate), else None:
    their lengths in characters (a SavedModel keeps its tokenizer inside its graph).
    `strings` is a `tf.string` (b,) batch and `start` its position in the sorted order; `call` returns a dict of (b, ...) values. `progress`
    shows a tqdm bar of the sentences done."""
    import tensorflow as tf
    from tqdm.auto import tqdm

    if lengths is None:
        lengths = [len(sentence) for sentence in sentences]
    if extras is not None and len(extras) != len(sentences):
        raise ValueError(f"extras has {len(extras)} values for {len(sentences)} sentences.")
    order = sorted(range(len(sentences)), key=lambda i: -int(lengths[i]))
    outputs = [None] * len(sentences)
    with tqdm(total=len(sentences), unit="sent", desc="translate", disable=not progress) as bar:
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            strings = tf.constant([sentences[i] for i in batch], tf.string)
            if extras is None:
                result = call(strings, start)
            else:
                result = call(strings, start, [extras[i] for i in batch])
            result = {key: np.asarray(value) for key, value in result.items()}
            for row, index in enumerate(batch):
                outputs[index] = {key: value[row] for key, value in result.items()}
            bar.update(len(batch))
    return outputs


MAX_SOURCE_TOKENS = 1024
"""The longest sentence, in source tokens, that a translator searches whole: the search
holds buffers of every hypothesis' length (up to 1.5 times the source's, and 16 times at
most) and, with attention, of the source's length for each of its steps. `translate` splits
a longer sentence at spaces into pieces of at most this many tokens (`split_long`) and joins
their translations with a space; the calls that give tokens, attention or n-best lists per
sentence refuse it (`check_source_lengths`)."""


def check_source_lengths(lengths, limit=None):
    """A ValueError naming the first sentence of more than `limit` source tokens
    (`lengths`: each sentence's count; `limit` None: `MAX_SOURCE_TOKENS`)."""
    limit = MAX_SOURCE_TOKENS if limit is None else limit
    for index, length in enumerate(lengths):
        if length > limit:
            raise ValueError(
                f"sentence {index} has {int(length)} source tokens; at most {limit} "
                "(zoo.translation.MAX_SOURCE_TOKENS) are searched whole: translate() splits "
                "longer sentences into pieces, or split it before."
            )


def split_long(sentence, count_tokens, limit=None):
    """`sentence` (str) as a list of pieces of at most `limit` source tokens each, cut at
    spaces (a word longer than that between characters), which joined with spaces give its
    words again. `count_tokens(list of str)` gives each string's number of source tokens.
    Memory grows with the sentence's length, not its square. `limit` None:
    `MAX_SOURCE_TOKENS`."""
    limit = MAX_SOURCE_TOKENS if limit is None else limit
    words = sentence.split()
    if not words:
        return [sentence]
    counts = count_tokens(words)
    pieces, piece, size = [], [], 0
    for word, count in zip(words, counts, strict=True):
        count = int(count)
        if count > limit:  # one word of many tokens: cut between characters
            pieces.extend([" ".join(piece)] if piece else [])
            piece, size = [], 0
            pieces.extend(_cut_word(word, count, count_tokens, limit))
            continue
        if size + count > limit and piece:
            pieces.append(" ".join(piece))
            piece, size = [], 0
        piece.append(word)
        size += count
    if piece:
        pieces.append(" ".join(piece))
    return pieces


def _cut_word(word, count, count_tokens, limit):
    """`word` (of `count` > `limit` tokens) cut into parts of at most `limit` tokens."""
    step = max(1, len(word) * limit // (2 * count))  # half the limit's share of characters
    parts = [word[i : i + step] for i in range(0, len(word), step)]
    counts = count_tokens(parts)
    out = []
    for part, part_count in zip(parts, counts, strict=True):
        if int(part_count) > limit and len(part) > 1:
            half = len(part) // 2
            out.extend(_cut_word(part[:half], limit + 1, count_tokens, limit))
            out.extend(_cut_word(part[half:], limit + 1, count_tokens, limit))
        else:
            out.append(part)
    return out
