"""zoo.hub: the hub layout (float16 weights that load as float32, checksums), the resolver
(folder, shipped name, hf:// handle from a pre-filled Hub cache, offline), and its errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
from translator_toy import toy_translator

from zoo import hub
from zoo.translator import Translator

huggingface_hub = pytest.importorskip("huggingface_hub", reason='pip install "zoo-nmt[hub]"')

SENTENCES = ["Ein Hund rennt.", "Zwei Männer lachen."]


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory, data_dir):
    """(an output folder as a recipe leaves it, with extra files, its Translator)."""
    folder = tmp_path_factory.mktemp("run")
    translator = toy_translator("luong_local_p_general", beam_size=2)
    metadata = {"data": "multi30k", "source_lang": "de", "target_lang": "en"}
    translator.save(folder, serving=False, metadata=metadata)
    (folder / "run.json").write_text(json.dumps({"recipe": "luong_local_general", "seed": 0}))
    (folder / "checkpoints").mkdir()
    (folder / "metrics.json").write_text("{}")
    return folder, translator


@pytest.fixture(scope="module")
def packaged(run_folder, tmp_path_factory):
    folder = tmp_path_factory.mktemp("packaged") / "tiny_de_en"
    hub.package_translator(run_folder[0], folder, float16=True, card="# A card\n")
    return folder


def test_the_hub_layout_holds_what_translating_needs_with_float16_weights(run_folder, packaged):
    files = sorted(str(p.relative_to(packaged)) for p in packaged.rglob("*") if p.is_file())
    assert "checkpoints" not in str(files) and "metrics.json" not in files
    assert {"model.keras", "translator.json", "run.json", "README.md", "checksums.sha256"} <= set(
        files
    )
    # Half the bytes of float32 weights (plus the archive's other entries).
    weights = sum(w.size for w in run_folder[1].model.get_weights())
    assert os.path.getsize(packaged / "model.keras") < 2 * weights + 2**16
    # Keras loads the float16 values into float32 variables, equal to float16 rounding.
    model = keras.saving.load_model(packaged / "model.keras")
    assert {w.dtype for w in model.weights} == {"float32"}
    for loaded, original in zip(
        model.get_weights(), run_folder[1].model.get_weights(), strict=True
    ):
        np.testing.assert_array_equal(loaded, original.astype(np.float16).astype(np.float32))


def test_the_checksums_name_a_changed_file(packaged, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(packaged, copy)
    assert hub.resolve_translator(copy) == str(copy)  # verified
    data = bytearray((copy / "target_tokenizer" / "tokenizer.json").read_bytes())
    data[0:1] = b" "
    (copy / "target_tokenizer" / "tokenizer.json").write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"tokenizer\.json is damaged or was changed"):
        hub.resolve_translator(copy)
    (copy / "model.keras").unlink()
    with pytest.raises(ValueError, match=r"model\.keras is missing \(checksums\.sha256 lists"):
        hub.verify_checksums(copy)


def test_a_shipped_name_resolves_to_its_folder_from_any_directory(packaged, monkeypatch, tmp_path):
    monkeypatch.setattr(hub, "SAVED_MODELS", packaged.parent)
    monkeypatch.chdir(tmp_path)
    assert hub.shipped_translators() == ["tiny_de_en"]
    assert hub.resolve_translator("tiny_de_en") == str(packaged)
    with pytest.raises(ValueError, match=r"'tiny' is neither a folder nor a shipped translator "
                       r"\(shipped: tiny_de_en;"):  # fmt: skip
        hub.resolve_translator("tiny")
    for bad in ("hf://owner", "hf://owner/name@", "hf://a/b/c"):
        with pytest.raises(ValueError, match="is not a hub handle"):
            hub.resolve_translator(bad)


def _hub_cache(packaged, root):
    """A Hub cache holding `packaged` as the repository owner/tiny at revision main, laid out
    as huggingface_hub lays out what it downloads (blobs, a snapshot, refs/main)."""
    repo = root / "models--owner--tiny"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = repo / "snapshots" / commit
    for path in packaged.rglob("*"):
        if path.is_file():
            blob = repo / "blobs" / hub.file_hash(path)
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(path.read_bytes())
            link = snapshot / path.relative_to(packaged)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return snapshot


PROBE = """
import json, sys
from zoo import hub
from zoo.translator import Translator
out = {"folder": hub.resolve_translator("hf://owner/tiny")}
out["translations"] = Translator.from_directory("hf://owner/tiny").translate(%r)
for handle in ("hf://owner/missing",):
    try:
        hub.resolve_translator(handle)
    except ValueError as error:
        out[handle] = str(error)
sys.modules["huggingface_hub"] = None  # as if the extra were not installed
try:
    hub.resolve_translator("hf://owner/tiny")
except ValueError as error:
    out["no extra"] = str(error)
print(json.dumps(out))
"""


def test_a_hub_handle_loads_from_the_hubs_cache_offline(packaged, tmp_path):
    snapshot = _hub_cache(packaged, tmp_path / "hub")
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE % SENTENCES], env=env, capture_output=True, text=True,
        timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert Path(out["folder"]) == snapshot
    assert out["translations"] == Translator.from_directory(packaged).translate(SENTENCES)
    assert "hf://owner/missing: not in the Hub's local cache" in out["hf://owner/missing"]
    assert (
        'hub handles need the huggingface_hub package: pip install "zoo-nmt[hub]"'
        in (out["no extra"])
    )


def test_push_reports_an_unreachable_hub_as_one_message(run_folder, tmp_path):
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_TOKEN": "hf_test"}
    command = [sys.executable, "-m", "zoo", "push", str(run_folder[0]), "hf://owner/tiny"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "error: pushing to hf://owner/tiny failed (" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_the_float16_model_file_loads_with_keras_on(backend, packaged):
    from zoo.testing.backend_run import backend_installed, run_in_backend
    from zoo.testing.model_probe import load_file_logits

    if not backend_installed(backend):
        pytest.skip(f"{backend} is not installed: pip install -e '.[{backend}]'")
    ids = np.random.default_rng(0).integers(4, 200, size=(2, 6)).astype("int32")
    inputs = {"source_ids": ids, "target_ids": ids[:, ::-1].copy()}
    path = str(packaged / "model.keras")
    found = run_in_backend(backend, "zoo.testing.model_probe:load_file_logits", inputs, path=path)
    expected = load_file_logits(inputs, path)
    assert found["dtypes"].tolist() == expected["dtypes"].tolist() == ["float32"]
    np.testing.assert_allclose(found["logits"], expected["logits"], rtol=1e-4, atol=1e-5)


def test_the_commands_name_an_unknown_translator_or_a_damaged_file_without_a_traceback(
    packaged, tmp_path
):
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(packaged, damaged)
    with open(damaged / "model.keras", "r+b") as f:
        f.seek(100)
        f.write(b"\0\0")
    for handle, message in (
        ("no_such_translator", "'no_such_translator' is neither a folder nor a shipped"),
        (str(damaged), "model.keras is damaged or was changed: its SHA-256 is"),
    ):
        command = [sys.executable, "-m", "zoo", "translate", handle, "Hallo."]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr
