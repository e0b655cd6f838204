"""The translator's graph: `tf.string` sentences in, translations out, in TensorFlow ops.

What `Translator.graph_translate`, `graph_translate_n_best`, `graph_sample` and
`graph_score` run, and so what the SavedModel holds (`zoo.export`). Each function takes the
`Translator` whose model, preprocessor (`zoo.text.Preprocessor`) and search settings it
reads when traced. The searches with a prefix or constraints take them as extra inputs
(`PREFIX`, `CONSTRAINTS`; `extra_tensors` makes them from a batch's Python values).
"""

import numpy as np
import tensorflow as tf

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.search import SearchSettings, sample, search
from zoo.search.defaults import CONTROL_DEFAULTS, TEMPERATURE
from zoo.text.preprocessor import encode
from zoo.translation import check_constraint_lists, check_prefixes, check_sentences
from zoo.translator.targets import check_prefix_texts, phrase_ids

# The inputs of the traced searches with a prefix or constraints (only those variants).
PREFIX = tf.TensorSpec([None], tf.string, name="prefix")
CONSTRAINTS = tf.TensorSpec([None, None, None], tf.int32, name="constraints")
EXTRA_INPUTS = {"prefix": PREFIX, "constraints": CONSTRAINTS}


def check_controls(controls):
    """The decoding controls of a call (a dict of some of `CONTROL_DEFAULTS`' names), checked
    by `zoo.search.SearchSettings` and completed with the defaults: a TypeError for a name
    that is no control, a ValueError naming a bad value."""
    unknown = sorted(set(controls) - set(CONTROL_DEFAULTS))
    if unknown:
        raise TypeError(
            f"Unknown decoding control(s) {unknown}; the controls are {list(CONTROL_DEFAULTS)}."
        )
    return SearchSettings(**controls).controls


# The decoding controls as a traced search's inputs after its extras (TensorFlow): one
# graph serves every value of them.
CONTROL_INPUTS = {
    "min_length": tf.TensorSpec([], tf.int32, name="min_length"),
    "ban_unknown": tf.TensorSpec([], tf.bool, name="ban_unknown"),
    "no_repeat_ngram_size": tf.TensorSpec([], tf.int32, name="no_repeat_ngram_size"),
}


def control_values(controls):
    """The checked `controls` (`check_controls`) as the traced search's control inputs, in
    `CONTROL_INPUTS`' order: NumPy scalars of their dtypes."""
    return [
        np.asarray(controls[name], spec.dtype.as_numpy_dtype)
        for name, spec in CONTROL_INPUTS.items()
    ]


def variant_key(controls, extras):
    """What a traced search's key holds beyond its beam size: nothing for the default graph
    (every control off, no prefix, no constraints), else the controls and the extra inputs'
    names."""
    if controls == CONTROL_DEFAULTS and not extras:
        return ()
    return (tuple(controls.items()), tuple(extras))


def extra_tensors(rows):
    """The traced search's extra inputs for a batch's `rows` (one dict per sentence with
    "prefix": str and/or "constraints": lists of ids): a tf.string (b,) prefix, then a
    (b, C, L) int32 array of phrases padded with PAD_ID (at least (b, 1, 1))."""
    tensors = []
    if "prefix" in rows[0]:
        tensors.append(tf.constant([row["prefix"] for row in rows], tf.string))
    if "constraints" in rows[0]:
        phrases = [row["constraints"] for row in rows]
        count = max([1, *(len(p) for p in phrases)])
        width = max([1, *(len(ids) for p in phrases for ids in p)])
        padded = np.full((len(rows), count, width), PAD_ID, np.int32)
        for i, sentence in enumerate(phrases):
            for j, ids in enumerate(sentence):
                padded[i, j, : len(ids)] = ids
        tensors.append(tf.constant(padded))
    return tensors


def search_inputs(translator, sentences, prefix=None, constraints=None, **controls):
    """What a `Translator` call asks of the search besides its sentences, checked:
    (controls, extras, names). `controls`: the decoding controls (`check_controls`);
    `extras`: None when no sentence has a prefix or constraints, else per sentence a dict
    of its prefix's text ("prefix") and its phrases' target ids ("constraints"); `names`:
    the keys of those dicts, the traced search's extra inputs. A prefix or phrase whose
    target tokens hold `<unk>`, a phrase with none or one repeating an n-gram that
    `no_repeat_ngram_size` bans, is refused
    (`zoo.translator.targets.TargetTextError`, a ValueError)."""
    controls = check_controls(controls)
    sentences = check_sentences(sentences)
    prefix = check_prefixes(prefix, len(sentences))
    constraints = check_constraint_lists(constraints, len(sentences))
    rows = [{} for _ in sentences]
    tokenizer = translator.preprocessor.target_tokenizer
    if prefix is not None and any(prefix):
        check_prefix_texts(tokenizer, prefix)
        for row, text in zip(rows, prefix, strict=True):
            row["prefix"] = text
    if constraints is not None and any(constraints):
        phrases = phrase_ids(tokenizer, constraints, controls["no_repeat_ngram_size"])
        for row, ids in zip(rows, phrases, strict=True):
            row["constraints"] = ids
    if not (rows and rows[0]):
        return controls, None, ()
    return controls, rows, tuple(rows[0])


def search_result(
    translator, source_ids, beam_size, return_attention, n_best=None, controls=None,
    prefix_ids=None, constraint_ids=None,
):  # fmt: skip
    """`zoo.search.search` with `translator`'s settings, this call's decoding `controls`
    (a dict of `zoo.search.defaults.CONTROL_DEFAULTS`' keywords, None: all off), and the
    target ids each output starts with (`prefix_ids` (B, P)) or must contain
    (`constraint_ids` (B, C, L)), 0 = pad."""
    return search(
        translator.model,
        source_ids,
        translator.settings,
        prefix=prefix_ids,
        constraints=constraint_ids,
        beam_size=beam_size,
        return_attention=return_attention,
        n_best=n_best,
        **(controls or {}),
    )


def target_prefix_ids(translator, prefix):
    """The target ids of a `tf.string` prefix per sentence (B,) ("" for none): (B, P) int32,
    tokenized as the targets are (no START or END), right-padded with PAD_ID."""
    if prefix is None:
        return None
    ids, _ = encode(translator.preprocessor.target_tokenizer, prefix)
    return ids


def texts(translator, result, source_lengths):
    """A search or sampling `result` (B, T) as translation (B,) tf.string, score (B,),
    target_ids (B, T) int32 (END then PAD) and target_lengths (B,) int32; a sentence
    with no source tokens gets "", score 0, PAD ids and length 0."""
    empty = tf.equal(source_lengths, 0)
    target_ids = tf.where(empty[:, None], PAD_ID, tf.cast(result.ids, tf.int32))
    translation = translator.preprocessor.detokenize(target_ids)
    return {
        "translation": tf.where(empty, tf.constant("", tf.string), translation),
        "score": tf.where(empty, 0.0, tf.cast(result.scores, tf.float32)),
        "target_ids": target_ids,
        "target_lengths": tf.where(empty, 0, tf.cast(result.lengths, tf.int32)),
    }


def translate(
    translator, sentences, beam_size, attention=True, controls=None, prefix=None,
    constraints=None,
):  # fmt: skip
    """The in-graph translation of a `tf.string` vector `(B,)` (`Translator.graph_translate`,
    what the SavedModel runs) with `beam_size`, with or without the attention weights.

    `controls`: the decoding controls (a dict of `zoo.search.search`'s min_length,
    ban_unknown, no_repeat_ngram_size; None: off); `prefix`: None, or a `tf.string` (B,)
    target text each translation starts with ("" for none); `constraints`: None, or (B, C, L)
    int32 target phrases every translation contains (0 = pad; `zoo.search.search`).

    Returns a dict of tensors:
        translation (B,) tf.string, score (B,) float32,
        attention (B, T, Ts) float32 (zeros past each sentence's lengths; only with
            `attention=True`: without it the search skips collecting the weights),
        source_ids (B, Ts) int32, source_lengths (B,) int32,
        target_ids (B, T) int32 (END then PAD), target_lengths (B,) int32 (END included),
        source_tokens (B, Ts) tf.string and target_tokens (B, T) tf.string ("" padding),
        alignment (B,) tf.string: the hard word alignment in the Pharaoh format (only
            with `attention=True`; `zoo.evaluation.alignment.graph_alignment_links`),
        translation_unk_replaced (B,) tf.string: the translation with each `<unk>`
            replaced by its most attended source word (only with `attention=True`;
            `zoo.unknown_words.graph_replace_unknown`, without a dictionary).
    Sentences with no tokens get translation "", score 0, target length 0.
    """
    source_ids, source_lengths, prefix_ids = encode_inputs(translator, sentences, prefix)
    result = search_result(
        translator, source_ids, beam_size, attention, controls=controls,
        prefix_ids=prefix_ids, constraint_ids=constraints,
    )  # fmt: skip
    return translation_outputs(translator, sentences, result, source_ids, source_lengths)


def encode_inputs(translator, sentences, prefix=None):
    """What a search reads of `tf.string` sentences (B,): (source_ids (B, Ts) int32,
    source_lengths (B,) int32, prefix ids (B, P) int32 or None without a `prefix`)."""
    source_ids, source_lengths = translator.preprocessor.encode_source(sentences)
    return source_ids, source_lengths, target_prefix_ids(translator, prefix)


def translation_outputs(translator, sentences, result, source_ids, source_lengths):
    """`translate`'s dict of tensors from a search `result` (a `SearchResult`; with its
    attention, the outputs that read it too) of `sentences`' `source_ids`."""
    from zoo.evaluation.alignment import graph_alignment_links, graph_pharaoh
    from zoo.unknown_words import graph_replace_unknown

    preprocessor = translator.preprocessor
    attention = result.attention is not None
    outputs = texts(translator, result, source_lengths)
    outputs.update(
        source_ids=source_ids,
        source_lengths=source_lengths,
        source_tokens=preprocessor.source_tokens(source_ids, source_lengths),
        target_tokens=preprocessor.target_tokens(outputs["target_ids"], outputs["target_lengths"]),
    )
    if attention:
        empty = tf.equal(source_lengths, 0)
        weights = tf.where(empty[:, None, None], 0.0, tf.cast(result.attention, tf.float32))
        outputs["attention"] = weights
        links = graph_alignment_links(
            outputs["source_tokens"],
            source_lengths,
            outputs["target_tokens"],
            tf.maximum(outputs["target_lengths"] - 1, 0),  # END is not a word
            weights,
        )
        outputs["alignment"] = graph_pharaoh(links)
        words = preprocessor.padded_source_words(sentences, outputs["source_tokens"])
        outputs["translation_unk_replaced"] = graph_replace_unknown(
            words, outputs["target_tokens"], weights, outputs["translation"]
        )
    return outputs


def translate_n_best(
    translator, sentences, beam_size, n_best, controls=None, prefix=None, constraints=None
):
    """The in-graph n-best list of `tf.string` sentences (B,): a dict of
    translations (B, n) tf.string and scores (B, n) float32, best first (the search's
    ranking scores). A sentence with no tokens gets "" and 0 in every column; missing
    hypotheses (fewer than n exist) get "" and -inf. `controls`, `prefix`, `constraints`:
    as for `translate`."""
    source_ids, source_lengths, prefix_ids = encode_inputs(translator, sentences, prefix)
    result = search_result(
        translator, source_ids, beam_size, False, n_best=n_best, controls=controls,
        prefix_ids=prefix_ids, constraint_ids=constraints,
    )  # fmt: skip
    return n_best_outputs(translator, result, source_lengths)


def n_best_outputs(translator, result, source_lengths):
    """`translate_n_best`'s dict of tensors from an n-best search `result` (B, n, ...)."""
    ids = tf.cast(result.ids, tf.int32)  # (B, n, T)
    shape = tf.shape(ids)
    flat = tf.reshape(ids, [shape[0] * shape[1], shape[2]])  # not -1: B may be 0
    strings = tf.reshape(translator.preprocessor.detokenize(flat), tf.shape(ids)[:2])
    empty = tf.equal(source_lengths, 0)[:, None]
    missing = tf.equal(tf.cast(result.lengths, tf.int32), 0)
    strings = tf.where(empty | missing, tf.constant("", tf.string), strings)
    scores = tf.where(empty, 0.0, tf.cast(result.scores, tf.float32))
    return {"translations": strings, "scores": scores}


def draw(translator, sentences, seed, temperature=TEMPERATURE, top_k=None, top_p=None):
    """One translation drawn per `tf.string` sentence (B,) (`zoo.search.sample`, with this
    translator's length limits), in the graph: a dict of translation (B,) tf.string,
    score (B,) float32 (the model's log-probability of the drawn translation),
    target_ids (B, T) int32 and target_lengths (B,) int32. `seed` is the
    `keras.random.SeedGenerator` to draw from. Sentences with no tokens get "" and 0."""
    source_ids, source_lengths = translator.preprocessor.encode_source(sentences)
    result = sample(
        translator.model,
        source_ids,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        max_length_ratio=translator.max_length_ratio,
        max_length_offset=translator.max_length_offset,
    )
    return texts(translator, result, source_lengths)


def score(translator, sources, targets):
    """The model's teacher-forced log-probability of each `targets` sentence given its
    `sources` sentence (`tf.string` (B,) each), in the graph: a dict of
    total (B,) float32, the sum over the target's tokens and END of log p(token | source,
    the tokens before it), the negative of the pair's summed cross-entropy; per_token (B,)
    float32, `total / target_tokens` (minus the pair's per-token training loss without
    label smoothing); and target_tokens (B,) int32, its tokens plus END.
    A pair whose source has no tokens gets 0 when its target has none either (the
    translator translates it to "" for sure), else -inf."""
    pairs = score_inputs(translator, sources, targets)
    batch = {"source_ids": pairs["source_ids"], "target_ids": pairs["target_in"]}
    logits = translator.model(batch, training=False)
    log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
    token_log_probs = tf.gather(log_probs, pairs["target_out"], batch_dims=2)  # (B, T + 1)
    return score_totals(token_log_probs, pairs["lengths"], pairs["source_lengths"])


def score_inputs(translator, sources, targets):
    """What the model reads to score `tf.string` pairs (B,): a dict of source_ids (B, Ts),
    source_lengths (B,), target_in (B, T + 1) (START + the target's ids, PAD after),
    target_out (B, T + 1) (the ids, END, PAD after) and lengths (B,) (the targets' tokens),
    int32."""
    source_ids, source_lengths = translator.preprocessor.encode_source(sources)
    ids, lengths = encode(translator.preprocessor.target_tokenizer, targets)  # (B, T), (B,)
    batch = tf.shape(ids)[0]
    target_in = tf.concat([tf.fill([batch, 1], START_ID), ids], axis=1)  # START + y (+ PAD)
    positions = tf.range(tf.shape(target_in)[1])[None, :]
    ends = tf.equal(positions, lengths[:, None])
    target_out = tf.where(ends, END_ID, tf.concat([ids, tf.fill([batch, 1], PAD_ID)], axis=1))
    return {"source_ids": source_ids, "source_lengths": source_lengths, "target_in": target_in,
            "target_out": target_out, "lengths": lengths}  # fmt: skip


def score_totals(token_log_probs, lengths, source_lengths):
    """`score`'s dict from the log-probabilities (B, T + 1) float32 of `score_inputs`'
    target_out tokens, the targets' `lengths` and the `source_lengths`."""
    positions = tf.range(tf.shape(token_log_probs)[1])[None, :]
    real = positions <= lengths[:, None]
    total = tf.reduce_sum(tf.where(real, token_log_probs, 0.0), axis=1)
    empty = tf.equal(source_lengths, 0)
    total = tf.where(empty, tf.where(tf.equal(lengths, 0), 0.0, float("-inf")), total)
    tokens = lengths + 1
    return {
        "total": total,
        "per_token": total / tf.cast(tokens, tf.float32),
        "target_tokens": tokens,
    }
