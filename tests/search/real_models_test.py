"""Search on tiny presets of zoo.models (the real encoders and decoders)."""

import numpy as np
import pytest
from search_toy import greedy_reference, sequence_log_probs

from zoo import models
from zoo.constants import END_ID
from zoo.search import search

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


@pytest.mark.parametrize(
    "preset", ["luong_local_p_general", "bahdanau_rnnsearch", "bahdanau_rnnencdec"]
)
@pytest.mark.parametrize("beam_size", [1, 3])
def test_stepping_only_the_rows_still_extending_changes_nothing(preset, beam_size):
    """`skip_ended` steps the decoder (recurrence, attention, output layer) only for the
    rows still extending; the other rows keep a stale state. The hypotheses, scores and
    attention equal those of the search that steps every row."""
    import keras

    from zoo.search.compile import padded_search, trim
    from zoo.search.settings import SearchSettings

    keras.utils.set_random_seed(3)
    model = models.build(preset, size="tiny", source_vocab_size=12, target_vocab_size=11)
    decoder = model.get_layer("decoder")
    sizes, step = [], decoder.step

    def recording_step(*args, rows=None, **kwargs):
        if rows is not None:
            sizes.append(int(np.asarray(rows).shape[0]))
        return step(*args, rows=rows, **kwargs)

    decoder.step = recording_step
    # Sources of different lengths end at different steps (their limits differ).
    sources = np.array([[5, 6, 7, 8, 9, 10], [9, 4, 0, 0, 0, 0], [6, 0, 0, 0, 0, 0]], "int32")
    settings = SearchSettings(beam_size, 0.6, 1.0, 2, True, n_best=beam_size)
    skipped = trim(padded_search(model, sources, settings))
    every = trim(padded_search(model, sources, settings, skip_ended=False))
    assert sizes and min(sizes) < len(sources) * beam_size  # some rows were skipped
    for name in ("ids", "lengths"):
        np.testing.assert_array_equal(getattr(skipped, name), getattr(every, name), name)
    for name in ("scores", "log_probs", "attention"):
        np.testing.assert_allclose(
            getattr(skipped, name), getattr(every, name), rtol=1e-5, atol=1e-6, err_msg=name
        )
