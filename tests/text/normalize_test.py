import unicodedata

import numpy as np
import pytest
import tensorflow as tf

from zoo.text.normalize import as_string_vector, normalize, normalize_texts


def _reference(text, lowercase=False):
    text = unicodedata.normalize("NFKC", text)
    text = " ".join(text.replace("\u00a0", " ").replace("\u202f", " ").split())
    return text.lower() if lowercase else text


@pytest.mark.parametrize("lowercase", [False, True])
def test_normalize_matches_python_reference(lowercase):
    texts = [
        "Il est là\u202f!",
        "  Deux\u00a0chiens  courent ",
        "ﬁne Ｆｕｌｌｗｉｄｔｈ ①",
        "Straße ÄÖÜ",
        "e\u0301te\u0301",  # decomposed accents compose under NFKC
        "",
    ]
    got = [s.decode() for s in normalize(tf.constant(texts), lowercase).numpy()]
    assert got == [_reference(t, lowercase) for t in texts]


def test_normalize_texts_python_helper_is_the_same():
    texts = ["a\u00a0b", " x "] * 5
    assert normalize_texts(texts, chunk_size=3) == ["a b", "x"] * 5


def test_normalize_in_tf_function():
    f = tf.function(lambda s: normalize(s, True))
    np.testing.assert_array_equal(f(tf.constant(["A\u00a0B"])).numpy(), [b"a b"])


@pytest.mark.parametrize(
    "bad, message",
    [("one string", "single string"), ([1, 2], "tf.string"), ([["a"], ["b"]], r"shape \(B,\)")],
)
def test_as_string_vector_rejects_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        as_string_vector(bad)
