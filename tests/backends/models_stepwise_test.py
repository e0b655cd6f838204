"""Every preset (and tied embeddings, plain and three-way) on the backend this process
runs: the decoder's step function fed the target one token at a time (`prepare`,
`initial_state`, `step`: what the searches run) gives the teacher-forced logits, its
attention weights lie on the real source positions, and a .keras file saved here loads here
(`safe_mode=True`) with the same logits. Comparisons between backends are
tests/models/models_backends_test.py's."""

import keras
import numpy as np
import pytest

from zoo.testing.model_probe import build_model, model_keys, probe, teacher_forced, toy_batch

TOLERANCE = dict(rtol=1e-5, atol=1e-5)  # float32
# Every run: one model of each decoder family and attention kind; the others are `slow`.
EVERY_RUN = ("bahdanau_rnnsearch", "luong_base", "luong_local_p_general")
NO_ATTENTION = ("bahdanau_rnnencdec", "luong_base")


@pytest.mark.parametrize(
    "key",
    [k if k in EVERY_RUN else pytest.param(k, marks=pytest.mark.slow) for k in model_keys()],
)
def test_stepwise_decoding_equals_teacher_forcing_and_the_file_loads(key, backend, tmp_path):
    batch = toy_batch()
    model = build_model(key)
    found = probe(model, batch)
    logits, weights = found["logits"], found["attention"]
    assert logits.shape == (3, 6, 40) and np.ptp(logits) > 1e-3  # not all alike
    np.testing.assert_allclose(found["step_logits"], logits, **TOLERANCE,
                               err_msg=f"{key} on {backend}")  # fmt: skip
    real = np.broadcast_to((batch["source_ids"] != 0)[:, None], weights.shape)
    if key in NO_ATTENTION:
        assert not weights.any()  # attention-free decoders give zeros
    else:
        assert (weights >= 0).all() and (weights.sum(-1) > 0).all()
        assert not weights[~real].any()  # padding gets no weight
        if "global" in key:  # a distribution (local-p scales it by a Gaussian)
            np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    path = tmp_path / f"{key}.keras"
    model.save(path)
    loaded = keras.models.load_model(path, compile=False, safe_mode=True)
    np.testing.assert_allclose(teacher_forced(loaded, batch), logits, **TOLERANCE)
