"""A run's output folder: the lock that makes it one run's, the record that tells a resume from a new run, and how a run ends (its locks released).

`OutLock`: one training at a time in an output folder.

Two trainings writing into one `--out` at once would overwrite each other's checkpoints,
tokenizers and model. A recipe holds `<out>/run.lock` while it runs: the file is created
atomically (`O_CREAT | O_EXCL`) and holds the process id, the host and the start time; it is
removed when the run ends, normally, by an exception, by Ctrl-C, or by SIGTERM at any stage
(`zoo.workflow.run_folder`: while training, after a checkpoint of the step in flight; and
within its grace time even when an operation does not return). A second run into the same
folder refuses at once, naming the first one's process. A lock left by a process that no
longer runs on this host (SIGKILL, a crash of the machine) is taken over with a warning; a lock from another host is never taken over (remove the file
once that run is over).

SIGTERM ends a run at any stage, and `run.lock` goes with it: `ending_on_sigterm`.

While training, `zoo.training`'s `DeferredSignals` ends the run after the step in flight,
with a checkpoint of it. Before and after training (reading the data, training the
tokenizers, evaluating, exporting) SIGTERM raises `Terminated` in the main thread, so that
the run unwinds and releases its lock as on Ctrl-C. Python runs signal handlers only
between the main thread's bytecodes, so a main thread held in one operation that does not
return (a TensorFlow allocation far beyond memory) would never see either: a watchdog
thread learns of the signal at once (`signal.set_wakeup_fd`), and when the process is
still running `GRACE_SECONDS` later, or at a second SIGTERM, it releases the locks the
process holds and ends it with status 143.

`RunRecord`: a run's `run.json`, what a rerun of the same `--out` is checked against.

`run.json` holds the run's settings (every flag), and beside them:
- "corpus_files": the fingerprints of the training and validation corpus files the run read
  (`zoo.data.files`: size, modification time, a hash of the first and last MiB);
- "peak_memory_mib": the process's peak resident memory (MiB) at the end of each phase
  (data, tokenizers, pipelines, training, evaluation), as `getrusage` reports it.

A rerun resumes (the default) only with the same settings, except the flags of
`RESUMABLE_CHANGES`, and on the same corpus: a changed corpus file is refused, naming the
file and what changed, unless `--allow-corpus-change` is given.
"""

import contextlib
import datetime
import json
import logging
import os
import resource
import signal
import socket
import sys
import threading

from zoo.constants import CHECKPOINT_DIR, RUN_FILE
from zoo.data.files import changes, fingerprints
from zoo.errors import UsageError
from zoo.json_files import write_json
from zoo.translator import SOURCE_TOKENIZER_DIR

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


GRACE_SECONDS = 30.0
"""Seconds a SIGTERM leaves the run to end by itself (the training step in flight and its
checkpoint) before the process is ended."""


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM outside training: the run unwinds, releasing
    its lock. `exit_code` is the shell's 143. A `KeyboardInterrupt`, so that code catching
    `Exception` lets it through."""

    def __init__(self, signum=signal.SIGTERM):
        self.exit_code = 128 + int(signum)
        super().__init__(f"{signal.Signals(signum).name}: the run stopped before finishing.")


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def _end_now(reason):
    release_held_locks()
    with contextlib.suppress(OSError, ValueError):
        print(f"\n{reason}; ended (status 143).", file=sys.stderr, flush=True)
    os._exit(128 + signal.SIGTERM)


def _watch(read_fd, finished, grace):
    """The watchdog: reads the signal numbers Python's handler writes to `read_fd`."""
    received = 0
    while True:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if not data:  # the context ended: the write end is closed
            return
        received += data.count(bytes([signal.SIGTERM]))
        if received >= 2:
            _end_now("a second SIGTERM")
        if received and not finished.wait(grace):
            _end_now(f"SIGTERM, and the run did not end within {grace:g} s")


@contextlib.contextmanager
def ending_on_sigterm(grace=GRACE_SECONDS):
    """Within it, SIGTERM ends the run (the module docstring): raising `Terminated` outside
    training, after the step in flight inside it (`DeferredSignals` replaces the handler
    there), and in any case within `grace` seconds. A no-op outside the main thread, where
    Python cannot install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    finished = threading.Event()
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    watchdog = threading.Thread(
        target=_watch, args=(read_fd, finished, grace), name="sigterm-watchdog", daemon=True
    )
    watchdog.start()
    try:
        yield
    finally:
        finished.set()
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        signal.set_wakeup_fd(previous_fd)
        os.close(write_fd)
        watchdog.join(5)
        os.close(read_fd)


RECORDS = ("corpus_files", "peak_memory_mib")  # run.json's entries that are not settings
# Flags that may change between a run and its resumption (all others must stay the same).
RESUMABLE_CHANGES = frozenset(
    {
        "epochs",
        "max_steps",
        "max_minutes",
        "checkpoint_every",
        "keep_checkpoints",
        "average_last",
        "resume",
        "beam_size",
        "length_penalty",
        "coverage_penalty",
        "eval_batch_size",
        "attention_plots",
        "out",
        "no_export",
        "eval_limit",
        "test_split",
        "strategy",
        "deterministic",
        "jit_compile",
        "debug",
        "allow_corpus_change",
        "tokenizer_sample",  # a resumed run reuses its tokenizers
        "config",  # where the defaults came from; the settings themselves are compared
    }
)


def peak_memory_mib():
    """The process's peak resident set size so far, in MiB (`ru_maxrss`)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / 2**20 if sys.platform == "darwin" else peak / 2**10, 1)


def _resumable(out):
    """Whether `out` holds anything a rerun would continue from (tokenizers, checkpoints)."""
    checkpoints = os.path.join(out, CHECKPOINT_DIR)
    return os.path.isdir(os.path.join(out, SOURCE_TOKENIZER_DIR)) or (
        os.path.isdir(checkpoints) and bool(os.listdir(checkpoints))
    )


class RunRecord:
    """`<out>/run.json` of a run (see the module docstring). Writes nothing unless `enabled`
    (the chief worker).

    Example (the order a recipe follows):
        record = RunRecord(out, args, say, enabled=chief)
        record.check_settings()          # before anything is read
        record.check_corpus(files)       # the files the data phase read
        record.phase_done("data")        # ... and after each later phase
    """

    def __init__(self, out, args, say, enabled=True):
        self.path = os.path.join(out, RUN_FILE)
        self.out, self.args, self.say, self.enabled = out, args, say, enabled
        self.previous = None
        self.record = {k: v for k, v in sorted(vars(args).items())}
        self.record["peak_memory_mib"] = {}

    def check_settings(self):
        """Refuses to resume a run made with other settings (a `UsageError` naming them)."""
        if not (self.enabled and self.args.resume and os.path.exists(self.path)):
            return
        try:
            with open(self.path, encoding="utf-8") as f:
                self.previous = json.load(f)
        except ValueError as error:
            raise ValueError(
                f"{self.path} is damaged ({error}); pass --no-resume to start over, or choose "
                "another --out."
            ) from None
        if not isinstance(self.previous, dict):
            raise ValueError(f"{self.path} does not hold a run's settings; pass --no-resume.")
        current = self.record
        # A flag that the run's zoo did not have yet (or no longer has) cannot differ.
        changed = sorted(
            k
            for k in set(self.previous) & set(current)
            if k not in RESUMABLE_CHANGES and k not in RECORDS and self.previous[k] != current[k]
        )
        if changed:
            details = ", ".join(f"{k}: {self.previous[k]!r} -> {current[k]!r}" for k in changed)
            raise UsageError(
                f"{self.out} holds a run with other settings ({details}). Resume it with the "
                "same settings, choose another --out, or pass --no-resume to start over."
            )
        self.say(
            f"Resuming the run in {self.out} (plain re-runs continue; --no-resume starts over)"
        )

    def check_corpus(self, files):
        """Records the fingerprints of `files` (the corpus files read) and writes run.json;
        refuses (`UsageError`) to resume on changed files unless --allow-corpus-change."""
        if not self.enabled:
            return
        self.record["corpus_files"] = fingerprints(files)
        before = (self.previous or {}).get("corpus_files")
        if before is not None and _resumable(self.out):
            found = changes(before, self.record["corpus_files"])
            if found and not getattr(self.args, "allow_corpus_change", False):
                raise UsageError(
                    f"{self.out} holds a run trained on other data; since it began: "
                    f"{'; '.join(found)}. Resuming would go on training on the changed corpus "
                    "with the run's tokenizers and position. Pass --allow-corpus-change to "
                    "resume on it all the same, choose another --out, or pass --no-resume to "
                    "start over."
                )
            if found:
                self.say(
                    f"Corpus changed ({'; '.join(found)}): resuming on it (--allow-corpus-change)"
                )
        write_json(self.path, self.record)

    def phase_done(self, phase):
        """Records the peak memory at the end of `phase`; returns it (MiB)."""
        peak = peak_memory_mib()
        self.record["peak_memory_mib"][phase] = peak
        if self.enabled and "corpus_files" in self.record:
            write_json(self.path, self.record)
        return peak

    def memory_line(self):
        """ "Peak memory (RSS): data 812 MiB, ..." for the run log."""
        phases = self.record["peak_memory_mib"]
        return "Peak memory (RSS, at the end of each phase): " + ", ".join(
            f"{phase} {mib:,.0f} MiB" for phase, mib in phases.items()
        )
