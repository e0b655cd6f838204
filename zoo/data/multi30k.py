"""Multi30k task 1 (Elliott et al., 2016): local copy, else a cached download of the raw files.

Files: `{split}.{lang}` for split in train/val/test2016 and lang in de/en/fr/cs, looked up in
`$ZOO_DATA_DIR/multi30k/`, then in `$ZOO_CACHE_DIR/multi30k/`, else downloaded once with
`keras.utils.get_file` (the gzip file, checked against the sha256 pinned below, then unpacked)
from the official repository https://github.com/multi30k/dataset, pinned commit below,
`data/task1/raw/`. `load` and `open_stream` are the corpus registry's (zoo.data.registry).
"""

import gzip
import hashlib
import logging
import os
import shutil
from pathlib import Path

import keras

from zoo.data.files import MissingDataError, cache_dir, data_dir, read_parallel
from zoo.data.splits import VALIDATION_NAMES
from zoo.data.streamed_corpus import StreamedCorpus

logger = logging.getLogger("zoo.data")

COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"
BASE_URL = f"https://raw.githubusercontent.com/multi30k/dataset/{COMMIT}/data/task1/raw/"
LANGUAGES = ("de", "en", "fr", "cs")
SPLITS = ("train", "val", "test2016")
SPLIT_ALIASES = {**dict.fromkeys(VALIDATION_NAMES, "val"), "test": "test2016"}
_REMOTE_NAMES = {"train": "train", "val": "val", "test2016": "test_2016_flickr"}
# sha256 of the .gz files at COMMIT (see shared/data/multi30k/PROVENANCE.md).
SHA256 = {
    "train.de": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.fr": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
    "train.cs": "a65adb8b32e3bc664f21ecba7a6e7f6950fd1f405e135f7c312faabdb6255077",
    "val.de": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.fr": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
    "val.cs": "b63226e05c4bd5dd6a42897d74b86a1b9d2c31498252c572b1ea7f7996927fcc",
    "test2016.de": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test2016.en": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "test2016.fr": "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90",
    "test2016.cs": "200a4a74cc9560f051924abb9803be008d1908d77f747e9141aeb86dfd2797f1",
}


def canonical_split(split):
    split = SPLIT_ALIASES.get(split, split)
    if split not in SPLITS:
        raise ValueError(f"Multi30k has the splits {SPLITS}, received {split!r}.")
    return split


def url(split, lang):
    return f"{BASE_URL}{_REMOTE_NAMES[split]}.{lang}.gz"


def download_file(split, lang, how=""):
    """Fetches `{split}.{lang}` from the official repository into `$ZOO_CACHE_DIR/multi30k/`
    (`keras.utils.get_file`, sha256-checked) and unpacks it there; returns its path.

    Raises MissingDataError when the download fails or its sha256 is not the pinned one (the
    file is then removed); `how` is appended to the message.
    """
    name = f"{split}.{lang}"
    address = url(split, lang)
    folder = cache_dir() / "multi30k"
    folder.mkdir(parents=True, exist_ok=True)  # get_file falls back to /tmp without it
    try:
        archive = keras.utils.get_file(
            f"{name}.gz",
            address,
            file_hash=SHA256[name],
            hash_algorithm="sha256",
            cache_dir=str(folder.parent),
            cache_subdir=folder.name,
        )
    except ValueError as error:  # get_file: the file's hash is not file_hash
        partial = folder / f"{name}.gz"
        digest = hashlib.sha256(partial.read_bytes()).hexdigest() if partial.is_file() else "?"
        partial.unlink(missing_ok=True)
        raise MissingDataError(
            f"The download of {address} has sha256 {digest}, expected {SHA256[name]} (Multi30k "
            f"at commit {COMMIT}); the file was removed. {how}"
        ) from error
    except Exception as error:  # get_file raises a bare Exception for URL and HTTP errors
        raise MissingDataError(
            f"Multi30k file {name}: the download from {address} failed ({error}). {how}"
        ) from error
    unpacked = os.path.join(os.path.dirname(archive), name)
    with gzip.open(archive, "rb") as source, open(unpacked + ".partial", "wb") as target:
        shutil.copyfileobj(source, target)
    os.replace(unpacked + ".partial", unpacked)
    os.remove(archive)
    return Path(unpacked)


def multi30k_path(split, lang, download=True):
    """The path of `{split}.{lang}`: local copy, cached copy, or a fresh download."""
    split = canonical_split(split)
    if lang not in LANGUAGES:
        raise ValueError(f"Multi30k has the languages {LANGUAGES}, received {lang!r}.")
    name = f"{split}.{lang}"
    local = data_dir() / "multi30k" / name
    if local.is_file():
        return local
    cached = cache_dir() / "multi30k" / name
    if cached.is_file():
        return cached
    how = (
        f"Provide the raw Multi30k files: set ZOO_DATA_DIR to a folder holding multi30k/{name} "
        f"(plain text, one sentence per line; e.g. gunzip {url(split, lang)}), or put it at "
        f"{cached}."
    )
    if not download:
        raise MissingDataError(f"Multi30k file {name} not found in {local.parent}. {how}")
    logger.info("Multi30k file %s not found in %s: downloading it.", name, local.parent)
    return download_file(split, lang, how=f"It is not in {local.parent} either. {how}")


def load(source_lang, target_lang, split, options):
    """The registry's loader: (sources, targets) of `split` (see zoo.data.registry); of
    `options` (a `LoadOptions`) it reads `download`."""
    languages = (source_lang, target_lang)
    paths = [multi30k_path(split, lang, download=options.download) for lang in languages]
    return read_parallel(*paths)


def open_stream(source_lang, target_lang, split, tfds_data_dir=None):
    """The registry's stream opener: `split` as a `StreamedCorpus` of the two files
    (`tfds_data_dir`, which the registry passes every opener, concerns TFDS corpora only)."""
    split = canonical_split(split)
    paths = tuple(str(multi30k_path(split, lang)) for lang in (source_lang, target_lang))
    return StreamedCorpus("multi30k", source_lang, target_lang, split, "parallel", (paths,))
