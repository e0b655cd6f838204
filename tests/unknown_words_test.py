"""Tests of zoo/unknown_words.py (Luong et al. 2015 section 4.1) and of the Translator's
`replace_unknown`, against the rule computed by hand from the returned attention."""

import keras
import numpy as np
import pytest
from translator_toy import VOCAB_SIZE, read_lines

from zoo.constants import UNK_ID
from zoo.models import build
from zoo.text import train_tokenizer
from zoo.translator import Translator
from zoo.unknown_words import join_tokens, read_dictionary, replace_unknown, replaced_tokens


def test_each_unk_becomes_the_most_attended_source_word_or_its_entry():
    source = ["Der", "Zyxwvut", "##.", "lief"]
    target = ["The", "<unk>", "ran", "<unk>", "##.", "</s>"]
    weights = np.full((6, 4), 0.1, "float32")
    weights[1, 1] = 0.7  # the first <unk> attends to "Zyxwvut"
    weights[3, 2] = 0.7  # the second to "##.": the word without its joiner
    assert replaced_tokens(source, target, weights) == [
        "The", "Zyxwvut", "ran", ".", "##.", "</s>",
    ]  # fmt: skip
    assert replace_unknown(source, target, weights, {"Zyxwvut": "Zorro"}) == "The Zorro ran .."
    # SentencePiece pieces: the replacement starts a word of its own.
    pieces = ["\u2581The", "<unk>", "\u2581ran", "</s>"]
    assert replace_unknown(
        ["\u2581Hund", "\u2581lief"], pieces, weights[:4, :2] + [[0, 1]] * 4
    ) == ("The lief ran")
    with pytest.raises(ValueError, match="weights must have shape"):
        replaced_tokens(source[:2], target, weights)
    assert join_tokens(["A", "dog", "##.", "</s>"]) == "A dog."


def test_read_dictionary(tmp_path):
    path = tmp_path / "lexicon.txt"
    path.write_text("# comment\nHund\tdog\nKatze cat\nHund hound\n\n", encoding="utf-8")
    assert read_dictionary(path) == {"Hund": "dog", "Katze": "cat"}  # the first entry wins
    path.write_text("Hund\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1"):
        read_dictionary(path)
    path.write_bytes(b"Hund\tdog\nK\xffatze\tcat\n")  # Latin-1, not UTF-8
    with pytest.raises(ValueError, match=f"{path}, line 2: invalid UTF-8"):
        read_dictionary(path)


@pytest.fixture(scope="module")
def unk_translator(data_dir):
    """Word-level tokenizers and a tiny model whose output layer always prefers <unk>."""
    source = train_tokenizer("word", read_lines("train.de"), vocab_size=VOCAB_SIZE)
    target = train_tokenizer("word", read_lines("train.en"), vocab_size=VOCAB_SIZE)
    keras.utils.set_random_seed(0)
    model = build(
        "luong_global_general",
        size="tiny",
        source_vocab_size=source.vocab_size,
        target_vocab_size=target.vocab_size,
    )
    bias = [w for w in model.weights if tuple(w.shape) == (target.vocab_size,)][-1]
    value = np.full(target.vocab_size, -30.0, "float32")
    value[UNK_ID] = 30.0
    bias.assign(value)
    return Translator(model, source, target, beam_size=1, max_length_offset=2)


def test_translator_replaces_unk_by_the_attended_source_word(unk_translator):
    sentences = ["Ein Zyxwvut rennt .", ""]
    words = unk_translator.source_words(sentences)
    assert words[0] == ["Ein", "Zyxwvut", "rennt", "."]  # as written, not <unk>
    assert "<unk>" in unk_translator.translate(sentences)[0]
    t = unk_translator.translate_with_attention(sentences)[0]
    assert set(t.target_tokens[:-1]) == {"<unk>"}
    expected = " ".join(words[0][j] for j in t.weights[:-1].argmax(axis=1))
    got = unk_translator.translate(sentences, replace_unknown=True)
    assert got == [expected, ""]
    dictionary = {"Zyxwvut": "Zorro", "Ein": "A", "rennt": "runs", ".": "!"}
    mapped = unk_translator.translate(sentences, replace_unknown=True, dictionary=dictionary)
    assert mapped[0] == " ".join(dictionary[w] for w in expected.split(" "))
    with pytest.raises(ValueError, match="replace_unknown"):
        unk_translator.translate(sentences, dictionary=dictionary)


def test_the_saved_model_replaces_unk_by_the_same_rule(unk_translator, tmp_path):
    from zoo.export import SavedModelTranslator

    sentences = ["Ein Zyxwvut rennt .", "", "Zwei Männer lachen ."]
    served = SavedModelTranslator(unk_translator.export(tmp_path / "serving", greedy=False))
    expected = unk_translator.translate(sentences, replace_unknown=True)
    assert served.translate(sentences, replace_unknown=True) == expected
    assert served.translate(sentences) == unk_translator.translate(sentences)
    assert expected[0] and "<unk>" not in expected[0]


def test_the_graph_rule_decides_pieces_per_row_as_python_does(data_dir):
    """`graph_replace_unknown` (the SavedModel's `translation_unk_replaced`) against
    `replace_unknown` on hand-made rows: one of SentencePiece pieces (glued, the
    replacement starts a word), one without any word-start mark (joined with spaces)."""
    import tensorflow as tf

    from zoo.unknown_words import graph_replace_unknown

    source = [["\u2581Ein", "\u2581Hund", "."], ["\u2581Zwei", "\u2581Katzen", ""]]
    target = [["\u2581A", "<unk>", "s", "</s>"], ["<unk>", "two", "</s>", ""]]
    weights = np.zeros((2, 4, 3), "float32")
    weights[0, :, 1] = 1.0  # every step of row 0 attends to "▁Hund"
    weights[1, :, 0] = 1.0  # row 1 to "▁Zwei"
    unchanged = tf.constant(["unchanged 0", "unchanged 1"])
    got = graph_replace_unknown(
        tf.constant(source), tf.constant(target), tf.constant(weights), unchanged
    ).numpy()
    expected = [
        replace_unknown(source[0], target[0], weights[0]),
        replace_unknown(source[1][:2], target[1][:3], weights[1, :3, :2]),
    ]
    assert [g.decode() for g in got] == expected == ["A Hunds", "Zwei two"]


def test_many_sentences_at_once_give_each_sentence_alone():
    """`replace_unknown_rows` pads rows of different lengths into one graph call: each row
    gets what `replace_unknown` gives it alone, the dictionary applies in the graph, and a
    row without <unk> keeps its translation."""
    from zoo.unknown_words import replace_unknown_rows

    words = [["Der", "Zyxwvut", "lief"], ["\u2581Ein", "\u2581Qwertz"], ["x"], []]
    tokens = [
        ["The", "<unk>", "ran", "</s>"],
        ["\u2581A", "<unk>", "</s>"],
        ["a", "b", "</s>"],
        ["<unk>", "</s>"],
    ]
    weights = [
        np.full((len(t), len(w)), 0.1, "float32") for t, w in zip(tokens, words, strict=True)
    ]
    weights[0][1, 1] = 0.9  # -> "Zyxwvut", which the dictionary translates
    weights[1][1, 1] = 0.9  # -> "Qwertz", a word of its own among pieces
    dictionary = {"Zyxwvut": "Zorro", "Qwertz": ""}  # an empty translation is one too
    got = replace_unknown_rows(words, tokens, weights, ["t0", "t1", "t2", "t3"], dictionary)
    assert got == ["The Zorro ran", "A", "t2", "t3"]  # nothing to copy from no source words
    assert got[:2] == [
        replace_unknown(w, t, x, dictionary)
        for w, t, x in zip(words[:2], tokens[:2], weights[:2], strict=True)
    ]
    with pytest.raises(ValueError, match=r"weights\[0\] must have shape"):
        replace_unknown_rows(words, tokens, [w.T for w in weights], ["", "", "", ""])
