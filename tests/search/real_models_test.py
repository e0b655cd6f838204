"""Search on tiny presets of zoo.models (the real encoders and decoders)."""

import numpy as np
import pytest
from search_toy import greedy_reference, sequence_log_probs

from zoo.constants import END_ID
from zoo.search import search

models = pytest.importorskip("zoo.models")
if not hasattr(models, "build"):
    pytest.skip("zoo.models.build is not available yet", allow_module_level=True)

SOURCES = np.array([[5, 6, 7, 8, 9], [9, 4, 0, 0, 0], [6, 6, 5, 0, 0]], "int32")


@pytest.mark.parametrize("preset", ["luong_global_general", "bahdanau_rnnsearch"])
def test_search_on_a_tiny_preset(preset):
    model = models.build(preset, size="tiny", source_vocab_size=12, target_vocab_size=11)
    ratio, offset = 1.0, 2
    greedy = search(model, SOURCES, beam_size=1, max_length_ratio=ratio, max_length_offset=offset)
    batch, source_len = SOURCES.shape
    assert greedy.ids.shape[0] == batch and greedy.attention.shape[0] == batch
    assert greedy.attention.shape[1:] == (greedy.ids.shape[1], source_len)
    for i, row in enumerate(SOURCES):
        n = int((row != 0).sum())
        expected, total = greedy_reference(model, row[:n], int(np.ceil(ratio * n)) + offset)
        assert list(np.asarray(greedy.ids[i, : len(expected)])) == expected
        np.testing.assert_allclose(greedy.log_probs[i], total, rtol=1e-4, atol=1e-4)
    beam = search(
        model,
        SOURCES,
        beam_size=3,
        length_penalty=0.0,
        max_length_ratio=ratio,
        max_length_offset=offset,
    )
    lengths = np.asarray(beam.lengths)
    for i, row in enumerate(SOURCES):
        hypothesis = list(np.asarray(beam.ids[i, : lengths[i]]))
        assert hypothesis[-1] == END_ID
        (expected,) = sequence_log_probs(model, row, [hypothesis])
        np.testing.assert_allclose(beam.scores[i], expected, rtol=1e-4, atol=1e-4)
