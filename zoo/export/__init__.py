"""zoo.export: a Translator as a SavedModel that runs with TensorFlow and tensorflow-text only."""

from zoo.export.saved_model import (
    ATTENTION_KEYS,
    METADATA_FILE,
    OUTPUT_KEYS,
    export_translator,
    load_exported,
)
from zoo.export.saved_model_translator import SavedModelTranslator

__all__ = [
    "ATTENTION_KEYS",
    "METADATA_FILE",
    "OUTPUT_KEYS",
    "SavedModelTranslator",
    "export_translator",
    "load_exported",
]
