"""Which Keras backend runs zoo: the one place the package asks.

Keras reads `KERAS_BACKEND` once, at its import; the model code is `keras.ops` on every
backend, and these checks choose the few paths that only one backend has: TensorFlow's
graphs (`tf.function`, SavedModel, data-dependent shapes in a loop) and PyTorch's
`no_grad`.
"""

import importlib.util

import keras

BACKENDS = ("tensorflow", "jax", "torch")  # the Keras backends zoo is tested on


def backend_name():
    """The Keras backend's name: "tensorflow", "jax", "torch" or "numpy"."""
    return keras.backend.backend()


def on_tensorflow():
    """True when Keras runs on TensorFlow (graphs, SavedModel export, `tf.distribute`)."""
    return backend_name() == "tensorflow"


def on_torch():
    """True when Keras runs on PyTorch."""
    return backend_name() == "torch"


def require_tensorflow(what, instead, error=RuntimeError):
    """Raises `error` unless Keras runs on TensorFlow: `what` (e.g. "Translator.export")
    needs it, and `instead` tells the user what to do on this backend.

    Example:
        >>> require_tensorflow("search_function", "Call zoo.search.search.")  # on TensorFlow
    """
    backend = backend_name()
    if backend != "tensorflow":
        raise error(
            f"{what} runs on TensorFlow only; this process runs Keras on {backend}. {instead}"
        )


def backend_installed(backend):
    """True when the package of `backend` ("tensorflow", "jax" or "torch") imports."""
    return importlib.util.find_spec(backend) is not None
