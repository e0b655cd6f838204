"""The translator's graph: `tf.string` sentences in, translations out, in TensorFlow ops.

What `Translator.graph_translate`, `graph_translate_n_best` and `graph_sample` run, and so
what the SavedModel holds (`zoo.export`). Each function takes the `Translator` whose model,
preprocessor (`zoo.text.Preprocessor`) and search settings it reads when traced.
"""

import tensorflow as tf

from zoo.constants import PAD_ID
from zoo.search import sample, search


def search_result(translator, source_ids, beam_size, return_attention, n_best=None):
    """`zoo.search.search` with `translator`'s settings."""
    return search(
        translator.model,
        source_ids,
        beam_size=beam_size,
        **translator.search_settings(),
        return_attention=return_attention,
        n_best=n_best,
    )


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


def translate(translator, sentences, beam_size, attention=True):
    """`Translator.graph_translate`'s outputs (documented there)."""
    from zoo.evaluation.alignment import graph_alignment_links, graph_pharaoh
    from zoo.unknown_words import graph_replace_unknown

    preprocessor = translator.preprocessor
    source_ids, source_lengths = preprocessor.encode_source(sentences)
    result = search_result(translator, source_ids, beam_size, return_attention=attention)
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


def translate_n_best(translator, sentences, beam_size, n_best):
    """`Translator.graph_translate_n_best`'s outputs (documented there)."""
    source_ids, source_lengths = translator.preprocessor.encode_source(sentences)
    result = search_result(translator, source_ids, beam_size, False, n_best=n_best)
    ids = tf.cast(result.ids, tf.int32)  # (B, n, T)
    flat = tf.reshape(ids, [-1, tf.shape(ids)[2]])
    strings = tf.reshape(translator.preprocessor.detokenize(flat), tf.shape(ids)[:2])
    empty = tf.equal(source_lengths, 0)[:, None]
    missing = tf.equal(tf.cast(result.lengths, tf.int32), 0)
    strings = tf.where(empty | missing, tf.constant("", tf.string), strings)
    scores = tf.where(empty, 0.0, tf.cast(result.scores, tf.float32))
    return {"translations": strings, "scores": scores}


def draw(translator, sentences, seed, temperature=1.0, top_k=None, top_p=None):
    """`Translator.graph_sample`'s outputs (documented there)."""
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
