"""Property: random bytes in any corpus format are read, dropped with a count, or rejected
with a ValueError naming the file; never another exception (hypothesis, seeded, bounded)."""

import os
import tempfile
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from zoo.data import load_corpus

# Lines of random bytes, biased towards what breaks readers: NUL and control bytes,
# tabs, carriage returns, invalid and valid multi-byte UTF-8.
_PIECES = st.sampled_from(
    [
        b"\x00",
        b"\t",
        b"\r",
        b"\x1b",
        b"\x85",
        b"\xff",
        b"\xc3",
        b"\xc3\xa9",
        b"\xe2\x80\xa8",
        b"\xef\xbb\xbf",
        b" ",
        b"a",
        b"Hund",
        b"CC-BY 2.0",
    ]
)
_LINE = st.one_of(st.binary(max_size=12), st.lists(_PIECES, max_size=6).map(b"".join))
_FILE = st.lists(_LINE, max_size=12).map(lambda lines: b"\n".join(lines))


def _check(corpus_name, split, files):
    try:
        corpus = load_corpus(corpus_name, "de", "en", split)
    except ValueError as error:  # MissingDataError and UnicodeDecodeError included
        message = str(error)
        assert any(os.path.basename(path) in message for path in files), message
        return
    assert len(corpus.source) == len(corpus.target) > 0
    for text in corpus.source + corpus.target:
        assert text and text == text.strip()
        assert not any(unicodedata.category(c) == "Cc" and c != "\t" for c in text), text


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    layout=st.sampled_from(["tsv", "{split}", "prefix"]),
    split=st.sampled_from(["train", "val", "test"]),
    first=_FILE,
    second=_FILE,
)
def test_random_bytes_are_read_dropped_or_rejected_by_name(layout, split, first, second):
    with tempfile.TemporaryDirectory() as folder:
        if layout == "tsv":
            files = [os.path.join(folder, "pairs.tsv")]
            name = files[0]
            contents = [first + b"\t" + second if second else first]
        else:
            stem = split if layout == "{split}" else "corpus"
            files = [os.path.join(folder, f"{stem}.de"), os.path.join(folder, f"{stem}.en")]
            name = os.path.join(folder, "{split}" if layout == "{split}" else "corpus")
            contents = [first, second]
        for path, data in zip(files, contents, strict=True):
            with open(path, "wb") as f:
                f.write(data)
        _check(name, split, files)
