"""zoo: attention-based recurrent neural machine translation for Keras 3.

Importing `zoo` registers every layer and model with Keras, so that
`keras.models.load_model("model.keras")` opens files written by `zoo`.
"""

from zoo import constants, layers, models  # noqa: F401  (registration side effects)

__version__ = "0.1.0"
