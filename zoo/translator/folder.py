"""A translator's output folder: what `Translator.save` writes and `from_directory` reads.

    <out>/model.keras          the model (keras.saving, safe_mode=True loads it); a recipe
                               run may deliver another file (translator.json's "model_file",
                               e.g. model.averaged.keras when averaging won on validation)
    <out>/source_tokenizer/    `Tokenizer.save` of the source side
    <out>/target_tokenizer/    `Tokenizer.save` of the target side
    <out>/translator.json      search settings (beam_size, length_penalty, ...) and optional
                               metadata (data, source_lang, target_lang, model_file, ...)
    <out>/serving/             the SavedModel written by `Translator.export`

A setting that translator.json does not hold takes the `Translator`'s default
(`zoo.search.defaults`).
"""

import json
import os

from zoo.json_files import write_json

MODEL_FILE = "model.keras"
SOURCE_TOKENIZER_DIR = "source_tokenizer"
TARGET_TOKENIZER_DIR = "target_tokenizer"
CONFIG_FILE = "translator.json"
SERVING_DIR = "serving"

SETTINGS = (
    "beam_size",
    "length_penalty",
    "batch_size",
    "max_length_ratio",
    "max_length_offset",
    "coverage_penalty",
)
"""The `Translator`'s settings, the keys of `zoo.search.defaults.SEARCH_DEFAULTS`."""


def check_metadata(metadata):
    """`metadata` as a dict; a ValueError when it sets a search setting."""
    metadata = dict(metadata or {})
    clash = sorted(set(metadata) & set(SETTINGS))
    if clash:
        raise ValueError(f"metadata must not set the search settings {clash}.")
    return metadata


def read_metadata(directory):
    """The contents of `<directory>/translator.json` as a dict ({} when absent)."""
    path = os.path.join(os.fspath(directory), CONFIG_FILE)
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_config(directory, settings, metadata=None):
    """Writes `<directory>/translator.json`: the `metadata` keys and the search `settings`.
    Returns the file's path."""
    metadata = check_metadata(metadata)
    path = os.path.join(os.fspath(directory), CONFIG_FILE)
    write_json(path, {**metadata, **settings})
    return path


def model_file(directory):
    """The model file a folder delivers: translator.json's "model_file" (a recipe run writes
    the one it chose on validation there), else "model.keras"."""
    name = read_metadata(directory).get("model_file", MODEL_FILE)
    if not isinstance(name, str) or not name or os.path.basename(name) != name:
        raise ValueError(
            f"{os.path.join(os.fspath(directory), CONFIG_FILE)}: 'model_file' must be a "
            f"file name inside the folder, such as {MODEL_FILE!r}; got {name!r}."
        )
    return name


def read_settings(directory, overrides):
    """The search settings of translator.json, replaced by `overrides` (a dict); a ValueError
    names an override that is no setting."""
    unknown = sorted(set(overrides) - set(SETTINGS))
    if unknown:
        raise ValueError(f"Unknown Translator setting(s) {unknown}; valid: {SETTINGS}.")
    settings = {k: v for k, v in read_metadata(directory).items() if k in SETTINGS}
    return {**settings, **overrides}


def save_parts(directory, model, source_tokenizer, target_tokenizer):
    """Writes model.keras and both tokenizer folders into `directory` (made if missing)."""
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    model.save(os.path.join(directory, MODEL_FILE))
    source_tokenizer.save(os.path.join(directory, SOURCE_TOKENIZER_DIR))
    target_tokenizer.save(os.path.join(directory, TARGET_TOKENIZER_DIR))


def load_parts(directory, name=None):
    """(model, source_tokenizer, target_tokenizer) of a folder; `name`: the model file
    (default: `model_file(directory)`). A ValueError lists what is missing."""
    import keras

    from zoo.text import load_tokenizer

    directory = os.fspath(directory)
    name = model_file(directory) if name is None else name
    paths = [
        os.path.join(directory, part) for part in (name, SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR)
    ]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise ValueError(
            f"{directory} is not a zoo output folder: missing {missing} (expected "
            f"{name}, {SOURCE_TOKENIZER_DIR}/ and {TARGET_TOKENIZER_DIR}/)."
        )
    model = keras.saving.load_model(paths[0], compile=False, safe_mode=True)
    return model, load_tokenizer(paths[1]), load_tokenizer(paths[2])
