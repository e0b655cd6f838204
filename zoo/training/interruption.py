"""Ending a training run on SIGINT (Ctrl-C) or SIGTERM (a preempted machine) after the step
in flight, with a checkpoint of it: `TrainingInterrupted`."""

import signal
import threading


class TrainingInterrupted(KeyboardInterrupt):
    """Raised by `train` after SIGINT (Ctrl-C) or SIGTERM (a preempted machine): the step in
    flight finished and a checkpoint of it was written, so a re-run with `resume` loses
    nothing. `exit_code` is the shell's 128 + signal (130, 143). A `KeyboardInterrupt`, so
    that code catching `Exception` (keras-tuner's trial loop) lets it through."""

    def __init__(self, signum, step, checkpoint_dir):
        self.signum, self.step, self.checkpoint_dir = signum, step, checkpoint_dir
        self.exit_code = 128 + int(signum)
        name = signal.Signals(signum).name
        super().__init__(
            f"{name} at step {step}: checkpoint written in {checkpoint_dir}; run the same "
            "command again to resume from it."
        )


class DeferredSignals:
    """SIGINT and SIGTERM, while training, end the run after the current step (a second
    Ctrl-C stops at once). Only in the main thread, where Python runs signal handlers.

    A context manager: inside it, `received` is the first signal that arrived (or None)."""

    def __init__(self):
        self.received = None
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame):
        if signum == signal.SIGINT and self.received == signal.SIGINT:
            raise KeyboardInterrupt
        self.received = signum

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            if handler is not None:  # None: a handler installed from C, not restorable
                signal.signal(signum, handler)
        return False
