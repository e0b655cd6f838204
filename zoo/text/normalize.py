"""Unicode normalisation shared by every tokenizer, as TensorFlow ops.

`normalize` runs in eager mode, inside `tf.function`, inside `tf.data` maps and inside an
exported SavedModel (it uses only TensorFlow and tensorflow-text ops).
"""

import tensorflow as tf
import tensorflow_text as tf_text

# Unicode spaces that NFKC does not always fold to U+0020 (or that survive as separators):
# no-break space, narrow no-break space, figure space, ideographic space, zero-width no-break.
_SPACES = r"[\s\x{00A0}\x{202F}\x{2007}\x{3000}\x{2000}-\x{200A}\x{FEFF}]+"


def as_string_vector(strings, name="strings"):
    """Converts `strings` (list of str, NumPy array or tensor) to a `tf.string` tensor `(B,)`.

    Raises ValueError when the input is not a vector of strings.
    """
    if isinstance(strings, str | bytes):
        raise ValueError(
            f"{name} must be a vector of strings (B,), received the single string {strings!r}; "
            "wrap it in a list."
        )
    strings = tf.convert_to_tensor(strings)
    if strings.dtype != tf.string:
        raise ValueError(f"{name} must have dtype tf.string, received {strings.dtype.name}.")
    if strings.shape.rank is not None and strings.shape.rank != 1:
        raise ValueError(f"{name} must have shape (B,), received shape {strings.shape}.")
    return strings


def normalize(strings, lowercase=False):
    """NFKC-normalises `strings`, turns every Unicode space run into one ASCII space, strips.

    Args:
        strings: `tf.string` tensor of any shape.
        lowercase: also lowercase (Unicode-aware, `tf.strings.lower(encoding="utf-8")`).

    Returns:
        `tf.string` tensor of the same shape.

    Example:
        >>> normalize(tf.constant(["Il est là\u202f!  ﬁn "])).numpy()
        array([b'Il est l\xc3\xa0 ! fin'], dtype=object)
    """
    strings = tf_text.normalize_utf8(strings, "NFKC")
    strings = tf.strings.regex_replace(strings, _SPACES, " ")
    strings = tf.strings.strip(strings)
    if lowercase:
        strings = tf.strings.lower(strings, encoding="utf-8")
    return strings


def normalize_texts(texts, lowercase=False, chunk_size=8192):
    """Python helper: `normalize` applied to a list of `str`, returned as a list of `str`.

    Used to prepare training text for vocabulary builders, so that they see exactly what the
    in-graph tokenizer sees.
    """
    out = []
    texts = list(texts)
    for start in range(0, len(texts), chunk_size):
        chunk = tf.constant(texts[start : start + chunk_size], dtype=tf.string)
        out.extend(s.decode("utf-8") for s in normalize(chunk, lowercase).numpy().tolist())
    return out
