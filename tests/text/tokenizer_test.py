"""The contract every tokenizer kind follows (zoo.text.Tokenizer)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from zoo.constants import END_ID, PAD_ID, RESERVED_TOKENS, START_ID, UNK_ID
from zoo.text import KINDS, clean_ids, load_tokenizer

SENTENCES = [
    "A dog runs through the grass.",
    'Two men, one in a red shirt, are playing "soccer" (outside)!',
    "",
]


def _rows(ragged):
    return [list(r) for r in ragged.numpy()]


def test_clean_ids_cuts_at_end_and_drops_pad_and_start():
    dense = tf.constant([[START_ID, 7, 8, END_ID, 9, 9], [7, PAD_ID, 8, START_ID, PAD_ID, PAD_ID]])
    assert _rows(clean_ids(dense)) == [[7, 8], [7, 8]]
    ragged = tf.ragged.constant([[END_ID, 5], [], [5, 6, 7]], dtype=tf.int64)
    assert _rows(clean_ids(ragged)) == [[], [], [5, 6, 7]]


def test_clean_ids_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        clean_ids(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="integers"):
        clean_ids(tf.constant([[1.0]]))


@pytest.mark.parametrize("kind", KINDS)
def test_reserved_ids_and_types(tokenizers, kind):
    tok = tokenizers[kind]
    assert tok.kind == kind
    ids = tok.tokenize(tf.constant(SENTENCES))
    assert isinstance(ids, tf.RaggedTensor) and ids.dtype == tf.int32
    assert ids.nrows() == 3 and ids.row_lengths()[2] == 0
    flat = ids.flat_values.numpy()
    assert flat.min() >= UNK_ID and flat.max() < tok.vocab_size
    assert not np.isin(flat, [PAD_ID, START_ID, END_ID]).any()
    assert [t.decode() for t in tok.id_to_token(tf.range(4)).numpy()] == list(RESERVED_TOKENS)


@pytest.mark.parametrize("kind", KINDS)
def test_detokenize_dense_padded_equals_ragged(tokenizers, kind):
    tok = tokenizers[kind]
    ids = tok.tokenize(SENTENCES[:2])
    with_markers = tf.concat(
        [tf.fill([2, 1], START_ID), ids, tf.fill([2, 1], END_ID), tf.fill([2, 1], 7)], axis=1
    )
    dense = with_markers.to_tensor(default_value=PAD_ID)
    np.testing.assert_array_equal(tok.detokenize(dense).numpy(), tok.detokenize(ids).numpy())


@pytest.mark.parametrize("kind", ["sentencepiece", "wordpiece"])
def test_subword_round_trip_of_real_sentences_is_exact(tokenizers, val_en, kind):
    tok = tokenizers[kind]
    got = tok.detokenize(tok.tokenize(val_en)).numpy()
    want = tok.normalize(val_en).numpy()
    exact = np.mean(got == want)
    # WordPiece gives UNK only for words with characters never seen in training.
    assert exact >= (1.0 if kind == "sentencepiece" else 0.95), exact


def test_word_round_trip_is_exact_when_all_words_known(tokenizers, train_en):
    tok = tokenizers["word"]
    ids = tok.tokenize(train_en[:300])
    known = ~tf.reduce_any(tf.equal(ids, UNK_ID), axis=1).numpy()
    assert known.sum() > 100
    got = tok.detokenize(ids).numpy()[known]
    np.testing.assert_array_equal(got, tok.normalize(train_en[:300]).numpy()[known])


@pytest.mark.parametrize("kind", KINDS)
def test_save_load_restores_exactly(tokenizers, val_en, tmp_path, kind):
    tok = tokenizers[kind]
    tok.save(tmp_path)
    assert json.loads((tmp_path / "tokenizer.json").read_text())["kind"] == kind
    restored = load_tokenizer(tmp_path)
    assert type(restored) is type(tok) and restored.vocab_size == tok.vocab_size
    assert _rows(restored.tokenize(val_en)) == _rows(tok.tokenize(val_en))
    ids = tok.tokenize(val_en)
    np.testing.assert_array_equal(restored.detokenize(ids).numpy(), tok.detokenize(ids).numpy())


@pytest.mark.parametrize("kind", KINDS)
def test_works_in_tf_function_and_tf_data(tokenizers, kind):
    tok = tokenizers[kind]
    eager = _rows(tok.tokenize(SENTENCES))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def round_trip(strings):
        ids = tok.tokenize(strings)
        return ids, tok.detokenize(ids)

    ids, text = round_trip(tf.constant(SENTENCES))
    assert _rows(ids) == eager
    np.testing.assert_array_equal(text.numpy(), tok.detokenize(tok.tokenize(SENTENCES)).numpy())
    dataset = tf.data.Dataset.from_tensor_slices(SENTENCES).batch(2).map(tok.tokenize)
    assert [r for batch in dataset for r in _rows(batch)] == eager


def test_load_rejects_wrong_kind_and_missing_files(tokenizers, tmp_path):
    from zoo.text import SentencePieceTokenizer, WordTokenizer

    tokenizers["word"].save(tmp_path / "word")
    with pytest.raises(ValueError, match="'word' tokenizer"):
        SentencePieceTokenizer.load(tmp_path / "word")
    with pytest.raises(ValueError, match="tokenizer.json"):
        load_tokenizer(tmp_path / "nothing")
    os.remove(tmp_path / "word" / "vocab.txt")
    with pytest.raises(ValueError, match="vocab.txt"):
        WordTokenizer.load(tmp_path / "word")


def _export_module(tok):
    module = tf.Module()
    module.tokenizer = tok
    module.tokenize = tf.function(
        lambda s: tok.tokenize(s), input_signature=[tf.TensorSpec([None], tf.string)]
    )
    module.detokenize = tf.function(
        lambda i: tok.detokenize(i), input_signature=[tf.TensorSpec([None, None], tf.int32)]
    )
    return module


@pytest.mark.slow
def test_export_in_saved_model_loads_without_zoo(tokenizers, val_en, tmp_path):
    """A SavedModel holding the tokenizers runs in a process importing only TF + tf-text."""
    expected = {}
    for kind, tok in tokenizers.items():
        module = _export_module(tok)
        tf.saved_model.save(module, str(tmp_path / kind))
        ids = tok.tokenize(val_en[:20])
        expected[kind] = {
            "ids": _rows(ids),
            "text": [t.decode() for t in tok.detokenize(ids).numpy()],
        }
    script = textwrap.dedent(
        """
        import json, sys
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (registers the ops)
        root, sentences = sys.argv[1], json.loads(sys.argv[2])
        out = {}
        for kind in ("sentencepiece", "wordpiece", "word"):
            m = tf.saved_model.load(f"{root}/{kind}")
            ids = m.tokenize(tf.constant(sentences))
            text = m.detokenize(ids.to_tensor())
            out[kind] = {"ids": [[int(i) for i in r] for r in ids.numpy()],
                         "text": [t.decode() for t in text.numpy()]}
        assert "zoo" not in sys.modules
        print("RESULT" + json.dumps(out))
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH="")
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), json.dumps(val_en[:20])],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.split("RESULT", 1)[1])
    assert got == expected


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_keras_export_archive_tracks_the_tokenizer(tokenizers, val_en, tmp_path, kind):
    import keras

    tok = tokenizers[kind]
    archive = keras.export.ExportArchive()
    archive.track(tok)
    archive.add_endpoint(
        "round_trip",
        lambda s: tok.detokenize(tok.tokenize(s).to_tensor()),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    archive.write_out(str(tmp_path / "archive"), verbose=False)
    restored = tf.saved_model.load(str(tmp_path / "archive"))
    got = restored.round_trip(tf.constant(val_en[:10])).numpy()
    np.testing.assert_array_equal(got, tok.detokenize(tok.tokenize(val_en[:10])).numpy())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("vocab_size", [4, 0, 99.5, "100", True, None])
def test_bad_vocab_size_is_refused_before_training(kind, vocab_size):
    from zoo.text import train_tokenizer

    with pytest.raises(ValueError, match=r"vocab_size must be an int greater than 4.*received"):
        train_tokenizer(kind, SENTENCES[:2], vocab_size=vocab_size)
