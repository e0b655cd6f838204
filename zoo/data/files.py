"""Corpus files: where they are (`data_dir`, `cache_dir`), how their lines are read
(`read_parallel`, `read_tsv`) and checked (`check_file`), and which files a run read
(`recording_reads`, `file_fingerprint`).

`MissingDataError`: a corpus file is not there (and could not be fetched).

Where corpora are read from and cached.

- `data_dir()`: `$ZOO_DATA_DIR` when set, else the `shared/data` folder beside the checkout
  (`<repo>/../shared/data`).
- `cache_dir()`: `$ZOO_CACHE_DIR` when set, else `~/.cache/zoo`; downloads are kept there.

Checks of corpus files that reading them line by line would miss.

- A gzip file cut short (an interrupted download or copy): Python's `gzip` raises a bare
  `EOFError`, and `tf.data.TextLineDataset` stops at the cut without a word, so a stream
  would train on part of the file. `check_gzip` reads the file to its end and raises a
  ValueError naming it.
- Old Mac line endings (CR alone): `TextLineDataset` splits lines on LF and deletes every
  CR, so such a file would become one long line. Lines end in LF or CR LF; `check_head`
  refuses a file whose first MiB holds a CR and no LF, naming it.

`check_file(path)` runs both (the gzip pass only for ".gz" files); both raise ValueError, a
user's error (the message alone on the command line).

Fingerprints of corpus files, to tell whether a run's data changed between two starts.

`file_fingerprint(path)`: the file's size, modification time and a SHA-256 of its first and
last MiB (the whole file when it is smaller): cheap for a file of any size. `changes(before,
now)` lists, in words, what differs between two lists of fingerprints; a file that moved
with its content unchanged is not a change.

`recording_reads()` collects the corpus files the readers open while it is active
(`note_read`, called by the readers and `zoo.data.batching.check`), so that a caller
learns which files a `load_corpus` call actually read, whatever the corpus' loader.

Readers for plain parallel files and tab-separated pair files, with clear errors.

Every error names the file, the 1-based line number and what is wrong. Files ending in ".gz"
are decompressed (a damaged or truncated one is an error naming it). Lines end in LF or
CR LF; a file with old Mac line endings (CR alone) is refused (`check_head`). Lines are
stripped of surrounding whitespace; control characters (NUL, escape, the C1 range, ...:
Unicode category Cc, the tab of TSV files excepted) become spaces and are counted in a
warning; pairs with an empty side are dropped and counted in a warning.
"""

import contextlib
import contextvars
import datetime
import gzip
import hashlib
import logging
import os
import re
import zlib
from pathlib import Path


class MissingDataError(ValueError, FileNotFoundError):
    """Raised when corpus files are missing; the message says how to provide them.

    It is both a `ValueError` (bad input) and a `FileNotFoundError`, so either catches it.
    """


# zoo/data/files.py -> parents: zoo/data, zoo, <repo>, the folder that holds the checkout.
_BESIDE_CHECKOUT = Path(__file__).resolve().parents[3]


def data_dir():
    """The folder holding local corpora (`multi30k/`, `anki-spa-eng/`, ...)."""
    value = os.environ.get("ZOO_DATA_DIR")
    if value:
        return Path(value).expanduser()
    return _BESIDE_CHECKOUT / "shared" / "data"


def cache_dir():
    """The folder where downloaded corpora are cached."""
    value = os.environ.get("ZOO_CACHE_DIR")
    if value:
        return Path(value).expanduser()
    return Path.home() / ".cache" / "zoo"


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


EDGE_BYTES = 2**20  # the bytes hashed at each end of a file
_READS = contextvars.ContextVar("zoo_data_reads", default=None)


def file_fingerprint(path):
    """{"path", "size", "mtime_ns", "sha256"}: the absolute path, the size in bytes, the
    modification time (ns) and a SHA-256 of the first and last `EDGE_BYTES` bytes."""
    path = os.path.abspath(os.fspath(path))
    with open(path, "rb") as f:
        stat = os.fstat(f.fileno())
        digest = hashlib.sha256(f.read(EDGE_BYTES))
        if stat.st_size > EDGE_BYTES:
            f.seek(max(EDGE_BYTES, stat.st_size - EDGE_BYTES))
            digest.update(f.read(EDGE_BYTES))
    return {
        "path": path,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "sha256": digest.hexdigest(),
    }


def fingerprints(paths):
    """`file_fingerprint` of each path, in order, each file once."""
    return [file_fingerprint(p) for p in dict.fromkeys(os.fspath(p) for p in paths)]


def _when(mtime_ns):
    moment = datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _file_changes(before, now):
    """What differs between two fingerprints of one file (empty: the same content)."""
    name = now["path"]
    if before["path"] != now["path"]:
        name = f"{now['path']} (was {before['path']})"
    found = []
    if before["size"] != now["size"]:
        found.append(f"size {before['size']:,} -> {now['size']:,} bytes")
    if before["sha256"] != now["sha256"]:
        found.append("content of its first or last MiB")
    whole = now["size"] <= 2 * EDGE_BYTES  # the hash covers every byte: the time is moot
    if not found and not whole and before["mtime_ns"] != now["mtime_ns"]:
        found.append(
            f"modified {_when(now['mtime_ns'])} (was {_when(before['mtime_ns'])}); only its "
            "first and last MiB were compared"
        )
    return [f"{name}: {', '.join(found)}"] if found else []


def changes(before, now):
    """The differences between two lists of `file_fingerprint`s, one line each (empty when
    the files hold the same data: same sizes and hashes, and same times for files larger
    than the two hashed MiB)."""
    if len(before) != len(now):
        old = ", ".join(f["path"] for f in before) or "none"
        new = ", ".join(f["path"] for f in now) or "none"
        return [f"the files read were {old}; now {new}"]
    found = []
    for old, new in zip(before, now, strict=True):
        found.extend(_file_changes(old, new))
    return found


@contextlib.contextmanager
def recording_reads():
    """A context in which the corpus readers add each file they open to the yielded list
    (absolute paths, each once, in the order read)."""
    paths = []
    token = _READS.set(paths)
    try:
        yield paths
    finally:
        _READS.reset(token)


def note_read(path):
    """Records `path` as read, when a `recording_reads` context is active."""
    paths = _READS.get()
    path = os.path.abspath(os.fspath(path))
    if paths is not None and path not in paths:
        paths.append(path)


logger = logging.getLogger("zoo.data")

# Unicode category Cc without tab, line feed and carriage return (handled as separators).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def read_lines(path):
    """Reads a UTF-8 text file as a list of lines (no line ends, surrounding spaces stripped).

    Raises MissingDataError when the file does not exist, ValueError on invalid UTF-8.
    Control characters become spaces (see the module docstring).
    """
    return [line.strip() for line in read_raw_lines(path)]


def read_raw_lines(path):
    """Reads a UTF-8 text file (gzip-compressed when its name ends in ".gz") as a list of
    lines; only the line ends ("\n", "\r\n") go, and control characters other than tab
    become spaces (counted in one warning). Raises ValueError naming the file when it has
    CR-only line ends or is a damaged gzip file."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"{path} is a directory; expected a corpus file (UTF-8 text).")
    if not os.path.isfile(path):
        raise MissingDataError(f"Missing corpus file {path}.")
    note_read(path)
    with open(path, "rb") as f:
        data = f.read()
    if is_gzip(path):
        try:
            data = gzip.decompress(data)
        except GZIP_ERRORS as error:
            raise gzip_error(path, error) from None
    check_head(data[:HEAD_BYTES], path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for number, raw in enumerate(data.split(b"\n"), start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{path}, line {number}: invalid UTF-8 ({error.reason} at byte "
                    f"{error.start} of the line: {raw[max(0, error.start - 20) : error.end + 20]!r})."
                ) from None
        raise
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return _without_controls([line.removesuffix("\r") for line in lines], path)


def _without_controls(lines, path):
    changed = 0
    for i, line in enumerate(lines):
        if _CONTROL.search(line):
            lines[i] = _CONTROL.sub(" ", line)
            changed += 1
    if changed:
        logger.warning(
            "%s: replaced control characters (NUL, escape, ...) by spaces in %d of %d lines.",
            path,
            changed,
            len(lines),
        )
    return lines


def drop_empty(sources, targets, what):
    """Drops pairs with an empty side; logs how many were dropped. Returns two lists."""
    kept_s, kept_t = [], []
    for s, t in zip(sources, targets, strict=True):
        if s and t:
            kept_s.append(s)
            kept_t.append(t)
    dropped = len(sources) - len(kept_s)
    if dropped:
        logger.warning(
            "%s: dropped %d of %d pairs with an empty side.", what, dropped, len(sources)
        )
    return kept_s, kept_t


def read_parallel(source_path, target_path):
    """Reads two line-aligned files; returns (sources, targets) without empty pairs.

    Raises ValueError when the files have different line counts.
    """
    sources = read_lines(source_path)
    targets = read_lines(target_path)
    if len(sources) != len(targets):
        raise ValueError(
            f"Parallel files differ in length: {source_path} has {len(sources)} lines but "
            f"{target_path} has {len(targets)}; line i of one must translate line i of the other."
        )
    return drop_empty(sources, targets, f"{source_path} / {target_path}")


def read_tsv(path):
    """Reads `source<TAB>target` lines; returns (column0, column1) without empty pairs.

    A line must have exactly one tab. (The newer ManyThings files append a third
    `CC-BY ...` attribution column; such a column is accepted and ignored.)
    """
    column0, column1 = [], []
    for number, line in enumerate(read_raw_lines(path), start=1):
        first, second = tsv_fields(line, path, number)
        column0.append(first.strip())
        column1.append(second.strip())
    return drop_empty(column0, column1, os.fspath(path))


def tsv_fields(line, path, number):
    """The two columns of TSV line `number` of `path` (a third `CC-BY ...` column is
    dropped); raises ValueError naming file and line unless it has exactly one tab."""
    fields = line.split("\t")
    if len(fields) == 3 and fields[2].startswith("CC-BY"):
        fields = fields[:2]
    if len(fields) != 2:
        raise ValueError(
            f"{path}, line {number}: expected exactly one tab (source<TAB>target), found "
            f"{len(fields) - 1}: {line[:80]!r}."
        )
    return fields


def prepared_files(name, split, data_dir=None):
    """The files of `split` of TFDS dataset `name` as prepared on disk (its record shards in
    the dataset's version folder); [] when it is not prepared there (or TFDS cannot say)."""
    import tensorflow_datasets as tfds

    try:
        folder = tfds.builder(name, data_dir=data_dir).data_dir
        names = sorted(os.listdir(folder))
    except Exception:  # not prepared, or unknown to this TFDS: nothing to list
        return []
    base = str(split).split("[", 1)[0].split("+", 1)[0]
    return [os.path.join(folder, n) for n in names if f"-{base}." in n]
