"""Makes tests/translator_toy.py importable from tests/export, and exports the toy whose
searches write outputs of many lengths (`writing_export`, `export_toy.writing_toy`)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="session")
def writing_export(data_dir, tmp_path_factory):
    """(translator, SavedModel path, loaded SavedModel) of `writing_toy()`, exported with
    n_best=2, sampling={"top_k": 1} and chunk_size=CHUNK."""
    from export_toy import CHUNK, writing_toy

    from zoo.export import export_translator, load_exported

    translator = writing_toy()
    folder = tmp_path_factory.mktemp("serving") / "writing"
    path = export_translator(translator, folder, n_best=2, sampling={"top_k": 1}, chunk_size=CHUNK)
    return translator, str(path), load_exported(path)
