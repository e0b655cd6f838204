"""Checks of corpus files that reading them line by line would miss.

- A gzip file cut short (an interrupted download or copy): Python's `gzip` raises a bare
  `EOFError`, and `tf.data.TextLineDataset` stops at the cut without a word, so a stream
  would train on part of the file. `check_gzip` reads the file to its end and raises a
  ValueError naming it.
- Old Mac line endings (CR alone): `TextLineDataset` splits lines on LF and deletes every
  CR, so such a file would become one long line. Lines end in LF or CR LF; `check_head`
  refuses a file whose first MiB holds a CR and no LF, naming it.

`check_file(path)` runs both (the gzip pass only for ".gz" files); both raise ValueError, a
user's error (the message alone on the command line).
"""

import gzip
import zlib

HEAD_BYTES = 2**20  # the part of a file (decompressed) whose line endings are checked
_CHUNK = 2**20
_MAX_OUT = 16 * 2**20  # decompressed bytes held at once while checking a gzip file
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def is_gzip(path):
    return str(path).endswith(".gz")


def open_binary(path):
    """`path` opened for reading bytes, decompressed when its name ends in ".gz"."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def gzip_error(path, error, where=""):
    """The ValueError for a gzip file that cannot be read to its end."""
    return ValueError(
        f"{path}: damaged or truncated gzip file{where} ({error or type(error).__name__}); "
        "download or compress it again (`gzip -t FILE` checks a file)."
    )


def check_gzip(path):
    """Decompresses the gzip file `path` to its end, keeping nothing; raises ValueError
    naming it when it is cut short or damaged. Files of several gzip members are read whole."""
    decompressor = zlib.decompressobj(wbits=31)
    started = False  # whether the current member has begun
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                while chunk:
                    started = True
                    decompressor.decompress(chunk, _MAX_OUT)
                    if not decompressor.eof:
                        chunk = decompressor.unconsumed_tail
                        continue
                    # The end of one member: the next one, if any (zero padding is allowed).
                    chunk = decompressor.unused_data
                    decompressor, started = zlib.decompressobj(wbits=31), False
                    if not chunk.strip(b"\x00"):
                        chunk = b""
    except zlib.error as error:
        raise gzip_error(path, error) from None
    if started and not decompressor.eof:
        raise gzip_error(path, "the file ends before the end of its compressed data")


def read_head(path, size=HEAD_BYTES):
    """The first `size` bytes of `path`, decompressed for a ".gz" file."""
    try:
        with open_binary(path) as f:
            return f.read(size)
    except GZIP_ERRORS as error:
        raise gzip_error(path, error) from None


def check_head(head, path):
    """Raises ValueError naming `path` when `head` (its first bytes) holds a CR and no LF:
    lines that end in CR alone (old Mac files)."""
    if b"\r" in head and b"\n" not in head:
        raise ValueError(
            f"{path}: its lines end in CR alone (old Mac line endings); corpus lines must end "
            "in LF or CR LF. Convert the file, e.g. `tr '\\r' '\\n' < FILE > FILE.lf`."
        )


def check_file(path):
    """`check_head` on the start of `path`, and `check_gzip` when it is a ".gz" file."""
    check_head(read_head(path), path)
    if is_gzip(path):
        check_gzip(path)
