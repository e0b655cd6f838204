"""Hard word alignments read from attention, in the Pharaoh format, and their AER.

Luong et al. (2015, section 5.4) score the alignments their attention learns with the
alignment error rate of Och and Ney (2003). Here:

- `word_indices(tokens)`: the word (a whitespace-separated unit of the text) each token
  belongs to. SentencePiece pieces start a word with "▁" (U+2581); the word-level and
  WordPiece tokens of `zoo.text` continue one with the prefix "##".
- `hard_alignment(source_tokens, target_tokens, weights)`: for every target token but the
  final END, the source token of highest attention weight; the links are the (source word,
  target word) pairs these give, without repeats, sorted. It runs
  `graph_alignment_links`, the same rule in TensorFlow ops over a padded batch, which the
  translator's graph (the SavedModel's `alignment` output, `graph_pharaoh`) and
  `forced_alignments` run too: one implementation.
- `format_pharaoh(links)` writes them as `"0-0 1-2 ..."` (source index first, 0-based);
  `parse_gold(line)` reads a gold line whose links are `i-j` (sure) or `i?j` (possible).
- `alignment_error_rate(predicted, sure, possible)`: over a corpus,
  `AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)` with the sure links S counted as possible
  too (S ⊆ P), as Och and Ney define it.

Example:
    >>> links = hard_alignment(["▁ein", "▁Hund"], ["▁a", "▁dog", "</s>"],
    ...                        [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    >>> format_pharaoh(links)
    '0-0 1-1'
"""

import functools

import numpy as np
import tensorflow as tf

from zoo.constants import END_TOKEN
from zoo.text.vocabulary import JOINER, WORD_START


def starts_with(tokens, prefix):
    """Bool tensor: which `tf.string` tokens start with `prefix` (str.startswith)."""
    size = len(prefix.encode("utf-8"))
    return tf.equal(tf.strings.substr(tokens, 0, size), prefix)


def graph_word_indices(tokens, lengths):
    """(B, N) int32: the word index of each of the `lengths` (B,) first `tokens` (B, N)
    (tf.string) of each row, by the rule of the module docstring: a row holding a
    SentencePiece piece starts words at "▁", any other row at every token without "##"."""
    n = tf.shape(tokens)[1]
    real = tf.sequence_mask(lengths, n)
    marked = starts_with(tokens, WORD_START)
    sentencepiece = tf.reduce_any(marked & real, axis=1, keepdims=True)
    starts = tf.where(sentencepiece, marked, tf.logical_not(starts_with(tokens, JOINER)))
    starts = (starts | tf.equal(tf.range(n), 0)[None, :]) & real
    return tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1


def graph_alignment_links(source_tokens, source_lengths, target_tokens, target_lengths, weights):
    """The hard alignment of a batch, in TensorFlow ops (what `hard_alignment` runs and the
    SavedModel's `alignment` output holds).

    Args:
        source_tokens: (B, Ts) tf.string, the first `source_lengths` (B,) of each row real.
        target_tokens: (B, T) tf.string, the first `target_lengths` (B,) of each row the
            target's words (END not among them).
        weights: (B, T, Ts) attention weights, row t for target token t.
    Returns:
        ragged (B, None, 2) int32: each row's (source word, target word) links, sorted,
        without repeats; none for a row without source or target tokens.
    """
    weights = tf.convert_to_tensor(weights)
    steps = tf.shape(weights)[1]
    target_lengths = tf.cast(target_lengths, tf.int32)
    source_lengths = tf.cast(source_lengths, tf.int32)
    source_words = graph_word_indices(source_tokens, source_lengths)
    target_words = graph_word_indices(target_tokens, target_lengths)
    best = tf.argmax(weights, axis=2, output_type=tf.int32)  # (B, T)
    i = tf.gather(source_words, best, batch_dims=1)
    valid = tf.sequence_mask(target_lengths, steps) & (source_lengths > 0)[:, None]
    key = tf.where(valid, i * (steps + 1) + target_words, tf.int32.max)
    key = tf.sort(key, axis=1)
    new = tf.concat([tf.ones_like(key[:, :1], tf.bool), key[:, 1:] > key[:, :-1]], axis=1)
    key = tf.ragged.boolean_mask(key, new & (key < tf.int32.max))
    return tf.stack([key // (steps + 1), key % (steps + 1)], axis=-1)


def graph_pharaoh(links):
    """Ragged (B, None, 2) links -> (B,) tf.string in the Pharaoh format ("0-0 1-2")."""
    text = tf.strings.as_string(links[..., 0]) + "-" + tf.strings.as_string(links[..., 1])
    return tf.strings.reduce_join(text, axis=1, separator=" ")


@functools.cache
def _links_function():
    """`graph_alignment_links` as a `tf.function` traced once, its links padded with -1
    (a dense result returns faster than a ragged one): the eager path's speed."""
    strings, lengths = tf.TensorSpec([None, None], tf.string), tf.TensorSpec([None], tf.int32)
    return tf.function(
        lambda *args: graph_alignment_links(*args).to_tensor(-1),
        input_signature=[
            strings,
            lengths,
            strings,
            lengths,
            tf.TensorSpec([None, None, None], tf.float32),
        ],
        autograph=False,
    )


def word_indices(tokens):
    """The 0-based word index of each token (see the module docstring)."""
    tokens = list(tokens)
    strings = tf.constant(tokens, tf.string, shape=[1, len(tokens)])
    return graph_word_indices(strings, [len(tokens)])[0].numpy().tolist()


def hard_alignment(source_tokens, target_tokens, weights):
    """Sorted (source word, target word) links from the arg-max of each target row
    (`graph_alignment_links` on one sentence).

    Args:
        source_tokens: the source's tokens (Ts of them).
        target_tokens: the output's tokens, END (`</s>`) last when present (T of them).
        weights: (T, Ts) attention weights, row t for target token t.
    Returns:
        a sorted list of (i, j) int pairs; empty when either side has no token.
    """
    return hard_alignments([source_tokens], [target_tokens], [weights])[0]


def hard_alignments(sources, targets, weights):
    """`hard_alignment` of many sentences in one call of the graph (faster than one call a
    sentence): lists of source tokens, output tokens and (T, Ts) weights, one entry a
    sentence; returns one sorted list of (i, j) links a sentence."""
    rows = []
    for source_tokens, target_tokens, sentence_weights in zip(
        sources, targets, weights, strict=True
    ):
        source_tokens, target_tokens = list(source_tokens), list(target_tokens)
        if target_tokens and target_tokens[-1] == END_TOKEN:
            target_tokens = target_tokens[:-1]
        sentence_weights = np.asarray(sentence_weights, dtype=np.float32)
        expected = (len(target_tokens), len(source_tokens))
        if (
            source_tokens
            and target_tokens
            and (
                sentence_weights.ndim != 2
                or sentence_weights.shape[0] < expected[0]
                or sentence_weights.shape[1] != expected[1]
            )
        ):
            raise ValueError(
                f"hard_alignment needs weights of shape (target tokens, source tokens) = "
                f"{expected} (an END row may follow), received {sentence_weights.shape}."
            )
        rows.append((source_tokens, target_tokens, sentence_weights))
    kept = [i for i, (source, target, _) in enumerate(rows) if source and target]
    result = [[] for _ in rows]
    if not kept:
        return result
    longest_source = max(len(rows[i][0]) for i in kept)
    longest_target = max(len(rows[i][1]) for i in kept)
    padded = np.zeros((len(kept), longest_target, longest_source), np.float32)
    for k, i in enumerate(kept):
        source, target, sentence_weights = rows[i]
        padded[k, : len(target), : len(source)] = sentence_weights[: len(target)]
    links = _links_function()(
        tf.constant([rows[i][0] + [""] * (longest_source - len(rows[i][0])) for i in kept]),
        [len(rows[i][0]) for i in kept],
        tf.constant([rows[i][1] + [""] * (longest_target - len(rows[i][1])) for i in kept]),
        [len(rows[i][1]) for i in kept],
        padded,
    ).numpy()
    for k, i in enumerate(kept):
        result[i] = [(int(a), int(b)) for a, b in links[k] if a >= 0]
    return result


def format_pharaoh(links):
    """`[(0, 0), (1, 2)]` -> `"0-0 1-2"`."""
    return " ".join(f"{i}-{j}" for i, j in links)


def parse_gold(line, where="gold alignment", source_words=None, target_words=None):
    """A gold line `"0-0 1?2 ..."` -> (sure, possible) sets of (i, j) links (`i-j` sure,
    `i?j` possible, ASCII digits); a ValueError, prefixed with `where`, names a malformed
    link, or, given the pair's `source_words` and `target_words` counts, a link past them."""
    sure, possible = set(), set()
    for link in line.split():
        separator = "?" if "?" in link else "-"
        left, _, right = link.partition(separator)
        if not all(side.isascii() and side.isdigit() for side in (left, right)):
            raise ValueError(
                f"{where}: {link!r} is not a link; expected i-j (sure) or i?j (possible), "
                "0-based source index first, in ASCII digits."
            )
        i, j = int(left), int(right)
        for index, count, side in ((i, source_words, "source"), (j, target_words, "target")):
            if count is not None and index >= count:
                raise ValueError(
                    f"{where}: the link {link!r} names {side} word {index} (0-based), but the "
                    f"{side} sentence has {count} word(s)."
                )
        (sure if separator == "-" else possible).add((i, j))
    return sure, possible


def alignment_error_rate(predicted, sure, possible):
    """Corpus AER of the predicted link sets against the gold sure / possible sets.

    Args:
        predicted, sure, possible: equal-length sequences of sets of (i, j) links, one per
            sentence (sure links count as possible too).
    Returns:
        dict: `aer` (0 is perfect), `precision` (|A ∩ P| / |A|), `recall` (|A ∩ S| / |S|)
        and the counts `predicted`, `sure`.
    """
    if not len(predicted) == len(sure) == len(possible):
        raise ValueError(
            f"alignment_error_rate needs one gold line per sentence: {len(predicted)} "
            f"predicted, {len(sure)} gold sentences."
        )
    a_s = a_p = n_a = n_s = 0
    for links, s, p in zip(predicted, sure, possible, strict=True):
        links, s = set(links), set(s)
        p = set(p) | s
        a_s += len(links & s)
        a_p += len(links & p)
        n_a += len(links)
        n_s += len(s)
    total = n_a + n_s
    return {
        "aer": 1.0 - (a_s + a_p) / total if total else 0.0,
        "precision": a_p / n_a if n_a else 0.0,
        "recall": a_s / n_s if n_s else 0.0,
        "predicted": n_a,
        "sure": n_s,
    }


def forced_alignments(model, source_tokenizer, target_tokenizer, sources, targets, batch_size=32):
    """Links of each (source, target) pair from teacher-forced attention: the model is made
    to output the given target (as Luong et al. 2015, section 5.4, score their alignments).

    Args:
        model: a zoo translation model (layers "encoder" and "decoder", docs/design.md).
        source_tokenizer, target_tokenizer: its `zoo.text` tokenizers.
        sources, targets: equal-length lists of sentences.
        batch_size: pairs per forward pass.
    Returns:
        a list of sorted (i, j) link lists, one per pair (`hard_alignment`).
    """
    from zoo.data import encode_target
    from zoo.text.preprocessor import encode, padded_tokens

    if len(sources) != len(targets):
        raise ValueError(
            f"forced_alignments needs one target per source: {len(sources)} sources, "
            f"{len(targets)} targets."
        )
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    links = []
    for start in range(0, len(sources), batch_size):
        source_ids, source_lengths = encode(
            source_tokenizer, tf.constant(sources[start : start + batch_size], tf.string)
        )
        target_in, target_out = encode_target(
            target_tokenizer, tf.constant(targets[start : start + batch_size], tf.string)
        )
        memory, mask, states = encoder(source_ids, training=False)
        cache = decoder.prepare(memory, mask, states)
        state = decoder.initial_state(cache)
        rows = []
        for t in range(int(target_in.shape[1])):  # row t: the weights emitting target_out[t]
            _, state, weights = decoder.step(target_in[:, t], state, cache, training=False)
            rows.append(tf.cast(weights, tf.float32))
        target_lengths = tf.reduce_sum(tf.cast(tf.not_equal(target_out, 0), tf.int32), axis=1)
        batch = graph_alignment_links(
            padded_tokens(source_tokenizer, source_ids, source_lengths),
            source_lengths,
            padded_tokens(target_tokenizer, target_out, target_lengths),
            target_lengths - 1,  # the END row is no word
            tf.stack(rows, axis=1),  # (B, T, Ts)
        )
        links += [[(int(i), int(j)) for i, j in row] for row in batch.to_list()]
    return links
