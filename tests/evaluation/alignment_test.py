"""Word alignments from attention (Pharaoh format) and the alignment error rate, against
hand-computed references."""

import numpy as np
import pytest

from zoo.evaluation import (
    alignment_error_rate,
    forced_alignments,
    format_pharaoh,
    hard_alignment,
    hard_alignments,
    parse_gold,
    word_indices,
)


def test_word_indices_follow_each_tokenizers_word_marks():
    assert word_indices(["▁Ein", "▁Hun", "d", "▁rennt", "."]) == [0, 1, 1, 2, 2]
    assert word_indices(["ein", "hund", "##.", "zwei"]) == [0, 1, 1, 2]
    assert word_indices(["Ein", "##e"]) == [0, 0] and word_indices([]) == []


def test_hard_alignment_takes_each_target_rows_arg_max_per_word():
    source = ["▁zwei", "▁Hun", "de"]  # words: zwei, Hunde
    target = ["▁two", "▁do", "gs", "</s>"]  # words: two, dogs; END row ignored
    weights = np.array(
        [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3], [1.0, 0.0, 0.0]], "float32"
    )
    links = hard_alignment(source, target, weights)
    assert links == [(0, 0), (1, 1)]  # "do" and "gs" both on "Hunde": one link
    assert format_pharaoh(links) == "0-0 1-1"
    assert hard_alignment([], target, np.zeros((4, 0))) == []
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        hard_alignment(source, target, weights[:, :2])


def _reference_links(source, target, weights):
    """NumPy: each target token's arg-max source token, both mapped to words by '▁' marks."""

    def words(tokens):
        index, out = -1, []
        for k, token in enumerate(tokens):
            index += 1 if k == 0 or token.startswith("▁") else 0
            out.append(index)
        return out

    target = target[:-1] if target and target[-1] == "</s>" else target
    source_words, target_words = words(source), words(target)
    return sorted(
        {(source_words[int(np.argmax(weights[t]))], target_words[t]) for t in range(len(target))}
    )


def test_a_batch_of_alignments_equals_each_sentence_alone_and_the_reference():
    rng = np.random.default_rng(0)
    sources, targets, weights = [], [], []
    for n in range(12):
        ts, tt = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        # SentencePiece pieces: "▁" starts a word (always the first piece), others continue it
        sources.append([("▁" if k == 0 or rng.random() < 0.6 else "") + f"s{k}" for k in range(ts)])
        targets.append([("▁" if k == 0 or rng.random() < 0.6 else "") + f"t{k}" for k in range(tt)])
        targets[-1] += ["</s>"] if n % 2 else []
        weights.append(rng.random((len(targets[-1]), ts)).astype("float32"))
    sources.append([])  # no source token: no link
    targets.append(["▁a"])
    weights.append(np.zeros((1, 0), "float32"))
    batch = hard_alignments(sources, targets, weights)
    for source, target, w, links in zip(sources, targets, weights, batch, strict=True):
        assert links == hard_alignment(source, target, w)
        assert links == (_reference_links(source, target, w) if source else [])


def test_aer_on_a_small_hand_made_gold_file():
    gold = ["0-0 1-1 2?1 2?2", "0-0 1-1"]
    sure, possible = zip(*(parse_gold(line) for line in gold), strict=True)
    assert sure[0] == {(0, 0), (1, 1)} and possible[0] == {(2, 1), (2, 2)}
    predicted = [{(0, 0), (1, 1), (2, 1)}, {(0, 0), (1, 2)}]
    # |A∩S| = 2 + 1, |A∩P| = 3 + 1, |A| = 3 + 2, |S| = 2 + 2: AER = 1 - 7/9.
    scores = alignment_error_rate(predicted, sure, possible)
    assert scores["aer"] == pytest.approx(2 / 9)
    assert scores["precision"] == pytest.approx(4 / 5) and scores["recall"] == pytest.approx(3 / 4)
    assert alignment_error_rate([sure[0]], [sure[0]], [set()])["aer"] == 0.0
    assert alignment_error_rate([{(5, 5)}], [sure[1]], [set()])["aer"] == 1.0
    with pytest.raises(ValueError, match="'1x2' is not a link"):
        parse_gold("0-0 1x2")
    with pytest.raises(ValueError, match="one gold line per sentence"):
        alignment_error_rate(predicted, sure[:1], possible[:1])


def test_forced_alignments_read_the_teacher_forced_attention(data_dir):
    """The links equal the arg-max of the attention a step loop computes on the reference."""
    from translator_toy import toy_translator

    translator = toy_translator("luong_global_general", beam_size=1)
    sources, targets = ["Ein Hund rennt.", "Zwei Männer"], ["A dog runs.", "Two men"]
    links = forced_alignments(
        translator.model, translator.source_tokenizer, translator.target_tokenizer,
        sources, targets, batch_size=1,
    )  # fmt: skip
    assert len(links) == 2 and all(links)
    for (source, target), pairs in zip(zip(sources, targets, strict=True), links, strict=True):
        # Every target word is linked once or more, to a word of the source.
        assert {j for _, j in pairs} == set(range(len(target.split())))
        assert all(0 <= i < len(source.split()) for i, _ in pairs)


def test_a_padded_batch_links_each_row_as_it_links_alone():
    """graph_alignment_links (the translator's graph and the SavedModel run it) on rows of
    different lengths, padded, against hard_alignment on each row."""
    import tensorflow as tf

    from zoo.evaluation.alignment import graph_alignment_links, graph_pharaoh

    rng = np.random.default_rng(0)
    rows = [
        (["▁zwei", "▁Hun", "de"], ["▁two", "▁do", "gs"]),
        (["ein", "hund", "##."], ["a", "dog", "##.", "runs"]),
        (["x"], []),  # no target word: no link
        ([], ["a"]),  # no source token: no link
    ]
    weights = np.zeros((len(rows), 4, 3), np.float32)
    for b, (source, target) in enumerate(rows):
        weights[b, : len(target), : len(source)] = rng.random((len(target), len(source)))

    def padded(side):
        return tf.constant([[*r[side], *[""] * (4 - len(r[side]))] for r in rows])[:, :4]

    links = graph_alignment_links(
        padded(0)[:, :3], [len(r[0]) for r in rows], padded(1), [len(r[1]) for r in rows],
        weights,
    )  # fmt: skip
    expected = [
        hard_alignment(s, t, weights[b, : len(t), : len(s)]) for b, (s, t) in enumerate(rows)
    ]
    assert [[tuple(x) for x in row] for row in links.to_list()] == expected
    assert expected[0] and expected[1] and expected[2] == expected[3] == []
    texts = [x.decode() for x in graph_pharaoh(links).numpy()]
    assert texts == [format_pharaoh(e) for e in expected]
