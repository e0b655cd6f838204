"""The quiet TensorFlow start of zoo's commands, imported before TensorFlow loads.

On a CPU-only machine TensorFlow prints lines such as "Could not find cuda drivers",
"failed call to cuInit" and "This TensorFlow binary is optimized to use available CPU
instructions" while it loads: they say nothing to a user who has no GPU. zoo's programs (the
recipes, the `zoo` command and `python -m zoo`) call `quiet_tensorflow_start()` first: it
loads TensorFlow with its standard error captured and writes back every captured line except
those start-up lines. `import zoo` alone never does: a program that imports zoo keeps its
standard error as it is.

Nothing is filtered when a GPU device file exists (/dev/nvidia*: there CUDA messages
matter), when TensorFlow was imported before, or when ZOO_TF_VERBOSE=1 is set.

This package imports nothing of zoo or TensorFlow until it is asked to, so that importing it
(unlike importing any `zoo.*` module, which loads Keras) comes before TensorFlow:

    import zoo_startup

    zoo_startup.quiet_tensorflow_start()

    import zoo  # TensorFlow is loaded by now
"""

import glob
import os
import re
import sys
import tempfile

# The start-up lines of TensorFlow on a CPU-only machine (TF 2.21), nothing else.
STARTUP_NOISE = re.compile(
    r"cudart_stub\.cc|cuda_platform\.cc.*cuInit|cuda_diagnostics\.cc|cpu_feature_guard\.cc|"
    r"All log messages before absl::InitializeLog|^To enable the following instructions|"
    r"Unable to register cu(DNN|FFT|BLAS) factory|computation placer already registered|"
    r"oneDNN custom operations are on"
)


def has_gpu_device():
    """True when the machine has an NVIDIA device file (a GPU TensorFlow may use)."""
    return bool(glob.glob("/dev/nvidia[0-9]*"))


def quiet_tensorflow_start():
    """Imports TensorFlow (and Keras) with its CPU start-up lines filtered out of stderr.

    Does nothing when TensorFlow is already imported, on a machine with a GPU, or with
    ZOO_TF_VERBOSE=1. Every other line TensorFlow writes while loading is written back.
    """
    if "tensorflow" in sys.modules or os.environ.get("ZOO_TF_VERBOSE") or has_gpu_device():
        return
    try:
        stderr_fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # stderr replaced (pytest capture, IDEs)
        stderr_fd = 2
    with tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        saved = os.dup(stderr_fd)
        os.dup2(captured.fileno(), stderr_fd)
        try:
            import keras  # noqa: F401  (loads TensorFlow, its backend)
            import tensorflow as tf

            tf.config.list_physical_devices()  # CUDA's probe (cuInit) happens here
        finally:
            sys.stderr.flush()
            os.dup2(saved, stderr_fd)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode("utf-8", errors="replace")
            kept = [line for line in text.splitlines(True) if not STARTUP_NOISE.search(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def python_m_module():
    """The module `python -m MODULE` is importing, while it imports it (before the module
    runs, `sys.argv[0]` is "-m"); "" otherwise.

    `zoo/__init__.py` asks this: under `python -m zoo` (or `python -m zoo.<module>`) the
    package is imported before its `__main__` runs, so the quiet start of that command must
    happen there; a program that only imports zoo gets "" and nothing happens.
    """
    if sys.argv[:1] != ["-m"]:
        return ""
    arguments = getattr(sys, "orig_argv", [])[1:]
    for i, argument in enumerate(arguments):
        if argument == "-m":
            return arguments[i + 1] if i + 1 < len(arguments) else ""
        if argument.startswith("-m"):  # -mzoo
            return argument[2:]
    return ""


def main():
    """The `zoo` console script: the quiet start, then `zoo.cli.main` (`python -m zoo`)."""
    quiet_tensorflow_start()
    from zoo.cli import main as cli_main

    return cli_main()
