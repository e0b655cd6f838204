"""zoo.backend: the one place the package asks which Keras backend runs."""

import pytest

from zoo import backend


def test_require_tensorflow_passes_on_tensorflow_and_names_the_backend_elsewhere(monkeypatch):
    assert backend.on_tensorflow()
    assert backend.require_tensorflow("Translator.export", "Export from TensorFlow.") is None
    monkeypatch.setattr(backend, "backend_name", lambda: "jax")
    with pytest.raises(RuntimeError) as raised:
        backend.require_tensorflow("Translator.export", "Export from TensorFlow.")
    assert str(raised.value) == (
        "Translator.export runs on TensorFlow only; this process runs Keras on jax. "
        "Export from TensorFlow."
    )
    with pytest.raises(ValueError, match="search_function runs on TensorFlow only"):
        backend.require_tensorflow("search_function", "Call search.", ValueError)
