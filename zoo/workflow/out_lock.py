"""`OutLock`: one training at a time in an output folder.

Two trainings writing into one `--out` at once would overwrite each other's checkpoints,
tokenizers and model. A recipe holds `<out>/run.lock` while it runs: the file is created
atomically (`O_CREAT | O_EXCL`) and holds the process id, the host and the start time; it is
removed when the run ends, normally, by an exception, by Ctrl-C, or by SIGTERM at any stage
(`zoo.workflow.termination`: while training, after a checkpoint of the step in flight; and
within its grace time even when an operation does not return). A second run into the same
folder refuses at once, naming the first one's process. A lock left by a process that no
longer runs on this host (SIGKILL, a crash of the machine) is taken over with a warning; a lock from another host is never taken over (remove the file
once that run is over).
"""

import datetime
import json
import logging
import os
import socket

from zoo.errors import UsageError

LOCK_FILE = "run.lock"
logger = logging.getLogger("zoo.workflow")
_held = set()  # the OutLocks this process holds (released by `release_held_locks`)


def release_held_locks():
    """Releases every lock this process holds (a process about to end at once)."""
    for lock in list(_held):
        lock.release()


class OutFolderInUse(UsageError):
    """Another run holds the output folder's lock (exit status 2)."""


def _process_start(pid):
    """The start time of process `pid` in clock ticks since boot (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid, process_start):
    """Whether process `pid` runs on this host (and is the same process, where Linux tells)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    now = _process_start(pid)
    return process_start is None or now is None or now == process_start


class OutLock:
    """A context manager holding `<folder>/run.lock` (see the module docstring).

    Raises `OutFolderInUse` (a `UsageError`: the message alone, exit status 2, on the
    command line) when another live process holds the lock.

    Example:
        with OutLock(out):
            ...  # train into out
    """

    def __init__(self, folder):
        self.folder = os.path.abspath(os.fspath(folder))
        self.path = os.path.join(self.folder, LOCK_FILE)
        self.held = False

    def _record(self):
        pid = os.getpid()
        return {
            "pid": pid,
            "host": socket.gethostname(),
            "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "process_start": _process_start(pid),
        }

    def _create(self):
        """Creates the lock file; False when it exists."""
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self._record(), f)
        return True

    def _holder(self):
        """The lock file's record ({} when it cannot be read: being written, or damaged)."""
        try:
            with open(self.path, encoding="utf-8") as f:
                record = json.load(f)
        except (OSError, ValueError):
            return {}
        return record if isinstance(record, dict) else {}

    def _stale(self, holder):
        if holder.get("host") != socket.gethostname() or not isinstance(holder.get("pid"), int):
            return False
        return not _alive(holder["pid"], holder.get("process_start"))

    def acquire(self):
        os.makedirs(self.folder, exist_ok=True)
        if self._create():
            self.held = True
            _held.add(self)
            return self
        holder = self._holder()
        if self._stale(holder):
            logger.warning(
                "%s: taking over the lock of process %s, which no longer runs (started %s).",
                self.path,
                holder["pid"],
                holder.get("started", "?"),
            )
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass
            if self._create():
                self.held = True
                _held.add(self)
                return self
            holder = self._holder()
        who = (
            f"process {holder.get('pid', '?')} on {holder.get('host', '?')}, started "
            f"{holder.get('started', '?')}"
        )
        raise OutFolderInUse(
            f"{self.folder} is in use by another run ({who}; lock file {self.path}). Wait for "
            "it to end or choose another --out; if no such run exists, remove the lock file."
        )

    def release(self):
        _held.discard(self)
        if self.held:
            self.held = False
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
        return False
