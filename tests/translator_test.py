"""Tests of zoo.translator.Translator: order, batching, robustness, attention, files."""

import json
import logging

import keras
import numpy as np
import pytest
import tensorflow as tf
from translator_toy import LONG, MIXED, toy_translator

from zoo.constants import END_ID, PAD_ID
from zoo.search import sample, search
from zoo.text import train_tokenizer
from zoo.translation import Translation
from zoo.translator import CONFIG_FILE, Translator


@pytest.fixture(scope="module")
def translator(data_dir):
    return toy_translator("bahdanau_rnnsearch", beam_size=2)


@pytest.fixture(scope="module")
def mixed_outputs(translator):
    return translator.translate(MIXED)


def test_mixed_batch_translates_in_order(translator, mixed_outputs):
    assert isinstance(mixed_outputs, list) and len(mixed_outputs) == len(MIXED)
    assert all(isinstance(text, str) for text in mixed_outputs)
    assert mixed_outputs[1] == "" and mixed_outputs[2] == ""  # no tokens, nothing to translate
    steps = [len(t.target_tokens) for t in translator.translate_with_attention(MIXED)]
    assert steps[1] == steps[2] == 0  # not asked to translate nothing
    assert all(steps[i] >= 1 for i in (0, 3, 4, 5, 6))  # searched (junk, maybe END alone)
    # Each sentence alone through the same graph gives the same text: sorting by length and
    # batching did not mix rows up.
    function = translator.translate_function(2)
    alone = [function(tf.constant([s]))["translation"].numpy()[0].decode() for s in MIXED]
    assert mixed_outputs == alone
    # Batch size does not change the output.
    assert translator.translate(MIXED, batch_size=2) == mixed_outputs
    assert translator.translate(MIXED[::-1], batch_size=3) == mixed_outputs[::-1]


def test_traced_once_per_beam_size(translator, mixed_outputs):
    # translate() (text only) runs the function without attention weights.
    function = translator.translate_function(2, attention=False)
    translator.translate(MIXED[:3], batch_size=1)
    translator.translate(["Ein Hund.", LONG, "Eine Katze schläft auf dem Sofa."])
    assert function.experimental_get_tracing_count() == 1
    assert translator.translate_function(2, attention=False) is function
    assert translator.translate_function(1, attention=False) is not function
    assert translator.translate_function(2) is not function
    assert "attention" not in function(tf.constant(["Ein Hund."]))
    assert "attention" in translator.translate_function(2)(tf.constant(["Ein Hund."]))


def test_long_sentence_translated_whole(translator):
    (t,) = translator.translate_with_attention([LONG], beam_size=1)
    expected = translator.source_tokenizer.tokenize(tf.constant([LONG])).numpy()[0]
    assert len(t.source_tokens) == len(expected) > 50  # not truncated
    assert 1 <= len(t.target_tokens) <= int(np.ceil(1.5 * len(expected))) + 10


def test_attention_matches_search_reference(translator):
    """translate_with_attention equals zoo.search.search run on the tokenizer's ids."""
    sentences = ["Ein Hund rennt.", "Ωμέγα ☃", "", "Zwei Männer sitzen auf einer Bank."]
    got = translator.translate_with_attention(sentences, beam_size=2)
    assert [t.translation for t in got] == translator.translate(sentences, beam_size=2)
    for sentence, t in zip(sentences, got, strict=True):
        assert isinstance(t, Translation) and t.source == sentence
        ids = translator.source_tokenizer.tokenize(tf.constant([sentence])).numpy()[0]
        if len(ids) == 0:
            assert (t.translation, t.score, t.target_tokens) == ("", 0.0, [])
            assert t.weights.shape == (0, 0)
            continue
        ref = search(
            translator.model,
            np.array([ids], np.int32),
            beam_size=2,
            length_penalty=translator.length_penalty,
        )
        n = int(ref.lengths[0])
        ref_ids = ref.ids.numpy()[0][:n]
        assert ref_ids[-1] == END_ID
        pieces = translator.target_tokenizer.id_to_token(ref_ids).numpy()
        assert t.target_tokens == [p.decode() for p in pieces]
        source_pieces = translator.source_tokenizer.id_to_token(ids).numpy()
        assert t.source_tokens == [p.decode() for p in source_pieces]
        np.testing.assert_allclose(t.weights, ref.attention.numpy()[0][:n], atol=1e-5)
        np.testing.assert_allclose(t.score, float(ref.scores[0]), rtol=1e-5)
        text = translator.target_tokenizer.detokenize(ref.ids).numpy()[0].decode()
        assert t.translation == text
        # Bahdanau attention: each row is a distribution over the real source tokens.
        np.testing.assert_allclose(t.weights.sum(axis=1), 1.0, atol=1e-4)
        assert "<unk>" in t.source_tokens or sentence != "Ωμέγα ☃"


def test_greedy_is_beam_one(translator):
    sentences = ["Ein Hund rennt.", "Eine Frau."]
    source = translator.source_tokenizer.tokenize(tf.constant(sentences)).to_tensor(PAD_ID)
    ref = search(translator.model, source, beam_size=1)
    texts = translator.target_tokenizer.detokenize(ref.ids).numpy()
    assert translator.translate(sentences, beam_size=1) == [x.decode() for x in texts]


def test_survives_seed_reset(translator, mixed_outputs):
    """keras.utils.set_random_seed clears TF's kernel cache (freeing tensorflow-text's
    SentencePiece resources) after the graph was traced: translating still works."""
    import keras

    keras.utils.set_random_seed(1)
    assert translator.translate(MIXED) == mixed_outputs


def test_progress_bar(translator, capsys):
    assert translator.translate(MIXED[:2], progress=True) == translator.translate(MIXED[:2])
    assert "translate" in capsys.readouterr().err


def test_bad_arguments(translator):
    with pytest.raises(ValueError, match="single string"):
        translator.translate("Ein Hund.")
    with pytest.raises(ValueError, match="index 1"):
        translator.translate(["Ein Hund.", 3])
    with pytest.raises(ValueError, match="beam_size"):
        translator.translate(["Ein Hund."], beam_size=0)
    with pytest.raises(ValueError, match="batch_size"):
        translator.translate(["Ein Hund."], batch_size=-1)
    with pytest.raises(ValueError, match="length_penalty"):
        Translator(
            translator.model,
            translator.source_tokenizer,
            translator.target_tokenizer,
            length_penalty=float("nan"),
        )
    small = train_tokenizer("word", ["ein hund rennt"], vocab_size=10)
    with pytest.raises(ValueError, match="expects"):
        Translator(translator.model, small, translator.target_tokenizer)
    assert translator.translate([]) == []


def test_location_attention_reads_long_sentences_with_a_warning(data_dir, caplog):
    """Luong's location score addresses max_length (32 at tiny) positions: a longer sentence
    is translated with no attention past them, a warning names it, and the other sentences
    of its batch translate as they do alone."""
    translator = toy_translator("luong_global_location", beam_size=1)
    limit = translator.source_limit()
    with caplog.at_level(logging.WARNING, logger="zoo.translator"):
        both = translator.translate(["Ein Hund.", LONG])
    assert f"Sentence(s) 1 have more than {limit} tokens" in caplog.text
    assert both[0] == translator.translate(["Ein Hund."])[0]
    (t,) = translator.translate_with_attention([LONG])
    assert len(t.source_tokens) > limit
    np.testing.assert_array_equal(t.weights[:, limit:], 0.0)
    np.testing.assert_allclose(t.weights.sum(-1), 1.0, atol=1e-5)


def test_lone_surrogate_is_refused_by_index(translator):
    with pytest.raises(ValueError, match=r"sentences\[1\] is not valid Unicode.*surrogate"):
        translator.translate(["Ein Hund.", "kaputt \ud800 hier"])


def test_save_and_from_directory(translator, mixed_outputs, tmp_path):
    translator.save(tmp_path, serving=False)
    assert json.loads((tmp_path / CONFIG_FILE).read_text())["beam_size"] == 2
    loaded = Translator.from_directory(tmp_path)
    assert loaded.get_config() == translator.get_config()
    assert loaded.translate(MIXED) == mixed_outputs
    assert Translator.from_directory(tmp_path, beam_size=3).beam_size == 3
    with pytest.raises(ValueError, match="search settings"):
        translator.save(tmp_path / "other", serving=False, metadata={"beam_size": 4})
    translator.write_config(tmp_path, {"data": "anki-spa-eng", "source_lang": "en"})
    assert Translator.read_metadata(tmp_path) == {
        "data": "anki-spa-eng",
        "source_lang": "en",
        **translator.get_config(),
    }
    with pytest.raises(ValueError, match="Unknown Translator setting"):
        Translator.from_directory(tmp_path, beam=3)
    with pytest.raises(ValueError, match="not a zoo output folder"):
        Translator.from_directory(tmp_path / "nowhere")


def test_the_folder_delivers_the_model_file_translator_json_names(translator, tmp_path):
    translator.save(tmp_path, serving=False)
    assert Translator.model_file(tmp_path) == "model.keras"
    other = keras.models.load_model(tmp_path / "model.keras")
    other.weights[0].assign(other.weights[0] + 1.0)  # another model
    other.save(tmp_path / "model.averaged.keras")
    translator.write_config(tmp_path, {"model_file": "model.averaged.keras"})
    loaded = Translator.from_directory(tmp_path)
    for mine, theirs in zip(loaded.model.weights, other.weights, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    explicit = Translator.from_directory(tmp_path, model_file="model.keras")
    np.testing.assert_array_equal(
        explicit.model.weights[0].numpy(), translator.model.weights[0].numpy()
    )
    translator.write_config(tmp_path, {"model_file": "../model.keras"})
    with pytest.raises(ValueError, match="'model_file' must be a file name.*'../model.keras'"):
        Translator.from_directory(tmp_path)
    translator.write_config(tmp_path, {"model_file": "gone.keras"})
    with pytest.raises(ValueError, match="missing.*gone.keras"):
        Translator.from_directory(tmp_path)


def test_n_best_lists_start_with_the_translation(translator, mixed_outputs):
    lists = translator.translate_n_best(MIXED, n_best=2)
    assert len(lists) == len(MIXED) and all(len(entries) == 2 for entries in lists)
    assert [entries[0][0] for entries in lists] == mixed_outputs
    expected = translator.translate_with_attention(MIXED)
    for entries, t in zip(lists, expected, strict=True):
        np.testing.assert_allclose(entries[0][1], t.score, rtol=1e-5, atol=1e-6)
        assert entries[0][1] >= entries[1][1]  # best first
    assert lists[1] == [("", 0.0), ("", 0.0)]  # an empty sentence
    assert translator.translate_n_best(MIXED[:2]) == lists[:2]  # default n: the beam size
    with pytest.raises(ValueError, match="at most the beam size"):
        translator.translate_n_best(MIXED, n_best=3)


def test_sample_is_seeded_and_top_k_1_is_greedy(translator):
    drawn = translator.sample(MIXED, seed=3, temperature=3.0)
    assert len(drawn) == len(MIXED) and drawn[1:3] == ["", ""]  # empty sources: ""
    assert translator.sample(MIXED, seed=3, temperature=3.0) == drawn  # reproducible
    others = [translator.sample(MIXED, seed=s, temperature=3.0) for s in (4, 5)]
    assert any(o != drawn for o in others)  # and the seed matters
    # Only the most likely token may be drawn: greedy search, whatever the seed.
    assert translator.sample(MIXED, top_k=1, seed=9) == translator.translate(MIXED, beam_size=1)
    for bad, match in (
        (dict(top_p=1.5), "top_p"),
        (dict(temperature=0.0), "temperature"),
        (dict(seed=-1), "seed"),
    ):
        with pytest.raises(ValueError, match=match):
            translator.sample(MIXED, **bad)


def test_defaults_are_the_recipes_settings(translator, tmp_path):
    """No settings: zoo.search.defaults' values, the translator a recipe's folder delivers;
    a setting translator.json leaves out takes its default too."""
    from zoo.json_files import write_json
    from zoo.search import defaults
    from zoo.translator import SETTINGS

    plain = Translator(translator.model, translator.source_tokenizer, translator.target_tokenizer)
    assert plain.get_config() == defaults.SEARCH_DEFAULTS
    assert set(SETTINGS) == set(defaults.SEARCH_DEFAULTS)
    translator.save(tmp_path, serving=False)  # the toy's own settings (beam 2, no penalty)...
    recipe = {"data": "multi30k", "source_lang": "de", "target_lang": "en"}
    write_json(tmp_path / CONFIG_FILE, {**recipe, **defaults.SEARCH_DEFAULTS})  # ...replaced
    loaded = Translator.from_directory(tmp_path)
    assert loaded.get_config() == plain.get_config()
    sentences = ["Ein Hund rennt.", "Zwei Männer lachen auf der Bank."]
    got = plain.translate_with_attention(sentences)
    assert [t.translation for t in got] == loaded.translate(sentences)
    # The search those settings name: beam 5, GNMT's length penalty 1.
    ids = translator.source_tokenizer.tokenize(tf.constant(sentences[:1])).to_tensor(PAD_ID)
    ref = search(
        translator.model, ids, beam_size=defaults.BEAM_SIZE,
        length_penalty=defaults.LENGTH_PENALTY,
    )  # fmt: skip
    np.testing.assert_allclose(got[0].score, float(ref.scores[0]), rtol=1e-5)
    assert len(plain.translate_n_best(sentences[:1])[0]) == defaults.BEAM_SIZE
    (tmp_path / CONFIG_FILE).write_text(json.dumps({"beam_size": 3}))
    partial = Translator.from_directory(tmp_path)
    assert partial.get_config() == {**defaults.SEARCH_DEFAULTS, "beam_size": 3}


def test_sampling_traces_once_for_every_seed_and_setting(translator):
    """60 calls with different seeds (and temperatures, top_k, top_p) run one traced
    function; a seed still reproduces its draws, and the draws equal zoo.search.sample's
    with a SeedGenerator of that seed."""
    sentences = MIXED[:4]
    function = translator.sample_function()
    drawn = {}
    for seed in range(60):
        options = [
            dict(temperature=3.0),
            dict(temperature=0.5, top_k=5),
            dict(top_p=0.8),
            dict(top_k=10**9, temperature=1e-320),
        ][seed % 4]
        drawn[seed] = translator.sample(sentences, seed=seed, **options)
    assert translator.sample_function() is function
    assert function.experimental_get_tracing_count() == 1
    assert translator.sample(sentences, seed=4, temperature=3.0) == drawn[4]
    assert len({tuple(drawn[s]) for s in range(0, 60, 4)}) > 1  # the seeds draw differently
    greedy = translator.translate(sentences, beam_size=1)
    assert all(drawn[s] == greedy for s in range(3, 60, 4))  # temperature 1e-320: arg-max
    assert translator.sample(sentences, top_p=1e-300, seed=1) == greedy  # the top token
    # The same draws as the search's own sampler with SeedGenerator(seed), on the batch
    # the translator runs: its sentences sorted longest first.
    counts = translator.source_lengths(sentences)
    order = sorted(range(len(sentences)), key=lambda i: -int(counts[i]))
    ids, lengths = translator.preprocessor.encode_source(tf.constant([sentences[i] for i in order]))
    reference = sample(
        translator.model, ids, temperature=0.5, top_k=5, seed=keras.random.SeedGenerator(1),
        max_length_ratio=translator.max_length_ratio,
        max_length_offset=translator.max_length_offset,
    )  # fmt: skip
    texts = translator.target_tokenizer.detokenize(reference.ids).numpy()
    expected = [None] * len(sentences)
    for row, index in enumerate(order):
        expected[index] = texts[row].decode() if int(lengths[row]) else ""
    assert drawn[1] == expected


def test_the_translator_keeps_its_most_recently_used_traced_functions(data_dir):
    """At most `traced.limit` functions stay (least recently used dropped, and freed);
    a used one is not traced again."""
    import gc
    import weakref

    from zoo.translator.translator import MAX_TRACED

    small = toy_translator("bahdanau_rnnsearch", beam_size=2)
    assert small.traced.limit == MAX_TRACED
    small.traced.limit = 2
    first = weakref.ref(small.translate_function(1, attention=False))
    small.translate(MIXED[:2], beam_size=1)
    kept = small.translate_function(2, attention=False)
    small.translate(MIXED[:2], beam_size=2)
    assert small.translate_function(1, attention=False) is first()  # used: now the newest
    small.translate(MIXED[:2], beam_size=3)  # drops beam 2, the least recently used
    assert small.traced.keys() == [(1, False), (3, False)]
    assert small.translate_function(1, attention=False).experimental_get_tracing_count() == 1
    dropped = weakref.ref(kept)
    del kept
    gc.collect()
    assert dropped() is None  # the dropped graph is freed
    for beam_size in range(1, 7):
        small.translate(MIXED[:1], beam_size=beam_size)
    assert len(small.traced) == 2


@pytest.mark.parametrize("preset", ["bahdanau_rnnsearch", "luong_local_p_general"])
def test_a_dropped_traced_search_frees_its_graph(data_dir, preset):
    """The graph of a traced search lives only as long as the function: nothing global
    (such as a gradient function registered per trace) keeps it once the cache drops it."""
    import gc

    def graphs():  # TensorFlow's FuncGraphs of the Translator's traced functions
        gc.collect()
        objects = gc.get_objects()
        return sum(type(o).__name__ == "FuncGraph" and o.name == "traced" for o in objects)

    small = toy_translator(preset, beam_size=2)
    small.traced.limit = 1
    before = graphs()
    for beam_size in (1, 2):
        small.translate(MIXED[:1], beam_size=beam_size)
    assert graphs() - before == 1


def test_score_is_the_teacher_forced_log_probability(translator):
    """Translator.score against NumPy's log-softmax of the model's logits under teacher
    forcing, and against the training loss (zoo.training.losses), pair by pair."""
    from zoo.constants import START_ID
    from zoo.training.losses import masked_cross_entropy

    sources = ["Ein Hund rennt.", "Zwei Männer lachen auf der Bank.", "Eine Frau.", "", ""]
    sources += ["Ωμέγα ☃", LONG]
    targets = ["A dog runs.", "Two men laugh.", "A woman is sitting on a bench.", "", "Nope"]
    targets += ["", "A long sentence."]
    scores = translator.score(sources, targets, batch_size=2)
    assert translator.score(sources[::-1], targets[::-1], batch_size=3) == pytest.approx(
        scores[::-1], rel=1e-5
    )
    for source, target, (total, per_token) in zip(sources, targets, scores, strict=True):
        source_ids = translator.source_tokenizer.tokenize(tf.constant([source])).numpy()[0]
        target_ids = translator.target_tokenizer.tokenize(tf.constant([target])).numpy()[0]
        if len(source_ids) == 0:  # translated to "" for sure
            assert (total, per_token) == ((0.0, 0.0) if not target else (-np.inf, -np.inf))
            continue
        target_in = np.array([[START_ID, *target_ids]], np.int32)
        target_out = np.array([[*target_ids, END_ID]], np.int32)
        inputs = {"source_ids": np.array([source_ids], np.int32), "target_ids": target_in}
        logits = np.asarray(translator.model(inputs, training=False), np.float64)
        top = logits.max(axis=-1, keepdims=True)
        log_probs = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
        expected = log_probs[0, np.arange(target_out.shape[1]), target_out[0]].sum()
        np.testing.assert_allclose(total, expected, rtol=1e-5)
        np.testing.assert_allclose(per_token, expected / target_out.shape[1], rtol=1e-5)
        loss = float(masked_cross_entropy(target_out, logits.astype(np.float32)))
        np.testing.assert_allclose(per_token, -loss, rtol=1e-5)
    assert translator.score_function().experimental_get_tracing_count() == 1
    assert translator.score([], []) == []
    with pytest.raises(ValueError, match="2 sources and 1 targets"):
        translator.score(["a", "b"], ["c"])


CONTROL_SENTENCES = ["Ein Hund rennt.", "Zwei Männer lachen auf einer Bank.", "Eine Frau.", ""]


def _search_alone(translator, sentence, beam_size, **settings):
    """zoo.search.search on one sentence's tokenizer ids, with the prefix and constraint
    texts tokenized by the target tokenizer here: (text, score), ("", 0.0) for no tokens."""
    ids = translator.source_tokenizer.tokenize(tf.constant([sentence])).numpy()[0]
    if len(ids) == 0:
        return "", 0.0
    target = translator.target_tokenizer
    prefix = settings.pop("prefix", None)
    if prefix:
        settings["prefix"] = [target.tokenize(tf.constant([prefix])).numpy()[0].tolist()]
    phrases = settings.pop("constraints", None)
    if phrases:
        settings["constraints"] = [target.tokenize(tf.constant(phrases)).to_list()]
    result = search(
        translator.model, np.array([ids], np.int32), beam_size=beam_size,
        **translator.search_settings(), **settings,
    )  # fmt: skip
    text = target.detokenize(result.ids).numpy()[0].decode()
    return text, float(result.scores[0])


@pytest.mark.parametrize(
    "asked",
    [
        {"min_length": 4},
        {"ban_unknown": True, "min_length": 2},
        {"no_repeat_ngram_size": 1, "min_length": 6},
        {"prefix": ["A dog", "", "Two men are", "A"]},
        {"constraints": [["dog"], ["bench", "two men"], [], ["cat"]]},
        {"prefix": ["", "A", "A", ""], "constraints": [["a ball"], [], ["woman"], []],
         "no_repeat_ngram_size": 2},
    ],
)  # fmt: skip
def test_controls_prefix_and_constraints_equal_the_search_on_the_same_ids(translator, asked):
    """Translator.translate_with_attention with each decoding control, prefix and
    constraints equals zoo.search.search run here on each sentence alone (batches of 2,
    sorted by length: each sentence's prefix and phrases follow it)."""
    got = translator.translate_with_attention(CONTROL_SENTENCES, batch_size=2, **asked)
    assert [t.translation for t in got] == translator.translate(CONTROL_SENTENCES, **asked)
    for i, (sentence, t) in enumerate(zip(CONTROL_SENTENCES, got, strict=True)):
        settings = {k: (v[i] if k in ("prefix", "constraints") else v) for k, v in asked.items()}
        text, score = _search_alone(translator, sentence, 2, **settings)
        assert t.translation == text
        np.testing.assert_allclose(t.score, score, rtol=1e-5)
        if not sentence:
            continue
        prefix = settings.get("prefix") or ""
        assert t.translation.startswith(prefix)
        for phrase in settings.get("constraints") or []:
            assert phrase in t.translation
        if settings.get("min_length"):
            assert len(t.target_tokens) - 1 >= settings["min_length"]  # END not counted
        if settings.get("ban_unknown"):
            assert "<unk>" not in t.target_tokens
    n_best = translator.translate_n_best(CONTROL_SENTENCES, 2, **asked)
    assert [entries[0][0] for entries in n_best] == [t.translation for t in got]


def test_sentences_without_prefix_or_constraints_translate_as_without_them(translator):
    plain = translator.translate_with_attention(CONTROL_SENTENCES)
    prefixed = translator.translate_with_attention(
        CONTROL_SENTENCES, prefix=["", "", "A cat", ""], constraints=[[], ["dog"], [], []]
    )
    for i in (0, 3):
        assert prefixed[i].translation == plain[i].translation
        assert prefixed[i].score == pytest.approx(plain[i].score, rel=1e-6)
    assert prefixed[2].translation.startswith("A cat") and "dog" in prefixed[1].translation
    # No prefix and no phrase at all: the default graph runs.
    nothing = translator.translate(CONTROL_SENTENCES, prefix=[""] * 4, constraints=[[]] * 4)
    assert nothing == [t.translation for t in plain]


def test_the_default_traced_search_stays_as_it_is(data_dir):
    small = toy_translator("bahdanau_rnnsearch", beam_size=2)
    small.translate(CONTROL_SENTENCES)
    assert small.traced.keys() == [(2, False)]
    plain = small.translate_function(2, attention=False)
    assert [spec.name for spec in plain.input_signature] == ["sentences"]
    small.translate(CONTROL_SENTENCES, min_length=3, prefix=["A"] * 4, constraints=[["dog"]] * 4)
    small.translate(CONTROL_SENTENCES, min_length=3, prefix=["A"] * 4, constraints=[["cat"]] * 4)
    assert len(small.traced) == 2 and small.traced.keys()[0] == (2, False)
    controlled = small.traced.get(small.traced.keys()[1], None)
    names = [spec.name for spec in controlled.input_signature]
    assert names == [
        "sentences", "prefix", "constraints", "min_length", "ban_unknown", "no_repeat_ngram_size",
    ]  # fmt: skip
    assert controlled.experimental_get_tracing_count() == 1
    assert small.translate(CONTROL_SENTENCES) == small.translate(CONTROL_SENTENCES, min_length=0)
    assert plain.experimental_get_tracing_count() == 1


def test_new_control_values_reuse_one_traced_search(data_dir):
    """Every value of the decoding controls runs the one graph that takes them as inputs,
    each answer the one a translator that never saw other values gives."""
    small = toy_translator("bahdanau_rnnsearch", beam_size=2)
    values = [dict(min_length=m, ban_unknown=m % 2 == 0, no_repeat_ngram_size=m) for m in (1, 2, 7)]
    answers = [small.translate(CONTROL_SENTENCES, **controls) for controls in values]
    assert len(small.traced) == 1
    (function,) = (small.traced.get(key, None) for key in small.traced.keys())
    assert function.experimental_get_tracing_count() == 1
    for controls, answer in zip(values, answers, strict=True):
        fresh = toy_translator("bahdanau_rnnsearch", beam_size=2)
        assert fresh.translate(CONTROL_SENTENCES, **controls) == answer


@pytest.mark.parametrize(
    "asked, message",
    [
        ({"min_length": -1}, "min_length"),
        ({"ban_unknown": "yes"}, "ban_unknown must be True or False"),
        ({"no_repeat_ngram_size": 1.5}, "no_repeat_ngram_size"),
        ({"prefix": "A dog"}, "single string"),
        ({"prefix": ["A dog"]}, "prefix has 1 entries for 2 sentences"),
        ({"prefix": ["A", 3]}, "prefix must be a list of str"),
        ({"constraints": [["dog"]]}, "constraints has 1 entries for 2 sentences"),
        ({"constraints": ["dog", []]}, r"wrap a single phrase as \[phrase\]"),
        ({"constraints": [["dog", " "], []]}, "empty phrase"),
    ],
)
def test_bad_controls_prefixes_and_constraints_are_named(translator, asked, message):
    with pytest.raises(ValueError, match=message):
        translator.translate(["Ein Hund.", "Eine Frau."], **asked)


@pytest.mark.parametrize(
    "asked, named",
    [
        ({"constraints": [[], ["a dog", "日本語 ✓"]]}, "the constraint '日本語 ✓'"),
        ({"prefix": ["", "xyz\x01\x02"]}, "the prefix 'xyz\\\\x01\\\\x02'"),
    ],
)
def test_prefixes_and_constraints_the_target_vocabulary_cannot_write_are_refused(
    translator, asked, named
):
    """Their <unk> would reach the translation as "⁇" (with ban_unknown: no translation
    at all): every path refuses them, naming the sentence, the text and the characters."""
    sentences = ["Ein Hund.", "Eine Frau."]
    calls = (
        translator.translate,
        translator.translate_with_attention,
        lambda s, **k: translator.translate_n_best(s, 2, **k),
        lambda s, **k: translator.translate(s, replace_unknown=True, **k),
    )
    for call in calls:
        for ban in (False, True):
            with pytest.raises(ValueError, match=r"\[1\]: " + named + " holds characters"):
                call(sentences, ban_unknown=ban, **asked)


def test_the_translator_holds_its_settings_and_parts(translator):
    """The translator's search settings are one checked `SearchSettings`; its parts answer
    its methods with their own signatures; a misspelt control is named."""
    import inspect

    from zoo.search import SearchSettings
    from zoo.translator.sampling import Sampler
    from zoo.translator.scoring import Scorer

    assert isinstance(translator.settings, SearchSettings)
    assert translator.beam_size == translator.settings.beam_size
    assert translator.get_config()["length_penalty"] == translator.settings.length_penalty
    assert inspect.signature(Translator.sample) == inspect.signature(Sampler.sample)
    assert inspect.signature(Translator.score) == inspect.signature(Scorer.score)
    assert translator.sampler.translator is translator and translator.files.translator is translator
    with pytest.raises(TypeError, match=r"Unknown decoding control\(s\) \['min_lenght'\]"):
        translator.translate(["Ein Hund."], min_lenght=3)
    parts = (translator.model, translator.source_tokenizer, translator.target_tokenizer)
    other = Translator(*parts, beam_size=2)
    other.translate(["Ein Hund."])
    other.beam_size = 3  # replaces the settings, and drops the searches traced with the old
    assert other.settings.beam_size == 3 and len(other.traced) == 0
    with pytest.raises(ValueError, match="length_penalty"):
        other.length_penalty = -1.0
    with pytest.raises(ValueError, match="beam_size must be an int >= 1"):
        Translator(*parts, beam_size=0)
    with pytest.raises(ValueError, match="max_length_ratio must be in"):
        Translator(*parts, max_length_ratio=100.0)
