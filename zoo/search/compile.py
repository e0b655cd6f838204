"""Running a search to fixed-size buffers (`padded_search`), cutting them to the steps run
(`trim`), the search compiled for the Keras backend (`compile_search`, cached per model and
settings) and the search traced once for TensorFlow export (`search_function`).

Every buffer has `T_buf = max(1, ceil(ratio * Ts) + offset)` columns for the padded source
length Ts, so every shape is known when Ts is (as XLA and `jax.jit` require); `trim` cuts
the buffers to the longest chosen hypothesis.

`compile_search(model, settings)` is the one place a search is compiled per backend:
- TensorFlow: the search runs as called, eagerly or traced into the caller's `tf.function`
  (the Translator's graph); with `jit_compile`, one `tf.function(jit_compile=True)`.
- JAX: `jax.jit` of a stateless function of the model's trainable and non-trainable
  variables and the inputs (the variables mapped in a `keras.StatelessScope`, as keras-hub's
  `CausalLM.make_generate_function` does); a second call with the same shapes reuses it.
- PyTorch: the search under `torch.no_grad()` (no autograd graph is recorded).
Only TensorFlow outside XLA runs data-dependent shapes inside the loop (`skip_ended`); the
other backends run the fixed-shape loop, whose result is the same.
"""

import contextlib
import itertools
import weakref

import keras
from keras import ops

from zoo.backend import backend_name, on_tensorflow, on_torch, require_tensorflow
from zoo.search.beam import BeamSearch
from zoo.search.constraints import ConstrainedBeamSearch
from zoo.search.greedy import GreedySearch
from zoo.search.settings import SearchResult, check_model, settings_of

# Compiled searches, per model and settings, so that repeated calls reuse them.
_COMPILED = weakref.WeakKeyDictionary()


def dynamic_shapes():
    """True where a loop body may make tensors of data-dependent shapes: TensorFlow (eagerly
    and in `tf.function` without XLA). `jax.jit` and `lax.while_loop` need static shapes."""
    return on_tensorflow()


def padded_search(
    model, source_ids, settings, stop_early=True, skip_ended=True, prefix=None, constraints=None
):
    """The search of `settings` (a `SearchSettings`) on (B, Ts) int32 `source_ids`: greedy
    for `beam_size=1`, else beam; constrained beam search with `constraints`. Returns the dict of fixed-size buffers (B, T_buf, ...)
    ((B, n, T_buf, ...) with `n_best`) and `steps`, the number of steps run.

    `stop_early=False` (for tests) runs beam search until every hypothesis has ended instead
    of stopping once no alive hypothesis can change the result.
    `skip_ended` runs the decoder step and its top-k only for the rows still extending
    (when the decoder's `step` takes `rows`), and ends the alive hypotheses of a
    sentence whose result is decided. The rows vary in number from step to step, which XLA
    cannot compile: the compiled searches pass False, and backends other than TensorFlow
    (`dynamic_shapes`) ignore it. The result is the same either way.
    `prefix`: None, or (B, P) int32 target ids each output starts with (0 = pad).
    `constraints`: None, or (B, C, L) int32 phrases every output holds
    (`zoo.search.constraints`).
    """
    skip_ended = skip_ended and dynamic_shapes()
    if constraints is not None:
        loop = ConstrainedBeamSearch(
            model, source_ids, settings, stop_early, skip_ended, prefix, constraints
        )
        return loop.run()
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


def compile_search(model, settings):
    """The search of `settings` (a `SearchSettings`) for `model`, compiled for the Keras
    backend (module docstring): a callable `(source_ids, prefix=None, constraints=None) ->`
    `padded_search`'s buffers, made once per model and settings.

    `source_ids` (B, Ts), `prefix` (B, P) and `constraints` (B, C, L) are int32 tensors or
    arrays (checked by `zoo.search.search`). On JAX a call with new shapes traces the
    search once more; the same shapes reuse the compiled function.
    """
    backend = backend_name()
    if backend == "tensorflow" and not settings.jit_compile:
        return _as_called(model, settings)
    try:
        per_model = _COMPILED.setdefault(model, {})
    except TypeError:  # not weak-referenceable: compile without caching
        per_model = {}
    if settings not in per_model:
        make = {"tensorflow": _xla_search, "jax": _jax_search, "torch": _torch_search}
        per_model[settings] = make.get(backend, _as_called)(model, settings)
    return per_model[settings]


def _as_called(model, settings):
    """The search as called: eagerly, or traced into the caller's function."""

    def run(source_ids, prefix=None, constraints=None):
        return padded_search(model, source_ids, settings, prefix=prefix, constraints=constraints)

    return run


def _xla_search(model, settings):
    """TensorFlow: `padded_search` in one `tf.function(jit_compile=True)`."""
    import tensorflow as tf

    return tf.function(
        lambda source_ids, prefix=None, constraints=None: padded_search(
            model, source_ids, settings, skip_ended=False, prefix=prefix, constraints=constraints
        ),
        jit_compile=True,
        reduce_retracing=True,
        autograph=False,
    )


def _jax_search(model, settings):
    """JAX: `jax.jit` of `padded_search` as a function of the model's variables and the
    inputs (the variables mapped in a `keras.StatelessScope`, so that none is captured as a
    constant and new weights need no retrace)."""
    import jax

    trainable, non_trainable = model.trainable_variables, model.non_trainable_variables

    def stateless(trainable_values, non_trainable_values, source_ids, prefix, constraints):
        mapping = itertools.chain(
            zip(trainable, trainable_values, strict=True),
            zip(non_trainable, non_trainable_values, strict=True),
        )
        with keras.StatelessScope(state_mapping=mapping):
            return padded_search(
                model, source_ids, settings, skip_ended=False, prefix=prefix,
                constraints=constraints,
            )  # fmt: skip

    jitted = jax.jit(stateless)

    def run(source_ids, prefix=None, constraints=None):
        return jitted(
            [variable.value for variable in trainable],
            [variable.value for variable in non_trainable],
            source_ids,
            prefix,
            constraints,
        )

    return run


def no_grad():
    """A context that records no gradients: `torch.no_grad()` on PyTorch, else nothing (the
    other backends record none outside a gradient tape or transformation)."""
    if not on_torch():
        return contextlib.nullcontext()
    import torch

    return torch.no_grad()


def _torch_search(model, settings):
    """PyTorch: `padded_search` under `torch.no_grad()`."""

    def run(source_ids, prefix=None, constraints=None):
        with no_grad():
            return padded_search(
                model, source_ids, settings, prefix=prefix, constraints=constraints
            )

    return run


def search_function(model, settings=None, **options):
    """A `tf.function` `source_ids (None, None) int32 -> SearchResult`, traced once.

    Args:
        model: a `zoo` translation model (docs/design.md).
        settings, options: as for `zoo.search.search`: a `SearchSettings` (None: the
            library defaults), and fields of it by name that replace its own.

    TensorFlow only (a ValueError on another Keras backend). For the Translator and
    SavedModel export: the function has an input signature with
    unknown batch and source length, so it traces once and can be saved with
    `tf.saved_model.save` (as a signature, return `result._asdict()` without `None`s).
    With `jit_compile=True` the search loop is compiled with XLA; only the final cut to
    the steps run happens outside XLA.
    """
    require_tensorflow(
        "search_function (a TensorFlow graph, for the Translator's SavedModel)",
        "Call zoo.search.search, or zoo.search.compile_search for the search compiled for "
        "this backend.",
        ValueError,
    )
    import tensorflow as tf

    settings = settings_of(settings, options)
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
