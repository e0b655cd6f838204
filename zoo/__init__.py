"""zoo: attention-based recurrent neural machine translation for Keras 3.

Importing `zoo` registers every layer and model with Keras, so that
`keras.models.load_model("model.keras")` opens files written by `zoo`. It changes nothing
else in the program: the quiet TensorFlow start of zoo's own commands (`zoo_startup`) is
theirs to call.
"""

from zoo_startup import python_m_module, quiet_tensorflow_start

if python_m_module().partition(".")[0] == "zoo":  # `python -m zoo ...`: the command's start
    quiet_tensorflow_start()  # before TensorFlow loads, as the recipes and `zoo` do

from zoo import constants, layers, models  # noqa: E402, F401  (registration side effects)

__version__ = "0.1.0"  # the one place of the version: pyproject.toml reads it here
