"""Trained translators by name, folder or hub handle: one resolver for every part of zoo.

    resolve_translator("luong_local_general_multi30k_de_en")  # shipped in saved_models/
    resolve_translator("saved_models/my_run")                  # a folder
    resolve_translator("hf://owner/name")                      # the Hugging Face Hub
    resolve_translator("hf://owner/name@v1.0")                 # a revision (branch, tag, commit)

A *shipped translator* is a trained output folder kept in git in the checkout's
`saved_models/` (`SAVED_MODELS`), with a model card (README.md) and the SHA-256 of every
file (checksums.sha256). It holds what translating, evaluating, exporting and fine-tuning
need and nothing else: the model file, the two tokenizers, translator.json, run.json, the
card and the checksums (the *hub layout*). `package_translator` writes that layout from a
run's output folder (optionally with the weights stored as float16, which Keras loads into
the model's float32 variables), `push_translator` uploads it to the Hub, and
`resolve_translator` downloads it from there (`huggingface_hub`, the optional extra
`pip install "zoo-nmt[hub]"`; files are cached in the Hub's cache, `HF_HOME`). A folder with
checksums is verified whenever it is resolved, so that a damaged file is named before
anything loads it.

In zoo a *preset* is an architecture and its sizes (`zoo.models.presets`); a trained
translator is data: weights, tokenizers and settings, named after the folder that holds them.
"""

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from zoo.constants import (
    CARD_FILE,
    CHECKSUMS_FILE,
    CONFIG_FILE,
    MODEL_FILE,
    RUN_FILE,
    SOURCE_TOKENIZER_DIR,
    TARGET_TOKENIZER_DIR,
)

SAVED_MODELS = Path(__file__).resolve().parent.parent / "saved_models"
"""The checkout's saved_models/, where the shipped translators are (found from any working
directory: it is beside the package of an installed checkout)."""

HUB_PREFIX = "hf://"
HUB_EXTRA = 'pip install "zoo-nmt[hub]"'
TOKENIZER_DIRS = (SOURCE_TOKENIZER_DIR, TARGET_TOKENIZER_DIR)
HUB_PATTERNS = (
    "*.keras",
    CONFIG_FILE,
    RUN_FILE,
    CARD_FILE,
    CHECKSUMS_FILE,
    *(f"{d}/*" for d in TOKENIZER_DIRS),
)
"""The files a hub repository's download takes (the hub layout)."""


def is_hub_handle(handle):
    """Whether `handle` names a Hub repository (`hf://owner/name[@revision]`)."""
    return isinstance(handle, str) and handle.startswith(HUB_PREFIX)


def parse_handle(handle):
    """(repo_id, revision or None) of `hf://owner/name[@revision]`; a ValueError otherwise."""
    body = handle[len(HUB_PREFIX) :] if is_hub_handle(handle) else None
    repo_id, _, revision = (body or "").partition("@")
    parts = repo_id.split("/")
    if body is None or len(parts) != 2 or not all(parts) or (_ and not revision):
        raise ValueError(
            f"{handle!r} is not a hub handle; expected {HUB_PREFIX}owner/name or "
            f"{HUB_PREFIX}owner/name@revision."
        )
    return repo_id, revision or None


def shipped_translators():
    """The names of the shipped translators (folders of `SAVED_MODELS` with a model card and
    checksums), sorted."""
    if not SAVED_MODELS.is_dir():
        return []
    return sorted(
        p.name
        for p in SAVED_MODELS.iterdir()
        if (p / CHECKSUMS_FILE).is_file() and (p / CONFIG_FILE).is_file()
    )


def resolve_translator(handle, verify=True):
    """The local folder of a trained translator, as a str.

    Args:
        handle: a folder path, the name of a shipped translator (`shipped_translators()`),
            or a hub handle `hf://owner/name[@revision]` (downloaded once into the Hub's
            cache; `HF_HUB_OFFLINE=1` reads the cache only).
        verify: check the folder's files against its checksums.sha256, when it has one.

    A folder path is taken as it is (what is missing in it is reported by whoever reads
    it). A ValueError names a handle that is none of the three, a hub handle without
    `huggingface_hub` installed or that cannot be fetched, and a file whose hash differs
    from the folder's checksums.
    """
    handle = os.fspath(handle)
    if is_hub_handle(handle):
        directory = _download(handle)
    elif os.path.exists(handle):
        directory = handle
    elif handle in shipped_translators():
        directory = os.fspath(SAVED_MODELS / handle)
    elif os.sep in handle or (os.altsep and os.altsep in handle) or handle.startswith("."):
        return handle  # a path that does not exist: the reader says so
    else:
        shipped = ", ".join(shipped_translators()) or f"none in {SAVED_MODELS}"
        raise ValueError(
            f"{handle!r} is neither a folder nor a shipped translator (shipped: {shipped}; "
            f"`python -m zoo list` lists them); a hub handle reads {HUB_PREFIX}owner/name."
        )
    if verify:
        verify_checksums(directory)
    return directory


def _download(handle):
    """The local snapshot folder of hub handle `handle` (fetched into the Hub's cache)."""
    repo_id, revision = parse_handle(handle)
    try:
        import huggingface_hub
        from huggingface_hub import errors
    except ImportError:
        raise ValueError(
            f"{handle}: hub handles need the huggingface_hub package: {HUB_EXTRA}."
        ) from None
    try:
        return huggingface_hub.snapshot_download(
            repo_id, revision=revision, allow_patterns=list(HUB_PATTERNS)
        )
    except errors.LocalEntryNotFoundError:
        raise ValueError(
            f"{handle}: not in the Hub's local cache ({huggingface_hub.constants.HF_HUB_CACHE}) "
            "and the Hub cannot be reached (no network, or HF_HUB_OFFLINE=1); connect once "
            "to download it."
        ) from None
    except errors.RepositoryNotFoundError:
        raise ValueError(
            f"{handle}: no such repository on the Hub, or a private one (log in with "
            "`hf auth login` or set HF_TOKEN)."
        ) from None
    except errors.RevisionNotFoundError:
        raise ValueError(f"{handle}: the repository has no revision {revision!r}.") from None
    except (errors.HfHubHTTPError, OSError) as error:
        raise ValueError(f"{handle}: the download failed ({error}).") from None


def file_hash(path):
    """The SHA-256 of the file at `path`, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_checksums(directory):
    """{relative path: sha256} of `<directory>/checksums.sha256` ({} when it has none)."""
    path = os.path.join(os.fspath(directory), CHECKSUMS_FILE)
    if not os.path.isfile(path):
        return {}
    recorded = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            digest, _, name = line.rstrip("\n").partition("  ")
            if len(digest) != 64 or not name:
                raise ValueError(
                    f"{path} line {number}: expected '<sha256>  <file>' (sha256sum's format); "
                    f"got {line.strip()[:80]!r}."
                )
            recorded[name] = digest
    return recorded


def verify_checksums(directory):
    """Checks every file `<directory>/checksums.sha256` lists; a ValueError names a missing
    or changed one and how to restore it."""
    directory = os.fspath(directory)
    for name, digest in read_checksums(directory).items():
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise ValueError(f"{directory}: {name} is missing ({CHECKSUMS_FILE} lists it).")
        found = file_hash(path)
        if found != digest:
            raise ValueError(
                f"{path} is damaged or was changed: its SHA-256 is {found[:12]}..., "
                f"{CHECKSUMS_FILE} records {digest[:12]}.... Restore it (in a checkout: "
                f"git checkout -- {path}; from the Hub: download it again)."
            )


def layout_files(directory):
    """The files of `directory` that make up the hub layout, as relative paths: the model
    file translator.json names (else model.keras), the tokenizers, translator.json, and
    run.json and README.md where present. A ValueError names a missing part."""
    directory = os.fspath(directory)
    config = read_metadata(directory)
    model_file = config.get("model_file", MODEL_FILE)
    files = [model_file, CONFIG_FILE]
    files += [n for n in (RUN_FILE, CARD_FILE) if os.path.isfile(os.path.join(directory, n))]
    for tokenizer in TOKENIZER_DIRS:
        root = os.path.join(directory, tokenizer)
        if not os.path.isdir(root):
            raise ValueError(f"{directory}: {tokenizer}/ is missing.")
        files += sorted(
            os.path.relpath(os.path.join(where, name), directory).replace(os.sep, "/")
            for where, _, names in os.walk(root)
            for name in names
        )
    if not os.path.isfile(os.path.join(directory, model_file)):
        raise ValueError(f"{directory}: {model_file} is missing ({CONFIG_FILE} names it).")
    return files


def folder_contents(directory, limit=12):
    """What `directory` holds, for an error message: "model.keras, source_tokenizer/, ..."."""
    names = sorted(os.listdir(directory))
    shown = [n + "/" if os.path.isdir(os.path.join(directory, n)) else n for n in names[:limit]]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (", ".join(shown) + more) if shown else "nothing"


def check_folder(directory):
    """`directory` as a str; a ValueError when it is no folder."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        what = "a file" if os.path.exists(directory) else "no such folder"
        raise ValueError(f"{directory} is not a zoo output folder: {what}.")
    return directory


def read_metadata(directory):
    """The contents of `<directory>/translator.json` as a dict.

    A ValueError names the file when it is missing (it names the model file the folder
    delivers and its search settings: without it another model or search would translate
    without a word; the message lists what the folder holds), is not JSON, or holds no
    JSON object."""
    directory = check_folder(directory)
    path = os.path.join(directory, CONFIG_FILE)
    if not os.path.isfile(path):
        raise ValueError(
            f"{directory} is not a zoo output folder: {CONFIG_FILE} is missing, which names "
            "the model file the folder delivers and the search settings it was evaluated "
            f"with. The folder holds: {folder_contents(directory)}. Restore the file from "
            f"the run; or, to translate with {MODEL_FILE} and the library's search settings "
            f"(zoo.search.defaults), write a {CONFIG_FILE} holding {{}}."
        )
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON ({error}).") from None
    if not isinstance(config, dict):
        raise ValueError(
            f'{path} must hold a JSON object such as {{"beam_size": 5, "model_file": '
            f'"{MODEL_FILE}"}}; it holds a {type(config).__name__}.'
        )
    return config


def write_checksums(directory, files=None):
    """Writes `<directory>/checksums.sha256` for `files` (default: `layout_files`)."""
    directory = os.fspath(directory)
    files = layout_files(directory) if files is None else files
    lines = [
        f"{file_hash(os.path.join(directory, n))}  {n}\n" for n in files if n != CHECKSUMS_FILE
    ]
    with open(os.path.join(directory, CHECKSUMS_FILE), "w", encoding="utf-8") as f:
        f.writelines(lines)


def package_translator(directory, destination, float16=False, card=None):
    """Writes the hub layout of output folder `directory` into `destination` (a new folder).

    The delivered model file is written as model.keras (translator.json then names it);
    `float16=True` stores its float32 weights as float16 (half the size; Keras loads them
    into float32 variables); `card`: the model card's text (README.md), else the folder's
    own README.md where it has one. Ends with the checksums. Returns the folder's files.
    """
    directory, destination = os.fspath(directory), os.fspath(destination)
    if os.path.exists(destination):
        raise ValueError(f"{destination} exists; expected a new folder for the translator.")
    files = layout_files(directory)
    config = read_metadata(directory)
    os.makedirs(destination)
    for name in files[1:]:
        if name == CONFIG_FILE or (name == CARD_FILE and card is not None):
            continue
        os.makedirs(os.path.dirname(os.path.join(destination, name)), exist_ok=True)
        shutil.copyfile(os.path.join(directory, name), os.path.join(destination, name))
    source_model = os.path.join(directory, files[0])
    target_model = os.path.join(destination, MODEL_FILE)
    if float16:
        store_float16(source_model, target_model)
    else:
        shutil.copyfile(source_model, target_model)
    config["model_file"] = MODEL_FILE
    with open(os.path.join(destination, CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    if card is not None:
        Path(destination, CARD_FILE).write_text(card, encoding="utf-8")
    write_checksums(destination)
    return layout_files(destination) + [CHECKSUMS_FILE]


def store_float16(source, destination):
    """Copies the .keras file `source` to `destination` with its float32 weights stored as
    float16 (its other entries as they are). Keras casts them back to the variables' dtype
    when it loads the file, on every backend."""
    import io
    import zipfile

    import h5py
    import numpy as np

    with zipfile.ZipFile(source) as archive:
        entries = {info.filename: archive.read(info) for info in archive.infolist()}
    weights = "model.weights.h5"
    if weights not in entries:
        raise ValueError(f"{source} holds no {weights}; expected a Keras 3 .keras file.")
    halved = io.BytesIO()
    with h5py.File(io.BytesIO(entries[weights]), "r") as old, h5py.File(halved, "w") as new:

        def copy(name, item):
            if isinstance(item, h5py.Dataset):
                data = item[()]
                new.create_dataset(
                    name, data=data.astype(np.float16) if data.dtype == "f4" else data
                )
            else:
                new.require_group(name)
            new[name].attrs.update(dict(item.attrs))

        old.visititems(copy)
        new.attrs.update(dict(old.attrs))
    entries[weights] = halved.getvalue()
    with zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)


def push_translator(directory, handle, token=None, private=False, message=None):
    """Uploads output folder `directory` to the Hub repository `handle` (`hf://owner/name`,
    created if missing) in the hub layout (`package_translator`; the folder's own card, or a
    minimal one). Returns the repository's URL."""
    repo_id, revision = parse_handle(handle)
    try:
        from huggingface_hub import HfApi
    except ImportError:
        raise ValueError(
            f"pushing to {handle} needs the huggingface_hub package: {HUB_EXTRA}."
        ) from None
    with tempfile.TemporaryDirectory() as scratch:
        staged = os.path.join(scratch, "translator")
        card = None
        if not os.path.isfile(os.path.join(os.fspath(directory), CARD_FILE)):
            card = minimal_card(directory)
        package_translator(directory, staged, card=card)
        api = HfApi(token=token)
        try:
            url = api.create_repo(repo_id, private=private, exist_ok=True)
            api.upload_folder(
                repo_id=repo_id,
                folder_path=staged,
                revision=revision,
                commit_message=message or "Upload a zoo translator",
            )
        except Exception as error:  # noqa: BLE001 - the Hub's client raises HTTP and transport errors of its own
            raise ValueError(
                f"pushing to {handle} failed ({type(error).__name__}: {error}); check the "
                "network, the token (hf auth login, or HF_TOKEN) and the repository's name."
            ) from error
    return str(url)


def minimal_card(directory):
    """A model card for a folder that has none: its front matter and how to load it."""
    config = read_metadata(os.fspath(directory))
    languages = [config[k] for k in ("source_lang", "target_lang") if config.get(k)]
    front = ["---", "library_name: zoo", "pipeline_tag: translation", "tags: [keras, zoo]"]
    if languages:
        front.append(f"language: [{', '.join(languages)}]")
    front.append("---")
    return "\n".join(
        [
            *front,
            "",
            "# A zoo translator",
            "",
            "```python",
            "from zoo.translator import Translator",
            "",
            'translator = Translator.from_directory("hf://OWNER/NAME")',
            "```",
            "",
        ]
    )
