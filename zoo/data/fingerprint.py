"""Fingerprints of corpus files, to tell whether a run's data changed between two starts.

`file_fingerprint(path)`: the file's size, modification time and a SHA-256 of its first and
last MiB (the whole file when it is smaller): cheap for a file of any size. `changes(before,
now)` lists, in words, what differs between two lists of fingerprints; a file that moved
with its content unchanged is not a change.

`recording_reads()` collects the corpus files the readers open while it is active
(`note_read`, called by `zoo.data.readers` and `zoo.data.streaming.check`), so that a caller
learns which files a `load_corpus` call actually read, whatever the corpus' loader.
"""

import contextlib
import contextvars
import datetime
import hashlib
import os

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
