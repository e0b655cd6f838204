"""`Translator`: strings in, translations out, with a trained model and its two tokenizers.

Everything between text and text runs as one TensorFlow graph per beam size: source
tokenisation (`zoo.text`), greedy/beam search (`zoo.search.search`) and target
detokenisation. The same graph is what `Translator.export` writes as a SavedModel, so a
process that loads it (with TensorFlow and tensorflow-text only) gets the same translations.

Output folder layout (written by `Translator.save`, read by `Translator.from_directory`):

    <out>/model.keras          the model (keras.saving, safe_mode=True loads it); a recipe
                               run may deliver another file (translator.json's "model_file",
                               e.g. model.averaged.keras when averaging won on validation)
    <out>/source_tokenizer/    `Tokenizer.save` of the source side
    <out>/target_tokenizer/    `Tokenizer.save` of the target side
    <out>/translator.json      search settings (beam_size, length_penalty, ...) and optional
                               metadata (data, source_lang, target_lang, ...)
    <out>/serving/             the SavedModel written by `Translator.export`

Input rules (the same in the SavedModel):
- Sentences are normalised like the training data (NFKC, spaces, optional lowercasing).
- A sentence with no tokens (empty or whitespace only) translates to `""` with score 0.0
  and an empty attention matrix; the model is not asked to translate nothing.
- Characters never seen in training become the unknown id (3) and are translated as such.
- Long sentences are translated whole, never truncated: a sentence of n tokens may produce
  up to `ceil(max_length_ratio * n) + max_length_offset` tokens. The "location" attention
  score (Luong et al. 2015, eq. 8) addresses the first `max_length` source positions: a
  longer sentence is translated (the encoder reads all of it) with no attention past that
  position, and `translate` logs a warning naming it. The other sentences of its batch
  are unaffected.
- Bytes that are not valid UTF-8 (possible in the SavedModel's tf.string input) become
  U+FFFD replacement characters before tokenizing.
"""

import json
import logging
import math
import os

import numpy as np
import tensorflow as tf

from zoo.checks import check_int
from zoo.constants import END_TOKEN, PAD_ID, UNK_TOKEN
from zoo.json_files import write_json
from zoo.search import check_sampling, sample, search
from zoo.text.vocabulary import JOINER, WORD_START
from zoo.translation import as_text, check_sentences, to_translation

logger = logging.getLogger("zoo.translator")

MODEL_FILE = "model.keras"
SOURCE_TOKENIZER_DIR = "source_tokenizer"
TARGET_TOKENIZER_DIR = "target_tokenizer"
CONFIG_FILE = "translator.json"
SERVING_DIR = "serving"

_SETTINGS = (
    "beam_size",
    "length_penalty",
    "batch_size",
    "max_length_ratio",
    "max_length_offset",
    "coverage_penalty",
)


def _check_float(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"{name} must be a finite float >= 0, received {value!r}.")
    if not math.isfinite(float(value)) or value < 0:
        raise ValueError(f"{name} must be a finite float >= 0, received {value!r}.")
    return float(value)


def _check_metadata(metadata):
    metadata = dict(metadata or {})
    clash = sorted(set(metadata) & set(_SETTINGS))
    if clash:
        raise ValueError(f"metadata must not set the search settings {clash}.")
    return metadata


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

    Sentences are sorted by token length before batching (less padding, faster search) and
    returned in input order. Each beam size compiles one `tf.function` (strings -> outputs,
    batch size and length dynamic), traced once and reused by every later call.

    Example:
        >>> translator = Translator.from_directory("saved_models/luong_local_general")
        >>> translator.translate(["Ein Hund rennt.", "Zwei Männer lachen."], beam_size=5)
        ['A dog is running.', 'Two men are laughing.']
        >>> translator.export("saved_models/luong_local_general/serving")
    """

    def __init__(
        self,
        model,
        source_tokenizer,
        target_tokenizer,
        beam_size=1,
        length_penalty=0.0,
        batch_size=64,
        max_length_ratio=1.5,
        max_length_offset=10,
        coverage_penalty=0.0,
    ):
        for label, tokenizer in (("source", source_tokenizer), ("target", target_tokenizer)):
            if not all(hasattr(tokenizer, m) for m in ("tokenize", "detokenize", "id_to_token")):
                raise ValueError(
                    f"{label}_tokenizer must be a zoo.text tokenizer (tokenize, detokenize, "
                    f"id_to_token), received {type(tokenizer).__name__}."
                )
        try:
            model.get_layer("encoder")
            model.get_layer("decoder")
        except (ValueError, AttributeError):
            raise ValueError(
                "model must be a keras.Model with layers named 'encoder' and 'decoder' "
                f"(docs/design.md), received {type(model).__name__}."
            ) from None
        self.model = model
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.beam_size = check_int(None, "beam_size", beam_size)
        self.length_penalty = _check_float("length_penalty", length_penalty)
        self.batch_size = check_int(None, "batch_size", batch_size)
        self.max_length_ratio = _check_float("max_length_ratio", max_length_ratio)
        self.max_length_offset = check_int(None, "max_length_offset", max_length_offset, minimum=0)
        self.coverage_penalty = _check_float("coverage_penalty", coverage_penalty)
        self._check_vocab_sizes()
        self._functions = {}

    def _check_vocab_sizes(self):
        pairs = (
            ("source", self.source_tokenizer, "encoder"),
            ("target", self.target_tokenizer, "decoder"),
        )
        for label, tokenizer, layer_name in pairs:
            layer = self.model.get_layer(layer_name)
            expected = getattr(layer, "vocab_size", None)
            size = getattr(tokenizer, "vocab_size", None)
            if isinstance(expected, int) and isinstance(size, int) and expected != size:
                raise ValueError(
                    f"The {label} tokenizer has {size} ids but the model's {layer_name} expects "
                    f"{expected}; pass the tokenizers the model was trained with."
                )

    def get_config(self):
        """The search settings (what `translator.json` holds)."""
        return {name: getattr(self, name) for name in _SETTINGS}

    # -- the graph ---------------------------------------------------------------------------
    def source_limit(self):
        """The source positions the model's attention can address, or None when unbounded.

        Only Luong's "location" score has a limit (its `max_length`): later positions get
        no attention."""
        attention = getattr(self.model.get_layer("decoder"), "attention", None)
        if getattr(attention, "score", None) == "location":
            return int(attention.max_length)
        return None

    def graph_translate(self, sentences, beam_size=None, attention=True):
        """The in-graph translation of a `tf.string` vector `(B,)` (what the SavedModel runs).

        Returns a dict of tensors:
            translation (B,) tf.string, score (B,) float32,
            attention (B, T, Ts) float32 (zeros past each sentence's lengths; only with
                `attention=True`: without it the search skips collecting the weights),
            source_ids (B, Ts) int32, source_lengths (B,) int32,
            target_ids (B, T) int32 (END then PAD), target_lengths (B,) int32 (END included),
            source_tokens (B, Ts) tf.string and target_tokens (B, T) tf.string ("" padding),
            alignment (B,) tf.string: the hard word alignment in the Pharaoh format (only
                with `attention=True`; `graph_alignments`),
            translation_unk_replaced (B,) tf.string: the translation with each `<unk>`
                replaced by its most attended source word (only with `attention=True`;
                `replace_unknown`'s rule without a dictionary).
        Sentences with no tokens get translation "", score 0, target length 0.
        """
        beam_size = self.setting("beam_size", beam_size)
        source_ids, source_lengths = self._graph_source(sentences)
        result = self._search(source_ids, beam_size, return_attention=attention)
        outputs = self._graph_texts(result, source_lengths)
        source_keep = tf.sequence_mask(source_lengths, tf.shape(source_ids)[1])
        target_keep = tf.sequence_mask(outputs["target_lengths"], tf.shape(result.ids)[1])
        source_tokens = tf.where(
            source_keep, self.source_tokenizer.id_to_token(source_ids), tf.constant("")
        )
        target_tokens = tf.where(
            target_keep, self.target_tokenizer.id_to_token(outputs["target_ids"]), tf.constant("")
        )
        outputs.update(
            source_ids=source_ids,
            source_lengths=source_lengths,
            source_tokens=source_tokens,
            target_tokens=target_tokens,
        )
        if attention:
            empty = tf.equal(source_lengths, 0)
            weights = tf.cast(result.attention, tf.float32)
            outputs["attention"] = tf.where(empty[:, None, None], 0.0, weights)
            outputs["alignment"] = graph_alignments(outputs)
            outputs["translation_unk_replaced"] = self._graph_unknown_replaced(sentences, outputs)
        return outputs

    def _graph_unknown_replaced(self, sentences, outputs):
        """(B,) tf.string: `replace_unknown`'s rule (`zoo.unknown_words`) in the graph."""
        width = tf.shape(outputs["source_ids"])[1]
        split = getattr(self.source_tokenizer, "split", None)
        if split is None:  # the source's pieces
            words = outputs["source_tokens"]
        else:  # the words as written (WordTokenizer.split), one per source id
            words = split(_valid_utf8(sentences))
            words = words.to_tensor("", shape=tf.stack([words.nrows(), tf.cast(width, tf.int64)]))
        bare = tf.strings.regex_replace(words, "^(" + JOINER + "|" + WORD_START + ")", "")
        best = tf.argmax(outputs["attention"], axis=2, output_type=tf.int32)  # (B, T)
        picked = tf.gather(bare, best, batch_dims=1)
        tokens = outputs["target_tokens"]
        unknown = tf.equal(tokens, UNK_TOKEN)
        # A row of SentencePiece pieces (one starts with the word-start mark), as
        # `zoo.unknown_words` decides it: its replacements start a word, its text is joined
        # without spaces.
        pieces = tf.reduce_any(tf.strings.regex_full_match(tokens, WORD_START + ".*"), axis=1)
        picked = tf.where(pieces[:, None], WORD_START + picked, picked)
        replaced = tf.where(unknown, picked, tokens)
        kept = tf.ragged.boolean_mask(
            replaced, tf.not_equal(replaced, "") & tf.not_equal(replaced, END_TOKEN)
        )
        glued = tf.strings.reduce_join(kept, axis=1)
        glued = tf.strings.strip(tf.strings.regex_replace(glued, WORD_START, " "))
        spaced = tf.strings.reduce_join(kept, axis=1, separator=" ")
        spaced = tf.strings.regex_replace(spaced, " " + JOINER, "")
        spaced = tf.strings.regex_replace(spaced, "^" + JOINER, "")
        text = tf.where(pieces, glued, spaced)
        return tf.where(tf.reduce_any(unknown, axis=1), text, outputs["translation"])

    def _search(self, source_ids, beam_size, return_attention, n_best=None):
        """`zoo.search.search` with this translator's settings."""
        return search(
            self.model,
            source_ids,
            beam_size=beam_size,
            length_penalty=self.length_penalty,
            coverage_penalty=self.coverage_penalty,
            max_length_ratio=self.max_length_ratio,
            max_length_offset=self.max_length_offset,
            return_attention=return_attention,
            n_best=n_best,
        )

    def _graph_source(self, sentences):
        """`tf.string` (B,) -> (source_ids (B, Ts >= 1) int32, source_lengths (B,) int32)."""
        ragged = self.source_tokenizer.tokenize(_valid_utf8(sentences))
        source_lengths = tf.cast(ragged.row_lengths(), tf.int32)
        source_ids = ragged.to_tensor(default_value=PAD_ID)
        # The encoders need at least one column, even when every sentence is empty.
        missing = tf.maximum(1 - tf.shape(source_ids)[1], 0)
        source_ids = tf.pad(source_ids, [[0, 0], [0, missing]], constant_values=PAD_ID)
        return source_ids, source_lengths

    def graph_translate_n_best(self, sentences, beam_size, n_best):
        """The in-graph n-best list of `tf.string` sentences (B,): a dict of
        translations (B, n) tf.string and scores (B, n) float32, best first (the search's
        ranking scores). A sentence with no tokens gets "" and 0 in every column; missing
        hypotheses (fewer than n exist) get "" and -inf."""
        source_ids, source_lengths = self._graph_source(sentences)
        result = self._search(source_ids, beam_size, return_attention=False, n_best=n_best)
        ids = tf.cast(result.ids, tf.int32)  # (B, n, T)
        flat = tf.reshape(ids, [-1, tf.shape(ids)[2]])
        texts = tf.reshape(self.target_tokenizer.detokenize(flat), tf.shape(ids)[:2])
        empty = tf.equal(source_lengths, 0)[:, None]
        missing = tf.equal(tf.cast(result.lengths, tf.int32), 0)
        texts = tf.where(empty | missing, tf.constant("", tf.string), texts)
        scores = tf.where(empty, 0.0, tf.cast(result.scores, tf.float32))
        return {"translations": texts, "scores": scores}

    def graph_sample(self, sentences, seed, temperature=1.0, top_k=None, top_p=None):
        """One translation drawn per `tf.string` sentence (B,) (`zoo.search.sample`, with this
        translator's length limits), in the graph: a dict of translation (B,) tf.string,
        score (B,) float32 (the model's log-probability of the drawn translation),
        target_ids (B, T) int32 and target_lengths (B,) int32. `seed` is the
        `keras.random.SeedGenerator` to draw from. Sentences with no tokens get "" and 0."""
        source_ids, source_lengths = self._graph_source(sentences)
        result = sample(
            self.model,
            source_ids,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            seed=seed,
            max_length_ratio=self.max_length_ratio,
            max_length_offset=self.max_length_offset,
        )
        return self._graph_texts(result, source_lengths)

    def _graph_texts(self, result, source_lengths):
        """A search or sampling `result` (B, T) as translation (B,) tf.string, score (B,),
        target_ids (B, T) int32 (END then PAD) and target_lengths (B,) int32; a sentence
        with no source tokens gets "", score 0, PAD ids and length 0."""
        empty = tf.equal(source_lengths, 0)
        target_ids = tf.where(empty[:, None], PAD_ID, tf.cast(result.ids, tf.int32))
        translation = self.target_tokenizer.detokenize(target_ids)
        return {
            "translation": tf.where(empty, tf.constant("", tf.string), translation),
            "score": tf.where(empty, 0.0, tf.cast(result.scores, tf.float32)),
            "target_ids": target_ids,
            "target_lengths": tf.where(empty, 0, tf.cast(result.lengths, tf.int32)),
        }

    def setting(self, name, value):
        """This call's `beam_size` or `batch_size`: the translator's own when None, else
        checked (an int >= 1)."""
        return getattr(self, name) if value is None else check_int(None, name, value)

    def translate_function(self, beam_size=None, attention=True):
        """The `tf.function` `sentences (None,) tf.string -> dict` for `beam_size` (and with or
        without the attention weights), traced once (input signature with dynamic batch) and
        cached on the translator."""
        beam_size = self.setting("beam_size", beam_size)
        key = (beam_size, bool(attention))
        if key not in self._functions:
            self._functions[key] = tf.function(
                lambda sentences: self.graph_translate(sentences, beam_size, attention),
                input_signature=[tf.TensorSpec([None], tf.string, name="sentences")],
                autograph=False,
            )
        return self._functions[key]

    # -- translation ---------------------------------------------------------------------------
    def _run(self, sentences, beam_size, batch_size, progress, attention=True, make=None):
        """Translates in batches sorted by length; returns (sentences, one dict of NumPy
        outputs per sentence, in input order). `make()` gives the graph function (default:
        `translate_function(beam_size, attention)`)."""
        sentences = check_sentences(sentences)
        beam_size = self.setting("beam_size", beam_size)
        batch_size = self.setting("batch_size", batch_size)
        if not sentences:
            return sentences, []
        lengths = self.source_lengths(sentences)
        limit = self.source_limit()
        if limit is not None and lengths.max() > limit:
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
        order = sorted(range(len(sentences)), key=lambda i: -int(lengths[i]))  # stable
        make = make or (lambda: self.translate_function(beam_size, attention))
        function = make()
        outputs = [None] * len(sentences)
        from tqdm.auto import tqdm

        with tqdm(total=len(sentences), unit="sent", desc="translate", disable=not progress) as bar:
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                strings = tf.constant([sentences[i] for i in batch], tf.string)
                try:
                    result = function(strings)
                except tf.errors.NotFoundError:
                    # A tokenizer's TF resource was freed after tracing (`tf.random.set_seed`
                    # clears the kernel cache that owns tensorflow-text's SentencePiece
                    # model): rebuild the resources eagerly, retrace once, retry.
                    function = self._retrace(make)
                    result = function(strings)
                result = {key: value.numpy() for key, value in result.items()}
                for row, index in enumerate(batch):
                    outputs[index] = {key: value[row] for key, value in result.items()}
                bar.update(len(batch))
        return sentences, outputs

    def _retrace(self, make):
        probe = tf.constant(["a"], tf.string)
        for tokenizer in (self.source_tokenizer, self.target_tokenizer):
            tokenizer.id_to_token(tokenizer.tokenize(probe).flat_values)
            tokenizer.detokenize(tf.constant([[4]], tf.int32))
        self._functions.clear()
        return make()

    def source_lengths(self, sentences):
        """NumPy int array: the number of source tokens of each sentence."""
        sentences = check_sentences(sentences)
        if not sentences:
            return np.zeros([0], np.int64)
        chunks = [
            self.source_tokenizer.tokenize(tf.constant(sentences[i : i + 4096], tf.string))
            .row_lengths()
            .numpy()
            for i in range(0, len(sentences), 4096)
        ]
        return np.concatenate(chunks)

    def translate(
        self,
        sentences,
        beam_size=None,
        batch_size=None,
        progress=False,
        replace_unknown=False,
        dictionary=None,
    ):
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
        """
        if dictionary is not None and not replace_unknown:
            raise ValueError("dictionary is used with replace_unknown=True only.")
        if replace_unknown:
            return self._translate_replacing_unknown(
                sentences, beam_size, batch_size, progress, dictionary
            )
        # Text only: the search skips collecting attention weights (~10% of beam time).
        _, outputs = self._run(sentences, beam_size, batch_size, progress, attention=False)
        return [as_text(out["translation"]) for out in outputs]

    def _translate_replacing_unknown(self, sentences, beam_size, batch_size, progress, dictionary):
        translations = self.translate_with_attention(sentences, beam_size, batch_size, progress)
        return self.replace_unknown(translations, dictionary)

    def replace_unknown(self, translations, dictionary=None):
        """The texts of `translations` (from `translate_with_attention`) with each `<unk>`
        replaced by the source word it attends to most, or that word's entry in
        `dictionary` (`zoo.unknown_words`); a list of str."""
        from zoo.unknown_words import replace_unknown

        translations = list(translations)
        if hasattr(self.source_tokenizer, "split"):  # the words as written
            words = self.source_words([t.source for t in translations])
        else:  # the pieces, which the translations hold already
            words = [t.source_tokens for t in translations]
        return [
            replace_unknown(w, t.target_tokens, t.weights, dictionary)
            if UNK_TOKEN in t.target_tokens
            else t.translation
            for w, t in zip(words, translations, strict=True)
        ]

    def source_words(self, sentences):
        """Per sentence, its source tokens as written, position by position (a list of
        lists of str): the word tokenizer's words (`WordTokenizer.split`), so that an
        out-of-vocabulary word stays itself; for other tokenizers their pieces."""
        sentences = check_sentences(sentences)
        if not sentences:
            return []
        strings = tf.constant(sentences, tf.string)
        split = getattr(self.source_tokenizer, "split", None)
        if split is not None:
            tokens = split(strings)
        else:
            tokens = tf.ragged.map_flat_values(
                self.source_tokenizer.id_to_token, self.source_tokenizer.tokenize(strings)
            )
        return [[as_text(x) for x in row] for row in tokens.to_list()]

    def translate_with_attention(self, sentences, beam_size=None, batch_size=None, progress=False):
        """Like `translate`, but returns a `zoo.translation.Translation` per sentence (text,
        score, source/target pieces and the attention matrix, cropped to the real tokens)."""
        sentences, outputs = self._run(sentences, beam_size, batch_size, progress)
        return [to_translation(s, out) for s, out in zip(sentences, outputs, strict=True)]

    def translate_n_best(
        self, sentences, n_best=None, beam_size=None, batch_size=None, progress=False
    ):
        """The `n_best` best translations of each sentence with their scores, best first:
        a list (one per sentence, in input order) of lists of `(translation, score)`.

        `n_best` defaults to the beam size; it is at most the beam size (beam search keeps
        that many finished hypotheses). Scores are the search's ranking scores (with the
        length penalty); entries whose score is -inf do not exist (tiny vocabularies)."""
        beam_size = self.setting("beam_size", beam_size)
        n_best = beam_size if n_best is None else check_int(None, "n_best", n_best)
        if n_best > beam_size:
            raise ValueError(f"n_best must be at most the beam size ({beam_size}), got {n_best}.")

        def make():
            key = ("n_best", beam_size, n_best)
            if key not in self._functions:
                self._functions[key] = tf.function(
                    lambda sentences: self.graph_translate_n_best(sentences, beam_size, n_best),
                    input_signature=[tf.TensorSpec([None], tf.string, name="sentences")],
                    autograph=False,
                )
            return self._functions[key]

        _, outputs = self._run(sentences, beam_size, batch_size, progress, make=make)
        return [
            [
                (as_text(text), float(score))
                for text, score in zip(o["translations"], o["scores"], strict=True)
            ]
            for o in outputs
        ]

    def sample(
        self,
        sentences,
        temperature=1.0,
        top_k=None,
        top_p=None,
        seed=None,
        batch_size=None,
        progress=False,
    ):
        """One translation drawn at random per sentence (a list of str, in input order):
        temperature, top-k and top-p sampling as in `zoo.search.sample`, the usual way to
        make synthetic sources for back-translation (module docstring of `zoo.search`).

        Args:
            sentences: list of source sentences.
            temperature: > 0; below 1 sharper, above 1 flatter than the model.
            top_k: draw from the k most likely tokens only (None: all).
            top_p: draw from the nucleus holding probability p, in (0, 1] (None: all).
            seed: an int makes the call reproducible: the same sentences, seed and
                batch size give the same translations (None: fresh draws).
            batch_size, progress: as for `translate`.
        """
        import keras

        check_sampling(temperature, top_k, top_p)
        seed = check_int(None, "seed", seed, minimum=0, allow_none=True)
        generator = keras.random.SeedGenerator(seed)

        def make():  # one trace per call: the generator is this call's
            return tf.function(
                lambda s: self.graph_sample(s, generator, temperature, top_k, top_p),
                input_signature=[tf.TensorSpec([None], tf.string, name="sentences")],
                autograph=False,
            )

        _, outputs = self._run(sentences, 1, batch_size, progress, make=make)
        return [as_text(out["translation"]) for out in outputs]

    # -- files -------------------------------------------------------------------------------
    def export(
        self,
        path,
        beam_size=None,
        greedy=True,
        attention=True,
        n_best=None,
        sampling=None,
        verbose=False,
    ):
        """Writes a SavedModel to `path`; see `zoo.export.export_translator` for its endpoints.

        The `translate` endpoint (also `serving_default`) searches with `beam_size`
        (default: the translator's); `translate_greedy` with beam size 1; with `n_best=n`,
        `translate_n_best` gives the n best of that beam; with `sampling` (a dict of
        `temperature`, `top_k`, `top_p`, possibly empty), `sample` draws translations.
        `attention=False` leaves the attention weights out of the outputs (faster beam
        search)."""
        from zoo.export import export_translator

        return export_translator(
            self,
            path,
            beam_size=beam_size,
            greedy=greedy,
            attention=attention,
            n_best=n_best,
            sampling=sampling,
            verbose=verbose,
        )

    def save(self, directory, serving=True, metadata=None):
        """Writes the output-folder layout of the module docstring to `directory`:
        model.keras, source_tokenizer/, target_tokenizer/, translator.json and (with
        `serving=True`) serving/. Returns `directory`.

        `metadata`: extra JSON-serialisable keys for translator.json, e.g.
        `{"data": "multi30k", "source_lang": "de", "target_lang": "en"}`, which
        `python -m zoo evaluate` uses as its defaults (see `read_metadata`)."""
        directory = os.fspath(directory)
        _check_metadata(metadata)
        os.makedirs(directory, exist_ok=True)
        self.model.save(os.path.join(directory, MODEL_FILE))
        self.source_tokenizer.save(os.path.join(directory, SOURCE_TOKENIZER_DIR))
        self.target_tokenizer.save(os.path.join(directory, TARGET_TOKENIZER_DIR))
        self.write_config(directory, metadata)
        if serving:
            self.export(os.path.join(directory, SERVING_DIR))
        return directory

    def write_config(self, directory, metadata=None):
        """Writes `<directory>/translator.json`: the search settings (`get_config`) and the
        optional `metadata` keys (see `save`). Returns the file's path."""
        metadata = _check_metadata(metadata)
        path = os.path.join(os.fspath(directory), CONFIG_FILE)
        write_json(path, {**metadata, **self.get_config()})
        return path

    @staticmethod
    def read_metadata(directory):
        """The contents of `<directory>/translator.json` as a dict ({} when absent)."""
        path = os.path.join(os.fspath(directory), CONFIG_FILE)
        if not os.path.isfile(path):
            return {}
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    @staticmethod
    def model_file(directory):
        """The model file an output folder delivers: translator.json's "model_file" (a recipe
        run writes the one it chose on validation there), else "model.keras"."""
        name = Translator.read_metadata(directory).get("model_file", MODEL_FILE)
        if not isinstance(name, str) or not name or os.path.basename(name) != name:
            raise ValueError(
                f"{os.path.join(os.fspath(directory), CONFIG_FILE)}: 'model_file' must be a "
                f"file name inside the folder, such as {MODEL_FILE!r}; got {name!r}."
            )
        return name

    @classmethod
    def from_directory(cls, directory, model_file=None, **overrides):
        """Loads a translator from an output folder (layout in the module docstring).

        Args:
            directory: the folder.
            model_file: the model file inside it (default: `Translator.model_file(directory)`,
                the file the run delivered).
            **overrides: any of beam_size, length_penalty, batch_size, max_length_ratio,
                max_length_offset; they replace the values of translator.json (if present).
        """
        import keras

        from zoo.text import load_tokenizer

        directory = os.fspath(directory)
        unknown = sorted(set(overrides) - set(_SETTINGS))
        if unknown:
            raise ValueError(f"Unknown Translator setting(s) {unknown}; valid: {_SETTINGS}.")
        if model_file is None:
            model_file = cls.model_file(directory)
        model_path = os.path.join(directory, model_file)
        missing = [
            p
            for p in (
                model_path,
                os.path.join(directory, SOURCE_TOKENIZER_DIR),
                os.path.join(directory, TARGET_TOKENIZER_DIR),
            )
            if not os.path.exists(p)
        ]
        if missing:
            raise ValueError(
                f"{directory} is not a zoo output folder: missing {missing} (expected "
                f"{model_file}, {SOURCE_TOKENIZER_DIR}/ and {TARGET_TOKENIZER_DIR}/)."
            )
        settings = {k: v for k, v in cls.read_metadata(directory).items() if k in _SETTINGS}
        settings.update(overrides)
        model = keras.saving.load_model(model_path, compile=False, safe_mode=True)
        return cls(
            model,
            load_tokenizer(os.path.join(directory, SOURCE_TOKENIZER_DIR)),
            load_tokenizer(os.path.join(directory, TARGET_TOKENIZER_DIR)),
            **settings,
        )


def _valid_utf8(sentences):
    """`tf.string` (B,) with invalid UTF-8 (possible through the SavedModel's input only)
    replaced by U+FFFD."""
    sentences = tf.convert_to_tensor(sentences, tf.string)
    return tf.strings.unicode_transcode(
        sentences, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
    )


def _graph_word_indices(tokens, lengths):
    """(B, N) int32: the word index of each real token (`zoo.evaluation.word_indices`)."""
    n = tf.shape(tokens)[1]
    real = tf.sequence_mask(lengths, n)
    marked = tf.strings.regex_full_match(tokens, WORD_START + ".*")
    joined = tf.strings.regex_full_match(tokens, "##.*")
    sentencepiece = tf.reduce_any(marked & real, axis=1, keepdims=True)
    starts = tf.where(sentencepiece, marked, tf.logical_not(joined))
    starts = (starts | tf.equal(tf.range(n), 0)[None, :]) & real
    return tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1


def graph_alignments(outputs):
    """(B,) tf.string: Pharaoh alignments ("0-0 1-2") of `graph_translate`'s outputs, in the
    graph: each target token but END links its word to the word of its highest-weight
    source token; links sorted, without repeats. The same rule as
    `zoo.evaluation.hard_alignment` (which `Translation.alignment()` runs), tested equal."""
    weights = outputs["attention"]  # (B, T, Ts)
    steps = tf.shape(weights)[1]
    target_lengths = tf.maximum(outputs["target_lengths"] - 1, 0)  # END is not a word
    source_words = _graph_word_indices(outputs["source_tokens"], outputs["source_lengths"])
    target_words = _graph_word_indices(outputs["target_tokens"], target_lengths)
    best = tf.argmax(weights, axis=2, output_type=tf.int32)  # (B, T)
    i = tf.gather(source_words, best, batch_dims=1)
    valid = tf.sequence_mask(target_lengths, steps) & (outputs["source_lengths"] > 0)[:, None]
    key = tf.where(valid, i * (steps + 1) + target_words, tf.int32.max)
    key = tf.sort(key, axis=1)
    new = tf.concat([tf.ones_like(key[:, :1], tf.bool), key[:, 1:] > key[:, :-1]], axis=1)
    keep = new & (key < tf.int32.max)
    links = tf.strings.as_string(key // (steps + 1)) + "-" + tf.strings.as_string(key % (steps + 1))
    return tf.strings.reduce_join(tf.ragged.boolean_mask(links, keep), axis=1, separator=" ")
