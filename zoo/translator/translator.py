"""`Translator`: strings in, translations out, and the traced graphs it keeps.

`TracedFunctions`: the `Translator`'s traced graphs (one per beam size, n-best list and
way of sampling), at most `MAX_TRACED` of them, the least recently used dropped first.

Each traced search holds a graph of its own (tens of MB for a real model, and seconds to
trace): a server that is asked for many beam sizes keeps only the last few, and a dropped
one is traced again when asked for. 16 hold the variants a mixed load asks for (beam
sizes, with and without decoding controls, prefixes, constraints, sampling; bench/RESULTS.md,
"Mixed options under load").

`Translator`: strings in, translations out, with a trained model and its two tokenizers.
"""

import collections
import functools
import logging
import threading

import numpy as np
import tensorflow as tf

from zoo import translation
from zoo.backend import on_tensorflow
from zoo.checks import check_int
from zoo.hub import resolve_translator
from zoo.search import SearchSettings
from zoo.search.defaults import (
    BATCH_SIZE,
    BEAM_SIZE,
    CONTROL_DEFAULTS,
    COVERAGE_PENALTY,
    LENGTH_PENALTY,
    MAX_LENGTH_OFFSET,
    MAX_LENGTH_RATIO,
)
from zoo.text.preprocessor import Preprocessor
from zoo.translation import (
    as_text,
    check_sentences,
    check_source_lengths,
    run_in_batches,
    split_long,
    to_translation,
)
from zoo.translator import graph, staged
from zoo.translator.output_folder import (
    SETTINGS,
    TranslatorFiles,
    load_parts,
    model_file,
    read_metadata,
    read_settings,
)
from zoo.translator.sampling import Sampler
from zoo.translator.scoring import Scorer

MAX_TRACED = 16
"""The traced functions a `Translator` keeps (its `traced.limit`)."""


class TracedFunctions:
    """A least-recently-used cache of `tf.function`s by key.

    Args:
        limit: the most functions kept (an int >= 1).

    Example:
        >>> cache = TracedFunctions(limit=2)
        >>> cache.get("a", lambda: "A"), cache.get("b", lambda: "B"), cache.get("c", lambda: "C")
        ('A', 'B', 'C')
        >>> cache.keys()
        ['b', 'c']
    """

    def __init__(self, limit=MAX_TRACED):
        self.limit = check_int("TracedFunctions", "limit", limit)
        self._functions = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, make):
        """The function of `key`, made by `make()` when absent; it becomes the most recently
        used, and the least recently used ones past `limit` are dropped."""
        with self._lock:
            function = self._functions.pop(key, None)
            if function is None:
                function = make()
            self._functions[key] = function
            while len(self._functions) > self.limit:
                self._functions.popitem(last=False)
            return function

    def keys(self):
        """The keys held, least recently used first."""
        with self._lock:
            return list(self._functions)

    def clear(self):
        """Drops every function (they are traced again when asked for)."""
        with self._lock:
            self._functions.clear()

    def __len__(self):
        return len(self._functions)


logger = logging.getLogger("zoo.translator")


SENTENCES = tf.TensorSpec([None], tf.string, name="sentences")


def _trace(body, signature=(SENTENCES,)):
    """`body(sentences, ...)` as a `tf.function` of a `tf.string` vector of any length."""
    return tf.function(body, input_signature=list(signature), autograph=False)


def _check_model(model, preprocessor):
    """A ValueError unless `model` has an encoder and a decoder whose vocabulary sizes match
    the tokenizers'."""
    try:
        layers = {"encoder": model.get_layer("encoder"), "decoder": model.get_layer("decoder")}
    except (ValueError, AttributeError):
        raise ValueError(
            "model must be a keras.Model with layers named 'encoder' and 'decoder' "
            f"(docs/design.md), received {type(model).__name__}."
        ) from None
    sides = (("source", preprocessor.source_tokenizer, "encoder"),
             ("target", preprocessor.target_tokenizer, "decoder"))  # fmt: skip
    for label, tokenizer, name in sides:
        expected = getattr(layers[name], "vocab_size", None)
        size = getattr(tokenizer, "vocab_size", None)
        if isinstance(expected, int) and isinstance(size, int) and expected != size:
            raise ValueError(
                f"The {label} tokenizer has {size} ids but the model's {name} expects "
                f"{expected}; pass the tokenizers the model was trained with."
            )


def _warn_past_limit(limit, lengths):
    """Logs the sentences longer than the `limit` source positions attention addresses."""
    if lengths.max() <= limit:
        return
    longer = [int(i) for i in np.flatnonzero(lengths > limit)]
    logger.warning(
        "Sentence(s) %s have more than %d tokens (the longest: %d), the source positions "
        "this model's 'location' attention addresses (max_length): they are translated "
        "with no attention past token %d.",
        ", ".join(map(str, longer[:10])) + (" ..." if len(longer) > 10 else ""),
        limit,
        int(lengths.max()),
        limit,
    )


def _part_method(part, method):
    """A `Translator` method that is `method` of the part the translator holds as `part`
    (its signature and docstring)."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        return method(getattr(self, part), *args, **kwargs)

    call.__qualname__, call.__module__ = f"Translator.{method.__name__}", __name__
    return call


def _setting(name):
    """The translator's search setting `name`, a field of `Translator.settings`; setting it
    replaces the settings (checked) and drops the traced searches, which hold the old ones."""

    def get(self):
        return getattr(self.settings, name)

    def set(self, value):
        self.settings = self.settings.replace(**{name: value})
        self.traced.clear()

    return property(get, set, doc=f"`settings.{name}`.")


class Translator:
    """Translates lists of sentences with a `zoo` model and its source/target tokenizers.

    Args:
        model: a translation `keras.Model` with layers "encoder" and "decoder"
            (docs/design.md), trained on ids from the two tokenizers.
        source_tokenizer, target_tokenizer: `zoo.text` tokenizers (tf.Module) whose vocabulary
            sizes match the model's embeddings.
        beam_size: default K; 1 is greedy search.
        length_penalty: GNMT's alpha (`zoo.search`); 0 ranks by log-probability.
        batch_size: default number of sentences per search call.
        max_length_ratio, max_length_offset: a sentence of n tokens produces at most
            `ceil(ratio * n) + offset` tokens, END included.
        coverage_penalty: GNMT's beta (`zoo.search.search`; beam search only), 0 for none.

    Every setting defaults to its value in `zoo.search.defaults` (`SEARCH_DEFAULTS`), the
    settings the recipes deliver: `Translator(model, source_tokenizer, target_tokenizer)`
    translates as `Translator.from_directory` does on a recipe's output folder. The search
    settings are checked once, into `translator.settings` (a `zoo.search.SearchSettings`),
    which every search of the translator starts from; a call's beam size, decoding controls
    (`min_length=`, `ban_unknown=`, `no_repeat_ngram_size=`: the `controls` of
    `SearchSettings`, off by default) and n-best size replace its fields for that call.

    Sentences are sorted by their number of tokens before batching
    (`zoo.translation.run_in_batches`: less padding, faster search) and returned in input
    order. Each beam size compiles one
    `tf.function` (strings -> outputs, batch size and length dynamic), traced once and
    reused by every later call; sampling traces one for every seed, temperature, top_k and
    top_p. The translator keeps the `zoo.translator.translator.MAX_TRACED` most recently used
    of them (`translator.traced`, a `TracedFunctions`).

    A translator holds its parts: `files` (the output folder, the SavedModel and LiteRT
    export: `save`, `export`, ...), `sampler` (`sample`) and `scorer` (`score`); their
    methods are the translator's.

    On JAX and PyTorch (`KERAS_BACKEND`) the tokenizers stay TensorFlow, on the CPU, and
    the model and the search run on the backend (`zoo.translator.staged`): `translate`,
    `translate_n_best`, `translate_with_attention`, `score` and `sample` work as on
    TensorFlow; `export` and `export_litert` need TensorFlow, which exports a folder saved
    on any backend (`zoo.translator.output_folder.EXPORT_COMMAND`).

    Example:
        >>> translator = Translator.from_directory("saved_models/luong_local_general")
        >>> translator.translate(["Ein Hund rennt.", "Zwei Männer lachen."])
        ['A dog is running.', 'Two men are laughing.']
        >>> translator.export("saved_models/luong_local_general/serving")
    """

    def __init__(
        self,
        model,
        source_tokenizer,
        target_tokenizer,
        beam_size=BEAM_SIZE,
        length_penalty=LENGTH_PENALTY,
        batch_size=BATCH_SIZE,
        max_length_ratio=MAX_LENGTH_RATIO,
        max_length_offset=MAX_LENGTH_OFFSET,
        coverage_penalty=COVERAGE_PENALTY,
    ):
        self.preprocessor = Preprocessor(source_tokenizer, target_tokenizer)
        _check_model(model, self.preprocessor)
        self.model = model
        # SearchSettings' first four fields, in their order; checked once, here.
        fields = (beam_size, length_penalty, max_length_ratio, max_length_offset)
        self.settings = SearchSettings(*fields, coverage_penalty=coverage_penalty)
        self.batch_size = check_int(None, "batch_size", batch_size)
        self.traced = TracedFunctions()
        self.sampler = Sampler(self)
        self.scorer = Scorer(self)
        self.files = TranslatorFiles(self)

    # The parts' methods (zoo.translator.sampling, .scoring and .output_folder).
    sample = _part_method("sampler", Sampler.sample)
    sample_function = _part_method("sampler", Sampler.sample_function)
    graph_sample = _part_method("sampler", Sampler.graph_sample)
    score = _part_method("scorer", Scorer.score)
    score_function = _part_method("scorer", Scorer.score_function)
    graph_score = _part_method("scorer", Scorer.graph_score)
    save = _part_method("files", TranslatorFiles.save)
    write_config = _part_method("files", TranslatorFiles.write_config)
    export = _part_method("files", TranslatorFiles.export)
    export_litert = _part_method("files", TranslatorFiles.export_litert)
    push_to_hub = _part_method("files", TranslatorFiles.push_to_hub)
    read_metadata = staticmethod(read_metadata)
    model_file = staticmethod(model_file)

    @classmethod
    def from_directory(cls, directory, model_file=None, **overrides):
        """Loads a translator from an output folder (`zoo.translator.output_folder`).

        Args:
            directory: the folder, the name of a shipped translator, or a hub handle
                `hf://owner/name` (`zoo.hub.resolve_translator`).
            model_file: the model file inside it (default: `Translator.model_file(directory)`,
                the file the run delivered).
            **overrides: any of the settings (beam_size, length_penalty, batch_size,
                max_length_ratio, max_length_offset, coverage_penalty); they replace the
                values of translator.json. A setting given by neither takes its default
                (`zoo.search.defaults`).
        """
        directory = resolve_translator(directory)
        settings = read_settings(directory, overrides)
        return cls(*load_parts(directory, model_file), **settings)

    beam_size = _setting("beam_size")
    length_penalty = _setting("length_penalty")
    max_length_ratio = _setting("max_length_ratio")
    max_length_offset = _setting("max_length_offset")
    coverage_penalty = _setting("coverage_penalty")

    @property
    def source_tokenizer(self):
        return self.preprocessor.source_tokenizer

    @property
    def target_tokenizer(self):
        return self.preprocessor.target_tokenizer

    def get_config(self):
        """The search settings (what `translator.json` holds)."""
        return {name: getattr(self, name) for name in SETTINGS}

    def search_settings(self):
        """The keyword arguments of `zoo.search.search` this translator fixes besides the
        beam size (fields of `settings`)."""
        names = ("length_penalty", "coverage_penalty", "max_length_ratio", "max_length_offset")
        return {name: getattr(self.settings, name) for name in names}

    def setting(self, name, value):
        """This call's `beam_size` or `batch_size`: the translator's own when None, else
        checked (an int >= 1)."""
        return getattr(self, name) if value is None else check_int(None, name, value)

    def source_limit(self):
        """The source positions the model's attention can address, or None when unbounded.

        Only Luong's "location" score has a limit (its `max_length`): later positions get
        no attention."""
        attention = getattr(self.model.get_layer("decoder"), "attention", None)
        if getattr(attention, "score", None) == "location":
            return int(attention.max_length)
        return None

    # -- the graph (zoo.translator.graph) -------------------------------------------------------
    def graph_translate(self, sentences, beam_size=None, attention=True, **inputs):
        """The in-graph translation of a `tf.string` vector `(B,)` (what the SavedModel runs):
        a dict of tensors, documented in `zoo.translator.graph.translate` (as `inputs`, its
        controls, prefix and constraints)."""
        beam_size = self.setting("beam_size", beam_size)
        return graph.translate(self, sentences, beam_size, attention, **inputs)

    def graph_translate_n_best(self, sentences, beam_size, n_best, **inputs):
        """The in-graph n-best lists of `tf.string` sentences (B,): a dict of translations
        and scores (`zoo.translator.graph.translate_n_best`)."""
        return graph.translate_n_best(self, sentences, beam_size, n_best, **inputs)

    def traced_function(self, key, body, signature=(SENTENCES,)):
        """The cached `tf.function` `body(sentences, ...)` of `key`, traced once (while it
        stays among the `traced` functions)."""
        return self.traced.get(key, lambda: _trace(body, signature))

    def _search_function(self, key, body, controls=None, extras=(), stages=None):
        """A callable `(sentences, *extras) -> dict` of `body(sentences, controls=...,
        **inputs)`, `extras` the inputs it takes ("prefix", "constraints"). On TensorFlow,
        the cached `tf.function` of `key` (plus, for a variant, whether controls are on and
        the extras' names): with any control on, the three controls are its last inputs
        (`graph.CONTROL_INPUTS`), filled in from `controls` (a dict, None: off), so that
        every value of them runs one graph. On JAX and PyTorch, the cached
        `stages(controls, extras)` (`zoo.translator.staged`), keyed by the controls'
        values."""
        controls = graph.check_controls(controls or {})
        extras = tuple(name for name in graph.EXTRA_INPUTS if name in extras)
        if not on_tensorflow():
            key = (*key, *graph.variant_key(controls, extras))
            return self.traced.get(key, lambda: stages(controls, extras))
        if controls == CONTROL_DEFAULTS:  # the graph without controls
            names, values = (), []
        else:  # the controls as inputs: one graph for every value of them
            names, values = tuple(graph.CONTROL_INPUTS), graph.control_values(controls)

        def traced(sentences, *tensors):
            inputs = dict(zip(extras, tensors[: len(extras)], strict=True))
            given = dict(zip(names, tensors[len(extras) :], strict=True))
            return body(sentences, controls=given or None, **inputs)

        signature = (
            SENTENCES,
            *(graph.EXTRA_INPUTS[name] for name in extras),
            *(graph.CONTROL_INPUTS[name] for name in names),
        )
        if names or extras:  # a variant: whether it takes the controls, and its extras
            key = (*key, bool(names), extras)
        function = self.traced_function(key, traced, signature)
        if not values:
            return function
        return lambda sentences, *tensors: function(sentences, *tensors, *values)

    def translate_function(self, beam_size=None, attention=True, controls=None, extras=()):
        """The `tf.function` `sentences (None,) tf.string -> dict` for `beam_size` (and with or
        without the attention weights), traced once (input signature with dynamic batch) and
        cached on the translator (on JAX and PyTorch, a callable of the same inputs and
        outputs that runs the search on the backend, `zoo.translator.staged`). `controls`: the decoding controls (a dict of
        `zoo.translator.graph.check_controls`' keywords); `extras`: "prefix" and/or
        "constraints", the inputs after the sentences it then takes (`graph.PREFIX`, a
        `tf.string` (None,), and `graph.CONSTRAINTS`, int32 (None, None, None) ids)."""
        beam_size = self.setting("beam_size", beam_size)
        attention = bool(attention)

        def body(sentences, **inputs):
            return self.graph_translate(sentences, beam_size, attention, **inputs)

        def stages(controls, extras):
            return staged.translate_call(self, beam_size, attention, controls, extras)

        return self._search_function((beam_size, attention), body, controls, extras, stages)

    # -- translation ---------------------------------------------------------------------------
    def run_batches(self, sentences, batch_size, progress, make, extras=None):
        """(sentences, one dict of NumPy outputs per sentence, in input order) of the graph
        function `make()` gives, over sorted batches (`run_in_batches`); `extras`: None,
        or one dict per sentence of the extra inputs it takes (`graph.search_inputs`)."""
        sentences = check_sentences(sentences)
        batch_size = self.setting("batch_size", batch_size)
        if not sentences:
            return sentences, []
        lengths = self.source_lengths(sentences)
        check_source_lengths(lengths)
        limit = self.source_limit()
        if limit is not None:
            _warn_past_limit(limit, lengths)
        call = self.traced_call(make)
        if extras is None:
            run = lambda strings, start: call(strings)  # noqa: E731
        else:
            run = lambda strings, start, rows: call(strings, *graph.extra_tensors(rows))  # noqa: E731
        return sentences, run_in_batches(sentences, batch_size, run, progress, lengths, extras)

    def traced_call(self, make):
        """`(*inputs) -> outputs` of the traced function `make()` gives."""
        function = make()

        def call(*inputs):
            nonlocal function
            try:
                return function(*inputs)
            except tf.errors.NotFoundError:
                # A tokenizer's TF resource was freed after tracing (`tf.random.set_seed`
                # clears the kernel cache that owns tensorflow-text's SentencePiece
                # model): rebuild the resources eagerly, retrace once, retry.
                self.preprocessor.restore_resources()
                self.traced.clear()
                staged.forget(self)
                function = make()
                return function(*inputs)

        return call

    def source_lengths(self, sentences):
        """NumPy int array: the number of source tokens of each sentence."""
        return self.preprocessor.source_lengths(check_sentences(sentences))

    def translate(
        self, sentences, beam_size=None, batch_size=None, progress=False,
        replace_unknown=False, dictionary=None, prefix=None, constraints=None, **controls,
    ):  # fmt: skip
        """Translates `sentences` (list of str) and returns a list of str, in input order.

        Args:
            sentences: list of source sentences (any length, empty ones allowed).
            beam_size, batch_size: override the translator's defaults for this call.
            progress: show a tqdm progress bar (sentences translated).
            replace_unknown: replace each `<unk>` of a translation by the source word it
                attends to most, or by that word's entry in `dictionary` (Luong et al. 2015
                section 4.1; `zoo.unknown_words`). For word-level vocabularies; a
                SentencePiece target rarely emits `<unk>`.
            dictionary: {source word: translation} (`zoo.unknown_words.read_dictionary`),
                used with `replace_unknown`.
            prefix: None, or one str per sentence: the target text its translation starts
                with ("" for none), tokenized as the targets are; the search goes on after it.
            constraints: None, or one list per sentence of target phrases (str) that its
                translation contains ([] for none): lexically constrained beam search
                (`zoo.search.constraints`).
            controls: the decoding controls of `zoo.search.SearchSettings` by name
                (`min_length=`: at least that many tokens before the end;
                `ban_unknown=True`: never `<unk>`; `no_repeat_ngram_size=`: no n-gram of
                that many tokens twice), off by default (`zoo.search.defaults`).
        A sentence without a prefix or constraints translates exactly as without them; one
        with no source tokens still translates to "".
        """
        if dictionary is not None and not replace_unknown:
            raise ValueError("dictionary is used with replace_unknown=True only.")
        asked = dict(prefix=prefix, constraints=constraints, **controls)
        if replace_unknown:
            translations = self.translate_with_attention(
                sentences, beam_size, batch_size, progress, **asked
            )
            return self.replace_unknown(translations, dictionary)
        # Text only: the search skips collecting attention weights (~10% of beam time).
        beam_size = self.setting("beam_size", beam_size)
        sentences = check_sentences(sentences)
        lengths = self.source_lengths(sentences) if sentences else []
        limit = translation.MAX_SOURCE_TOKENS
        long = {i for i, length in enumerate(lengths) if length > limit}
        if long and prefix is None and constraints is None:
            # Pieces of at most MAX_SOURCE_TOKENS tokens, translated as sentences, joined.
            split = [
                split_long(s, self.source_lengths) if i in long else [s]
                for i, s in enumerate(sentences)
            ]
            pieces = [piece for parts in split for piece in parts]
            texts = self._translate_texts(pieces, beam_size, batch_size, progress, asked)
            joined, start = [], 0
            for parts in split:
                joined.append(" ".join(texts[start : start + len(parts)]))
                start += len(parts)
            return joined
        return self._translate_texts(sentences, beam_size, batch_size, progress, asked)

    def _translate_texts(self, sentences, beam_size, batch_size, progress, asked):
        """The translations (str) of `sentences`, none longer than MAX_SOURCE_TOKENS."""
        controls, extras, names = graph.search_inputs(self, sentences, **asked)
        make = lambda: self.translate_function(beam_size, False, controls, names)  # noqa: E731
        _, outputs = self.run_batches(sentences, batch_size, progress, make, extras)
        return [as_text(out["translation"]) for out in outputs]

    def replace_unknown(self, translations, dictionary=None):
        """The texts of `translations` (from `translate_with_attention`) with each `<unk>`
        replaced by the source word it attends to most, or that word's entry in
        `dictionary` (`zoo.unknown_words`); a list of str."""
        from zoo.unknown_words import replace_unknown_in

        translations = list(translations)
        if hasattr(self.source_tokenizer, "split"):  # the words as written
            words = self.source_words([t.source for t in translations])
        else:  # the pieces, which the translations hold already
            words = [t.source_tokens for t in translations]
        return replace_unknown_in(translations, words, dictionary)

    def source_words(self, sentences):
        """Per sentence, its source tokens as written, position by position (a list of
        lists of str): the word tokenizer's words (`WordTokenizer.split`), so that an
        out-of-vocabulary word stays itself; for other tokenizers their pieces."""
        return self.preprocessor.source_word_lists(check_sentences(sentences))

    def translate_with_attention(
        self, sentences, beam_size=None, batch_size=None, progress=False, prefix=None,
        constraints=None, **controls,
    ):  # fmt: skip
        """Like `translate`, but returns a `zoo.translation.Translation` per sentence (text,
        score, source/target pieces and the attention matrix, cropped to the real tokens)."""
        beam_size = self.setting("beam_size", beam_size)
        asked = dict(prefix=prefix, constraints=constraints, **controls)
        controls, extras, names = graph.search_inputs(self, sentences, **asked)
        make = lambda: self.translate_function(beam_size, True, controls, names)  # noqa: E731
        sentences, outputs = self.run_batches(sentences, batch_size, progress, make, extras)
        return [to_translation(s, out) for s, out in zip(sentences, outputs, strict=True)]

    def translate_n_best(
        self, sentences, n_best=None, beam_size=None, batch_size=None, progress=False,
        prefix=None, constraints=None, **controls,
    ):  # fmt: skip
        """The `n_best` best translations of each sentence with their scores, best first:
        a list (one per sentence, in input order) of lists of `(translation, score)`.

        `n_best` defaults to the beam size; it is at most the beam size (beam search keeps
        that many finished hypotheses). Scores are the search's ranking scores (with the
        length penalty); entries whose score is -inf do not exist (tiny vocabularies).
        The decoding controls, `prefix` and `constraints`: as for `translate`."""
        beam_size = self.setting("beam_size", beam_size)
        n_best = beam_size if n_best is None else check_int(None, "n_best", n_best)
        if n_best > beam_size:
            raise ValueError(f"n_best must be at most the beam size ({beam_size}), got {n_best}.")
        asked = dict(prefix=prefix, constraints=constraints, **controls)
        controls, extras, names = graph.search_inputs(self, sentences, **asked)

        def make():
            def body(sentences, **inputs):
                return self.graph_translate_n_best(sentences, beam_size, n_best, **inputs)

            def stages(controls, extras):
                return staged.n_best_call(self, beam_size, n_best, controls, extras)

            key = ("n_best", beam_size, n_best)
            return self._search_function(key, body, controls, names, stages)

        _, outputs = self.run_batches(sentences, batch_size, progress, make, extras)
        pairs = [zip(o["translations"], o["scores"], strict=True) for o in outputs]
        return [[(as_text(text), float(score)) for text, score in p] for p in pairs]
