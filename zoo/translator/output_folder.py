"""`TranslatorFiles`: a translator's files, what `Translator.save` writes and
`Translator.from_directory` reads (the `Translator` holds this part as `translator.files`
and answers `save`, `export`, ... with it; `from_directory`, `read_metadata` and
`model_file` read through the functions here).

    <out>/model.keras          the model (keras.saving, safe_mode=True loads it); a recipe
                               run may deliver another file (translator.json's "model_file",
                               e.g. model.averaged.keras when averaging won on validation)
    <out>/source_tokenizer/    `Tokenizer.save` of the source side
    <out>/target_tokenizer/    `Tokenizer.save` of the target side
    <out>/translator.json      search settings (beam_size, length_penalty, ...) and optional
                               metadata (data, source_lang, target_lang, model_file, ...)
    <out>/serving/             the SavedModel written by `Translator.export`

A setting that translator.json does not hold takes the `Translator`'s default
(`zoo.search.defaults`); a folder without translator.json is refused (`read_metadata`), since
another model file or search would translate without a word.
"""

import dataclasses
import os

from zoo.backend import require_tensorflow
from zoo.checks import check_int
from zoo.constants import (
    CONFIG_FILE,
    MODEL_FILE,
    SERVING_DIR,
    SOURCE_TOKENIZER_DIR,
    TARGET_TOKENIZER_DIR,
)
from zoo.hub import check_folder, read_metadata
from zoo.json_files import write_json
from zoo.search import SearchSettings
from zoo.search.defaults import SEARCH_DEFAULTS

SETTINGS = tuple(SEARCH_DEFAULTS)
"""The `Translator`'s settings: the keys of `zoo.search.defaults.SEARCH_DEFAULTS`."""

METADATA_KEYS = ("recipe", "data", "source_lang", "target_lang", "model_file")
"""The metadata keys that zoo reads from translator.json (a recipe writes them); other keys
are the caller's own metadata, kept as written."""


def check_keys(config, path):
    """A ValueError naming a key of `config` (translator.json's object, at `path`) that is
    neither a setting nor a known metadata key but resembles one (a typo such as
    "beam_sizee", which would otherwise be ignored), with the known keys."""
    import difflib

    known = (*SETTINGS, *METADATA_KEYS)
    for key in config:
        if key in known or not isinstance(key, str):
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        if close:
            raise ValueError(
                f"{path}: unknown key {key!r} (did you mean {close[0]!r}?); the settings are "
                f"{list(SETTINGS)} and the metadata zoo reads {list(METADATA_KEYS)} (other "
                "keys are free metadata)."
            )
    return config


def check_metadata(metadata):
    """`metadata` as a dict; a ValueError when it sets a search setting."""
    metadata = dict(metadata or {})
    clash = sorted(set(metadata) & set(SETTINGS))
    if clash:
        raise ValueError(f"metadata must not set the search settings {clash}.")
    return metadata


def check_settings(settings, where=None):
    """`settings` (Translator setting names -> values) checked as the search checks them
    (`zoo.search.SearchSettings`, `batch_size` an int >= 1); a ValueError, prefixed with
    `where`, names a bad one."""
    search_names = {f.name for f in dataclasses.fields(SearchSettings)}
    try:
        SearchSettings(**{k: v for k, v in settings.items() if k in search_names})
        if "batch_size" in settings:
            check_int(None, "batch_size", settings["batch_size"])
    except ValueError as error:
        raise ValueError(f"{where}: {error}" if where else str(error)) from None
    return dict(settings)


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
    return check_model_file(
        name, f"{os.path.join(os.fspath(directory), CONFIG_FILE)}: 'model_file'"
    )


def check_model_file(name, what="model_file"):
    """`name` when it is a file name inside the folder (no path: "../other/model.keras"
    would load a model from elsewhere); else a ValueError naming `what`."""
    plain = isinstance(name, str) and name not in ("", ".", "..")
    if not plain or os.path.basename(name) != name:
        raise ValueError(
            f"{what} must be a file name inside the folder, such as {MODEL_FILE!r}; got {name!r}."
        )
    return name


def read_settings(directory, overrides):
    """The search settings of translator.json, replaced by `overrides` (a dict); a ValueError
    names an override that is no setting."""
    unknown = sorted(set(overrides) - set(SETTINGS))
    if unknown:
        raise ValueError(f"Unknown Translator setting(s) {unknown}; valid: {SETTINGS}.")
    path = os.path.join(os.fspath(directory), CONFIG_FILE)
    config = check_keys(read_metadata(directory), path)
    settings = {k: v for k, v in config.items() if k in SETTINGS}
    check_settings(settings, path)
    return check_settings({**settings, **overrides})


def save_parts(directory, model, source_tokenizer, target_tokenizer):
    """Writes model.keras and both tokenizer folders into `directory` (made if missing)."""
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    model.save(os.path.join(directory, MODEL_FILE))
    source_tokenizer.save(os.path.join(directory, SOURCE_TOKENIZER_DIR))
    target_tokenizer.save(os.path.join(directory, TARGET_TOKENIZER_DIR))


def load_model_file(path):
    """The model saved at `path` (a .keras file; `keras.saving.load_model` with
    `safe_mode=True`, uncompiled). A ValueError names the file when it is missing or is no
    valid .keras file (truncated, corrupt, or naming a class that `import zoo` does not
    register), with the cause."""
    import keras

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file.")
    damage = zip_damage(path)
    if damage:
        raise ValueError(f"{path} is not a valid .keras file ({damage}).")
    try:
        return keras.saving.load_model(path, compile=False, safe_mode=True)
    except Exception as error:  # noqa: BLE001 - any failure to read the file says so
        cause = " ".join(str(error).split())
        if len(cause) > 300:
            cause = cause[:300] + " ..."
        raise ValueError(
            f"{path} is not a valid .keras file ({type(error).__name__}: {cause})."
        ) from error


def zip_damage(path):
    """What is wrong with the zip archive at `path` (a .keras file is one), or None."""
    import zipfile

    size = os.path.getsize(path)
    if not zipfile.is_zipfile(path):
        return f"not a zip archive, {size} bytes: truncated, or another kind of file"
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        return f"a damaged zip archive: {error}"
    return None if bad is None else f"a damaged zip archive: entry {bad!r} fails its checksum"


def load_parts(directory, name=None):
    """(model, source_tokenizer, target_tokenizer) of a folder; `name`: the model file
    (default: `model_file(directory)`). A ValueError lists what is missing."""
    from zoo.text import load_tokenizer

    directory = check_folder(directory)
    name = model_file(directory) if name is None else check_model_file(name)
    paths = [
        os.path.join(directory, part) for part in (name, SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR)
    ]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise ValueError(
            f"{directory} is not a zoo output folder: missing {missing} (expected "
            f"{name}, {SOURCE_TOKENIZER_DIR}/ and {TARGET_TOKENIZER_DIR}/)."
        )
    return load_model_file(paths[0]), load_tokenizer(paths[1]), load_tokenizer(paths[2])


EXPORT_COMMAND = (
    'KERAS_BACKEND=tensorflow python -c "from zoo.translator import Translator; '
    "Translator.from_directory('DIR').export('DIR/serving')\""
)
"""The one call that exports an output folder DIR (saved on any backend) as a SavedModel:
TensorFlow loads its .keras file and writes DIR/serving."""


def _require_tensorflow(what):
    """A RuntimeError naming the export command unless Keras runs on TensorFlow."""
    require_tensorflow(
        f"{what} (a SavedModel or LiteRT graph)",
        "Save the folder (translator.save(DIR, serving=False)) and export it from "
        f"TensorFlow, which loads its .keras file: {EXPORT_COMMAND}",
    )


class TranslatorFiles:
    """The files of `translator` (a `Translator`, which holds this part as
    `translator.files` and answers `save`, `write_config`, `export`, `export_litert` and
    `push_to_hub` with it): the output folder (module docstring), the SavedModel, the
    LiteRT file and the hub upload."""

    def __init__(self, translator):
        self.translator = translator

    def export(
        self, path, beam_size=None, greedy=True, attention=True, n_best=None, sampling=None,
        verbose=False, chunk_size=None,
    ):  # fmt: skip
        """Writes a SavedModel to `path`; see `zoo.export.export_translator` for its endpoints.

        The `translate` endpoint (also `serving_default`) searches with `beam_size`
        (default: the translator's); `translate_greedy` with beam size 1; with `n_best=n`,
        `translate_n_best` gives the n best of that beam; with `sampling` (a dict of
        `temperature`, `top_k`, `top_p`, possibly empty), `sample` draws translations.
        `attention=False` leaves the attention weights out of the outputs (faster beam
        search). `chunk_size`: the most sentences an endpoint searches at once, a larger
        batch being cut into chunks inside the graph (default: the translator's batch
        size). TensorFlow only: on JAX and PyTorch a RuntimeError gives the command that
        exports the saved folder from TensorFlow."""
        _require_tensorflow("Translator.export")
        from zoo.export import export_translator

        return export_translator(
            self.translator, path, beam_size=beam_size, greedy=greedy, attention=attention,
            n_best=n_best, sampling=sampling, verbose=verbose, chunk_size=chunk_size,
        )  # fmt: skip

    def export_litert(
        self, path, quantize="none", search="greedy", beam_size=None, batch_size=1, greedy=True
    ):  # fmt: skip
        """Writes a LiteRT (TFLite) file of token ids with the search inside, and the
        tokenizers beside it; see `zoo.export.export_litert` for its arguments. TensorFlow
        only, as `export`."""
        _require_tensorflow("Translator.export_litert")
        from zoo.export import export_litert

        return export_litert(
            self.translator, path, quantize=quantize, search=search, beam_size=beam_size,
            batch_size=batch_size, greedy=greedy,
        )  # fmt: skip

    def save(self, directory, serving=True, metadata=None):
        """Writes the output folder (module docstring) to `directory`: model.keras,
        source_tokenizer/, target_tokenizer/, translator.json and (with `serving=True`)
        serving/. Returns `directory`.

        `metadata`: extra JSON-serialisable keys for translator.json, e.g.
        `{"data": "multi30k", "source_lang": "de", "target_lang": "en"}`, which
        `python -m zoo evaluate` uses as its defaults (see `read_metadata`).
        On JAX and PyTorch, `serving=True` is refused before anything is written (the
        SavedModel needs TensorFlow; `export` says how to write it)."""
        directory = os.fspath(directory)
        check_metadata(metadata)
        if serving:
            _require_tensorflow("Translator.save(serving=True)")
        translator = self.translator
        save_parts(directory, translator.model, translator.source_tokenizer,
                   translator.target_tokenizer)  # fmt: skip
        translator.write_config(directory, metadata)
        if serving:
            translator.export(os.path.join(directory, SERVING_DIR))
        return directory

    def write_config(self, directory, metadata=None):
        """Writes `<directory>/translator.json`: the search settings (`get_config`) and the
        optional `metadata` keys (see `save`). Returns the file's path."""
        return write_config(directory, self.translator.get_config(), metadata)

    def push_to_hub(self, handle, token=None, private=False, metadata=None):
        """Uploads this translator to the Hugging Face Hub repository `handle`
        (`hf://owner/name`, created if missing) in the hub layout (`zoo.hub`): model.keras,
        the tokenizers, translator.json and a model card. Needs `huggingface_hub` (the
        `hub` extra) and a token (`hf auth login`, HF_TOKEN or `token`). Returns the
        repository's URL; `Translator.from_directory(handle)` loads it back."""
        import tempfile

        from zoo.hub import push_translator

        with tempfile.TemporaryDirectory() as scratch:
            folder = self.translator.save(os.path.join(scratch, "translator"), serving=False,
                               metadata=metadata)  # fmt: skip
            return push_translator(folder, handle, token=token, private=private)
