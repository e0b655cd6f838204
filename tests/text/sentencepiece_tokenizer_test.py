import pytest
import sentencepiece as spm
import tensorflow as tf

from zoo.constants import END_ID, PAD_ID, START_ID, UNK_ID
from zoo.text import SentencePieceTokenizer


def test_ids_match_the_sentencepiece_library(tokenizers, val_en):
    """The in-graph tensorflow-text op gives the ids of the reference Python implementation."""
    tok = tokenizers["sentencepiece"]
    reference = spm.SentencePieceProcessor(model_proto=tok.model_proto)
    normalized = [s.decode() for s in tok.normalize(val_en).numpy()]
    assert tok.tokenize(val_en).to_list() == reference.encode(normalized)
    assert reference.pad_id() == PAD_ID and reference.bos_id() == START_ID
    assert reference.eos_id() == END_ID and reference.unk_id() == UNK_ID
    assert tok.vocab_size == reference.get_piece_size() == 500


def test_bpe_and_lowercase(train_de):
    tok = SentencePieceTokenizer.train(
        train_de[:1000], vocab_size=300, model_type="bpe", lowercase=True
    )
    proto = spm.SentencePieceProcessor(model_proto=tok.model_proto)
    assert proto.get_piece_size() == tok.vocab_size
    text = tok.detokenize(tok.tokenize(["Zwei HUNDE laufen."])).numpy()[0].decode()
    assert text == "zwei hunde laufen."


def test_training_is_deterministic(train_en):
    a = SentencePieceTokenizer.train(train_en[:500], vocab_size=200)
    b = SentencePieceTokenizer.train(train_en[:500], vocab_size=200)
    assert a.model_proto == b.model_proto


def test_unknown_characters_become_unk(tokenizers):
    ids = tokenizers["sentencepiece"].tokenize(tf.constant(["☃"])).to_list()[0]
    assert UNK_ID in ids


@pytest.mark.parametrize(
    "kwargs, message",
    [({"model_type": "char"}, "model_type"), ({"vocab_size": 3}, "vocab_size")],
)
def test_train_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SentencePieceTokenizer.train(["a b c"], **kwargs)


def test_rejects_model_without_reserved_ids(train_en):
    import io

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(train_en[:300]), model_writer=model, vocab_size=100, minloglevel=2
    )
    with pytest.raises(ValueError, match="reserve ids"):
        SentencePieceTokenizer(model.getvalue())
    with pytest.raises(ValueError, match="bytes"):
        SentencePieceTokenizer("not bytes")


def test_survives_global_seed_reset(train_en):
    # tf.random.set_seed clears TensorFlow's kernel cache, which owns tensorflow-text's
    # SentencePiece resource; the tokenizer must rebuild it rather than fail.
    import keras

    tok = SentencePieceTokenizer.train(train_en[:500], vocab_size=200)
    before = tok.tokenize(["A dog runs."]).to_list()
    keras.utils.set_random_seed(1)
    assert tok.tokenize(["A dog runs."]).to_list() == before
    keras.utils.set_random_seed(2)
    assert tok.detokenize(tf.constant(before)).numpy().tolist() == [b"A dog runs."]
