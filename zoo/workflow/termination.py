"""SIGTERM ends a run at any stage, and `run.lock` goes with it: `ending_on_sigterm`.

While training, `zoo.training`'s `DeferredSignals` ends the run after the step in flight,
with a checkpoint of it. Before and after training (reading the data, training the
tokenizers, evaluating, exporting) SIGTERM raises `Terminated` in the main thread, so that
the run unwinds and releases its lock as on Ctrl-C. Python runs signal handlers only
between the main thread's bytecodes, so a main thread held in one operation that does not
return (a TensorFlow allocation far beyond memory) would never see either: a watchdog
thread learns of the signal at once (`signal.set_wakeup_fd`), and when the process is
still running `GRACE_SECONDS` later, or at a second SIGTERM, it releases the locks the
process holds and ends it with status 143.
"""

import contextlib
import os
import signal
import sys
import threading

from zoo.workflow.out_lock import release_held_locks

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
