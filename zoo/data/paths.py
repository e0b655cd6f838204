"""Where corpora are read from and cached.

- `data_dir()`: `$ZOO_DATA_DIR` when set, else the `shared/data` folder beside the checkout
  (`<repo>/../shared/data`).
- `cache_dir()`: `$ZOO_CACHE_DIR` when set, else `~/.cache/zoo`; downloads are kept there.
"""

import os
from pathlib import Path

# zoo/data/paths.py -> parents: zoo/data, zoo, <repo>, the folder that holds the checkout.
_BESIDE_CHECKOUT = Path(__file__).resolve().parents[3]


def data_dir():
    """The folder holding local corpora (`multi30k/`, `anki-spa-eng/`, ...)."""
    value = os.environ.get("ZOO_DATA_DIR")
    if value:
        return Path(value).expanduser()
    return _BESIDE_CHECKOUT / "shared" / "data"


def cache_dir():
    """The folder where downloaded corpora are cached."""
    value = os.environ.get("ZOO_CACHE_DIR")
    if value:
        return Path(value).expanduser()
    return Path.home() / ".cache" / "zoo"
