"""Multi30k task 1 (Elliott et al., 2016): local copy, else a cached download of the raw files.

Files: `{split}.{lang}` for split in train/val/test2016 and lang in de/en/fr/cs, looked up in
`$ZOO_DATA_DIR/multi30k/`, then in `$ZOO_CACHE_DIR/multi30k/`, else downloaded once (gzip,
sha256-checked) from the official repository https://github.com/multi30k/dataset, pinned
commit below, `data/task1/raw/`.
"""

import gzip
import hashlib
import logging
import os
import urllib.error
import urllib.request

from zoo.data.errors import MissingDataError
from zoo.data.paths import cache_dir, data_dir

logger = logging.getLogger("zoo.data")

COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"
BASE_URL = f"https://raw.githubusercontent.com/multi30k/dataset/{COMMIT}/data/task1/raw/"
LANGUAGES = ("de", "en", "fr", "cs")
SPLITS = ("train", "val", "test2016")
SPLIT_ALIASES = {"validation": "val", "dev": "val", "test": "test2016"}
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


def fetch(address, timeout=60):
    """Downloads `address` and returns its bytes (kept separate so tests can replace it)."""
    with urllib.request.urlopen(address, timeout=timeout) as response:
        return response.read()


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
    address = url(split, lang)
    logger.warning("Downloading Multi30k %s from %s", name, address)
    try:
        data = fetch(address)
    except (urllib.error.URLError, OSError, TimeoutError) as error:
        raise MissingDataError(
            f"Multi30k file {name} not found in {local.parent} and the download from {address} "
            f"failed ({error}). {how}"
        ) from error
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256[name]:
        raise MissingDataError(
            f"The download of {address} has sha256 {digest}, expected {SHA256[name]}. {how}"
        )
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(cached.suffix + ".partial")
    partial.write_bytes(gzip.decompress(data))
    os.replace(partial, cached)
    return cached
