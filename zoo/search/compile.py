"""Running a search to fixed-size buffers (`padded_search`), cutting them to the steps run
(`trim`), and the search compiled with XLA (`compiled_search`, cached per model and
settings) or traced once for export (`search_function`).

Every buffer has `T_buf = max(1, ceil(ratio * Ts) + offset)` columns for the padded source
length Ts, so every shape is known when Ts is (as XLA requires); `trim` cuts the buffers to
the longest chosen hypothesis.
"""

import weakref

from keras import ops

from zoo.search import defaults
from zoo.search.beam import BeamSearch
from zoo.search.greedy import GreedySearch
from zoo.search.search_result import SearchResult
from zoo.search.settings import SearchSettings, check_model

# Compiled (XLA) searches, per model and settings, so that repeated calls reuse them.
_COMPILED = weakref.WeakKeyDictionary()


def padded_search(model, source_ids, settings, stop_early=True, skip_ended=True, prefix=None):
    """The search of `settings` (a `SearchSettings`) on (B, Ts) int32 `source_ids`: greedy
    for `beam_size=1`, else beam. Returns the dict of fixed-size buffers (B, T_buf, ...)
    ((B, n, T_buf, ...) with `n_best`) and `steps`, the number of steps run.

    `stop_early=False` (for tests) runs beam search until every hypothesis has ended instead
    of stopping once no alive hypothesis can change the result.
    `skip_ended` computes the output layer and its top-k only for the rows still extending
    (when the decoder's `step` takes `readout_rows`), and ends the alive hypotheses of a
    sentence whose result is decided. The rows vary in number from step to step, which XLA
    cannot compile: the compiled searches pass False. The result is the same either way.
    `prefix`: None, or (B, P) int32 target ids each output starts with (0 = pad).
    """
    loop = GreedySearch if settings.beam_size == 1 else BeamSearch
    return loop(model, source_ids, settings, stop_early, skip_ended, prefix).run()


def trim(padded):
    """`padded_search`'s buffers as a `SearchResult`, cut to the longest chosen hypothesis
    (the loop may run past the chosen hypotheses' END while other beams are alive)."""
    steps = ops.max(padded["lengths"])
    attention = padded.get("attention")
    return SearchResult(
        ids=padded["ids"][..., :steps],
        scores=padded["scores"],
        attention=None if attention is None else attention[..., :steps, :],
        lengths=padded["lengths"],
        log_probs=padded["log_probs"],
    )


def empty_result(source_ids, n_best=None, return_attention=True):
    """The `SearchResult` of a batch of no sentences, (0, Ts) source ids: fields with a batch
    axis of 0 (and of n with `n_best`) and no steps. (A traced search with an unknown batch
    size runs its loop on no rows instead.)"""
    lead = (0,) if n_best is None else (0, int(n_best))
    source_len = ops.shape(source_ids)[1]
    return SearchResult(
        ids=ops.zeros((*lead, 0), "int32"),
        scores=ops.zeros(lead, "float32"),
        attention=ops.zeros((*lead, 0, source_len), "float32") if return_attention else None,
        lengths=ops.zeros(lead, "int32"),
        log_probs=ops.zeros(lead, "float32"),
    )


def compiled_search(model, settings):
    """`padded_search` as a `tf.function(jit_compile=True)`, made once per model and
    settings (it retraces per distinct source shape)."""
    import tensorflow as tf  # XLA compilation needs tf.function

    try:
        per_model = _COMPILED.setdefault(model, {})
    except TypeError:  # not weak-referenceable: compile without caching
        per_model = {}
    if settings not in per_model:
        per_model[settings] = tf.function(
            lambda source_ids, prefix=None: padded_search(
                model, source_ids, settings, skip_ended=False, prefix=prefix
            ),
            jit_compile=True,
            reduce_retracing=True,
            autograph=False,
        )
    return per_model[settings]


def search_function(
    model,
    beam_size=defaults.BEAM_SIZE,
    length_penalty=defaults.LENGTH_PENALTY,
    max_length_ratio=defaults.MAX_LENGTH_RATIO,
    max_length_offset=defaults.MAX_LENGTH_OFFSET,
    return_attention=True,
    jit_compile=False,
    n_best=None,
    coverage_penalty=defaults.COVERAGE_PENALTY,
    min_length=defaults.MIN_LENGTH,
    ban_unknown=defaults.BAN_UNKNOWN,
    no_repeat_ngram_size=defaults.NO_REPEAT_NGRAM_SIZE,
):
    """A `tf.function` `source_ids (None, None) int32 -> SearchResult`, traced once.

    Args:
        model: a `zoo` translation model (docs/design.md).
        beam_size, length_penalty, max_length_ratio, max_length_offset, return_attention,
        jit_compile, n_best, coverage_penalty, min_length, ban_unknown,
        no_repeat_ngram_size: as for `zoo.search.search` (the fields of
            `SearchSettings`; defaults from `zoo.search.defaults`).

    For the Translator and SavedModel export: the function has an input signature with
    unknown batch and source length, so it traces once and can be saved with
    `tf.saved_model.save` (as a signature, return `result._asdict()` without `None`s).
    With `jit_compile=True` the search loop is compiled with XLA; only the final cut to
    the steps run happens outside XLA.
    """
    import tensorflow as tf

    settings = SearchSettings(
        beam_size,
        length_penalty,
        max_length_ratio,
        max_length_offset,
        return_attention,
        jit_compile,
        n_best,
        coverage_penalty,
        min_length,
        ban_unknown,
        no_repeat_ngram_size,
    )
    check_model(model)

    def inner(source_ids):
        return padded_search(model, source_ids, settings, skip_ended=not settings.jit_compile)

    if settings.jit_compile:
        inner = tf.function(inner, jit_compile=True, autograph=False)

    @tf.function(
        input_signature=[tf.TensorSpec((None, None), tf.int32, name="source_ids")],
        autograph=False,
    )
    def run(source_ids):
        return trim(inner(source_ids))

    return run
