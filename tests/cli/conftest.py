"""Makes tests/translator_toy.py importable from tests/cli, and gives the commands' tests one
output folder of a tiny untrained model."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="session")
def model_folder(data_dir, tmp_path_factory):
    """(an output folder as `Translator.save` writes it, its Translator)."""
    from translator_toy import toy_translator

    directory = tmp_path_factory.mktemp("model")
    translator = toy_translator("bahdanau_rnnsearch", beam_size=2)
    metadata = {"data": "multi30k", "source_lang": "de", "target_lang": "en"}
    translator.save(directory, serving=False, metadata=metadata)
    return directory, translator
