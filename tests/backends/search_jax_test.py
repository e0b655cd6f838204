"""JAX's compiled search (`zoo.search.compile_search`: `jax.jit` with the model's variables as
state): it equals the eager search, traces once per shape, reads the model's current
weights (none is captured as a constant) and leaks no tracer. Skipped on other backends."""

import keras
import numpy as np
import pytest

import zoo.search.compile
from zoo.search import sample, search
from zoo.search.compile import padded_search, trim
from zoo.search.settings import SearchSettings
from zoo.testing.search_probe import (
    SOURCES,
    as_numpy,
    build_probe,
    random_weights,
    teacher_forced_log_probs,
)

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "jax", reason="JAX's compiled search (KERAS_BACKEND=jax)"
)


def probe(seed=1):
    model = build_probe("luong_global_general")
    model.set_weights(random_weights(model, seed=seed))
    return model


def assert_same(a, b):
    assert a.keys() == b.keys()
    for field in a:
        if a[field].dtype.kind == "f":
            np.testing.assert_allclose(a[field], b[field], rtol=1e-5, atol=1e-6, err_msg=field)
        else:
            np.testing.assert_array_equal(a[field], b[field], err_msg=field)


def test_the_jitted_search_equals_eager_and_traces_once_per_shape(monkeypatch):
    traces = []

    def counted(*args, **kwargs):
        traces.append(1)
        return padded_search(*args, **kwargs)

    monkeypatch.setattr(zoo.search.compile, "padded_search", counted)
    model = probe()
    options = dict(beam_size=3, length_penalty=0.6, max_length_offset=4)
    jitted = as_numpy(search(model, SOURCES, **options))
    assert len(traces) == 1
    # Eagerly: the loop as keras.ops.while_loop runs it outside jax.jit.
    eager = as_numpy(trim(padded_search(model, SOURCES, SearchSettings(**options))))
    assert_same(jitted, eager)
    # The same shapes, other ids: no new trace.
    other = SOURCES[::-1].copy()
    as_numpy(search(model, other, **options))
    assert len(traces) == 1
    # New weights are read at the call (the variables are the function's inputs): no new
    # trace, and the log-probabilities of the new weights.
    model.set_weights(random_weights(model, seed=7))
    reweighted = as_numpy(search(model, SOURCES, **options))
    assert len(traces) == 1
    for i, row in enumerate(SOURCES):
        output = list(reweighted["ids"][i, : int(reweighted["lengths"][i])])
        expected = teacher_forced_log_probs(model, row, [output])[0]
        np.testing.assert_allclose(reweighted["log_probs"][i], expected, rtol=1e-5, atol=1e-5)
    assert not np.allclose(reweighted["log_probs"], jitted["log_probs"])
    # A new source length traces once more.
    search(model, SOURCES[:, :3], **options)
    assert len(traces) == 2


def test_no_tracer_leaks():
    import jax

    model = probe()
    generator = keras.random.SeedGenerator(4)
    with jax.checking_leaks():
        search(model, SOURCES, beam_size=2, max_length_offset=3)
        search(model, SOURCES, beam_size=1, prefix=[[4], [], [5]], max_length_offset=3)
        sample(model, SOURCES, seed=generator, max_length_offset=3)
    # The generator's state is a concrete array after the loop, not a tracer of its body.
    assert isinstance(generator.state.value, jax.Array)
    np.asarray(generator.state.value)
