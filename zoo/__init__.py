"""zoo: attention-based recurrent neural machine translation for Keras 3.

Importing `zoo` registers every layer and model with Keras, so that
`keras.models.load_model("model.keras")` opens files written by `zoo`.
"""

from zoo.startup import quiet_tensorflow_start

quiet_tensorflow_start()  # before TensorFlow loads: no CUDA lines on a CPU-only machine

from zoo import constants, layers, models  # noqa: E402, F401  (registration side effects)

__version__ = "0.1.0"
