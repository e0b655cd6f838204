"""Hard word alignments read from attention, in the Pharaoh format, and their AER.

Luong et al. (2015, section 5.4) score the alignments their attention learns with the
alignment error rate of Och and Ney (2003). Here:

- `word_indices(tokens)`: the word (a whitespace-separated unit of the text) each token
  belongs to. SentencePiece pieces start a word with "▁" (U+2581); the word-level and
  WordPiece tokens of `zoo.text` continue one with the prefix "##".
- `hard_alignment(source_tokens, target_tokens, weights)`: for every target token but the
  final END, the source token of highest attention weight; the links are the (source word,
  target word) pairs these give, without repeats, sorted.
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

import numpy as np

from zoo.constants import END_TOKEN
from zoo.text.vocabulary import JOINER, WORD_START


def word_indices(tokens):
    """The 0-based word index of each token (see the module docstring)."""
    tokens = list(tokens)
    sentencepiece = any(token.startswith(WORD_START) for token in tokens)
    indices, word = [], -1
    for position, token in enumerate(tokens):
        starts = token.startswith(WORD_START) if sentencepiece else not token.startswith(JOINER)
        if starts or position == 0:
            word += 1
        indices.append(word)
    return indices


def hard_alignment(source_tokens, target_tokens, weights):
    """Sorted (source word, target word) links from the arg-max of each target row.

    Args:
        source_tokens: the source's tokens (Ts of them).
        target_tokens: the output's tokens, END (`</s>`) last when present (T of them).
        weights: (T, Ts) attention weights, row t for target token t.
    Returns:
        a sorted list of (i, j) int pairs; empty when either side has no token.
    """
    source_tokens, target_tokens = list(source_tokens), list(target_tokens)
    if target_tokens and target_tokens[-1] == END_TOKEN:
        target_tokens = target_tokens[:-1]
    weights = np.asarray(weights, dtype=np.float32)
    if not source_tokens or not target_tokens:
        return []
    expected = (len(target_tokens), len(source_tokens))
    if weights.ndim != 2 or weights.shape[0] < expected[0] or weights.shape[1] != expected[1]:
        raise ValueError(
            f"hard_alignment needs weights of shape (target tokens, source tokens) = "
            f"{expected} (an END row may follow), received {weights.shape}."
        )
    source_words, target_words = word_indices(source_tokens), word_indices(target_tokens)
    best = np.argmax(weights[: len(target_tokens)], axis=1)
    return sorted({(source_words[s], target_words[t]) for t, s in enumerate(best)})


def format_pharaoh(links):
    """`[(0, 0), (1, 2)]` -> `"0-0 1-2"`."""
    return " ".join(f"{i}-{j}" for i, j in links)


def parse_gold(line, where="gold alignment"):
    """A gold line `"0-0 1?2 ..."` -> (sure, possible) sets of (i, j) links (`i-j` sure,
    `i?j` possible); a ValueError names the malformed link."""
    sure, possible = set(), set()
    for link in line.split():
        separator = "?" if "?" in link else "-"
        left, _, right = link.partition(separator)
        if not (left.isdigit() and right.isdigit()):
            raise ValueError(
                f"{where}: {link!r} is not a link; expected i-j (sure) or i?j (possible), "
                "0-based source index first."
            )
        (sure if separator == "-" else possible).add((int(left), int(right)))
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
    import tensorflow as tf  # tf.string in, as the pipelines take it

    from zoo.data import encode_source, encode_target

    if len(sources) != len(targets):
        raise ValueError(
            f"forced_alignments needs one target per source: {len(sources)} sources, "
            f"{len(targets)} targets."
        )
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    links = []
    for start in range(0, len(sources), batch_size):
        source_ids = encode_source(
            source_tokenizer, tf.constant(sources[start : start + batch_size])
        )
        target_in, target_out = encode_target(
            target_tokenizer, tf.constant(targets[start : start + batch_size])
        )
        memory, mask, states = encoder(source_ids, training=False)
        cache = decoder.prepare(memory, mask, states)
        state = decoder.initial_state(cache)
        rows = []
        for t in range(int(target_in.shape[1])):  # row t: the weights emitting target_out[t]
            _, state, weights = decoder.step(target_in[:, t], state, cache, training=False)
            rows.append(np.asarray(weights, dtype=np.float32))
        weights = np.stack(rows, axis=1)  # (B, T, Ts)
        source_ids, target_out = np.asarray(source_ids), np.asarray(target_out)
        for b in range(source_ids.shape[0]):
            source_row = source_ids[b][source_ids[b] != 0]
            target_row = target_out[b][target_out[b] != 0]
            source_tokens = _tokens(source_tokenizer, source_row)
            target_tokens = _tokens(target_tokenizer, target_row)
            n, m = len(source_tokens), len(target_tokens)
            links.append(hard_alignment(source_tokens, target_tokens, weights[b, :m, :n]))
    return links


def _tokens(tokenizer, ids):
    import tensorflow as tf

    pieces = tokenizer.id_to_token(tf.constant(ids, tf.int32)).numpy()
    return [p.decode("utf-8") if isinstance(p, bytes) else str(p) for p in pieces]
