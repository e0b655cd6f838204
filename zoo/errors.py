"""How the commands report a user's mistake: the message alone, and an exit status.

- Usage errors (a flag value, or a combination of flags, the command cannot run with):
  exit status 2, as argparse gives for an unknown flag. Raise `UsageError`.
- Data errors (a missing or malformed corpus, an unreadable model folder, ...): exit
  status 1. Any `ValueError` or `OSError` that reaches the command is one.
- `--debug` shows the traceback instead. Ctrl-C outside training exits with 130 and one
  line (training checkpoints first, see `zoo.training.TrainingInterrupted`).

Example (an entry point):
    return exit_on_user_error(lambda: run(args), prog="python -m zoo", debug=args.debug)
"""

import sys

USAGE_STATUS = 2
DATA_STATUS = 1
INTERRUPTED_STATUS = 130
DEBUG_HELP = (  # every command's --debug
    f"show the traceback of an error (default: the message alone; exit status {USAGE_STATUS} "
    f"for bad flags, {DATA_STATUS} for bad data or files, {INTERRUPTED_STATUS} on Ctrl-C)"
)


class UsageError(ValueError):
    """A flag value or combination of flags the command cannot run with (exit status 2)."""


def error_status(error):
    """The exit status of a user's error: 2 for a `UsageError`, else 1."""
    return USAGE_STATUS if isinstance(error, UsageError) else DATA_STATUS


def exit_on_user_error(function, prog, debug=False, stream=None):
    """Runs `function()` and returns what it returns. On a user's error (ValueError, OSError)
    or Ctrl-C, prints `<prog>: error: <message>` on stderr and exits (`SystemExit`) with the
    error's status. With `debug=True` errors propagate with their traceback.
    """
    stream = sys.stderr if stream is None else stream
    try:
        return function()
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"\n{prog}: interrupted", file=stream, flush=True)
        raise SystemExit(INTERRUPTED_STATUS) from None
    except (ValueError, OSError) as error:
        if debug:
            raise
        print(f"{prog}: error: {error}", file=stream)
        print(f"{prog}: (--debug shows where it happened)", file=stream, flush=True)
        raise SystemExit(error_status(error)) from None
