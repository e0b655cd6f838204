"""zoo.export: a Translator as a SavedModel that runs with TensorFlow and tensorflow-text only,
or as a LiteRT (TFLite) file of token ids that runs with LiteRT's interpreter alone."""

from zoo.export.litert import export_litert
from zoo.export.litert_translator import LiteRTTranslator
from zoo.export.saved_model import (
    ATTENTION_KEYS,
    METADATA_FILE,
    OUTPUT_KEYS,
    export_translator,
    load_exported,
    read_export_metadata,
)
from zoo.export.saved_model_translator import SavedModelTranslator

__all__ = [
    "ATTENTION_KEYS",
    "LiteRTTranslator",
    "METADATA_FILE",
    "OUTPUT_KEYS",
    "SavedModelTranslator",
    "export_litert",
    "export_translator",
    "load_exported",
    "read_export_metadata",
]
