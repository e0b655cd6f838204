"""The models across Keras backends: a .keras file saved on any of TensorFlow, JAX and
PyTorch loads on the other two (`safe_mode=True`) and gives the same teacher-forced logits,
for every preset and tied embeddings (plain and three-way); and the same weights give the
same logits and attention weights on all three, the decoder's step function fed the target
one token at a time giving the teacher-forced logits on each.

Each backend runs in its own process (`zoo.testing.backend_run`), all models of one backend
in one call (`zoo.testing.model_probe.run_models`), in two rounds of three processes at
once: each backend saves its models, then each loads the other two's. One test runs both
rounds (under pytest-xdist a module fixture would run once per worker). The invariants
that hold on one backend (stepwise decoding, save and load there) are
tests/backends/models_stepwise_test.py's.
"""

import concurrent.futures

import numpy as np
import pytest

from zoo.testing.backend_run import BACKENDS, backend_installed, run_in_backend
from zoo.testing.model_probe import model_keys, toy_batch

TARGET = "zoo.testing.model_probe:run_models"
TOLERANCE = dict(rtol=1e-5, atol=1e-5)  # float32


def _in_parallel(calls):
    """{backend: run_in_backend(backend, TARGET, toy_batch(), **kwargs)} for `calls`
    ({backend: kwargs}), the processes running at once."""
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
        futures = {
            backend: pool.submit(
                run_in_backend, backend, TARGET, toy_batch(), timeout=1200, **kwargs
            )  # fmt: skip
            for backend, kwargs in calls.items()
        }
        found = {backend: future.result() for backend, future in futures.items()}
    for backend, outputs in found.items():
        assert str(outputs.pop("backend")) == backend
    return found


@pytest.mark.slow  # every preset saved and loaded on three backends: minutes
def test_models_agree_across_backends(tmp_path):
    missing = [b for b in BACKENDS if not backend_installed(b)]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed: the cross-backend model test needs all "
            "three backends (pip install -e '.[jax]' and '.[torch]')."
        )
    folders = {backend: str(tmp_path / backend) for backend in BACKENDS}
    full = [folders["tensorflow"]]  # TensorFlow's models: attention and steps too
    saved = _in_parallel({b: dict(save_to=folders[b], full=full) for b in BACKENDS})
    loaded = _in_parallel(
        {b: dict(load=[folders[o] for o in BACKENDS if o != b], full=full) for b in BACKENDS}
    )
    keys = model_keys()
    reference = saved["tensorflow"]
    for key in keys:
        logits = reference[f"saved/{key}/logits"]
        # The comparisons compare something: the logits vary far more than the tolerance.
        assert np.ptp(logits) > 1e-3, f"{key}: logits all alike"
        np.testing.assert_allclose(
            reference[f"saved/{key}/step_logits"], logits, **TOLERANCE,
            err_msg=f"{key}: stepwise decoding against teacher forcing on tensorflow",
        )  # fmt: skip
        for saved_on in BACKENDS:
            for loaded_on in BACKENDS:
                if loaded_on != saved_on:
                    np.testing.assert_allclose(
                        loaded[loaded_on][f"{saved_on}/{key}/logits"],
                        saved[saved_on][f"saved/{key}/logits"],
                        **TOLERANCE,
                        err_msg=f"{key}: saved on {saved_on}, loaded on {loaded_on}",
                    )
        for backend in ("jax", "torch"):  # TensorFlow's weights on the other two
            for output in ("step_logits", "attention"):
                np.testing.assert_allclose(
                    loaded[backend][f"tensorflow/{key}/{output}"],
                    reference[f"saved/{key}/{output}"],
                    **TOLERANCE,
                    err_msg=f"{key} {output}: TensorFlow's weights on {backend}",
                )
        weights = reference[f"saved/{key}/attention"]
        if key.startswith(("bahdanau_rnnencdec", "luong_base")):  # no attention: zeros
            assert not weights.any(), key
        else:  # weights on each sentence's real source positions only
            real = np.broadcast_to((toy_batch()["source_ids"] != 0)[:, None], weights.shape)
            assert (weights >= 0).all() and weights[real].any(), key
            assert not weights[~real].any(), key
