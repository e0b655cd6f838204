"""Child-side functions of the cross-backend model tests (`zoo.testing.backend_run`).

Each runs on the Keras backend of its process and returns NumPy arrays, so that a test on
TensorFlow compares the three backends:

    found = run_in_backend("jax", "zoo.testing.model_probe:run_models", toy_batch(),
                           save_to="/tmp/x/jax", load=["/tmp/x/tensorflow"])

saves every preset (and tied models) to .keras files and loads those another backend
saved. For every model it returns, under "<folder>/<key>/<output>": its teacher-forced logits
(`model(...)`, "logits"), the same logits from the decoder's step function run over the
target one token at a time ("step_logits", `decoder.prepare` / `initial_state` / `step`),
and the attention weights of those steps ("attention", (B, Tt, Ts)). All presets of one
backend run in one call (a child costs seconds to start).
"""

import os

import numpy as np

# The models the probe builds: the presets, plus tied output embeddings, plain and three-way.
TIED = {"bahdanau_rnnsearch+tied": ("bahdanau_rnnsearch", True),
        "luong_global_general+three_way": ("luong_global_general", "three_way")}  # fmt: skip
VOCAB_SIZE = 40


def model_keys():
    """The keys of the models `save_models` builds: every preset at size "tiny", and
    the tied models of `TIED`."""
    from zoo.models import presets

    return [*presets(), *TIED]


def toy_batch():
    """{"source_ids" (3, 7), "target_ids" (3, 6)}: right-padded int32 ids of `VOCAB_SIZE`
    (sentences of different lengths, targets starting with START_ID)."""
    source = np.array(
        [[5, 6, 7, 8, 9, 10, 11], [12, 13, 14, 0, 0, 0, 0], [30, 31, 32, 33, 34, 0, 0]], "int32"
    )
    target = np.array([[1, 7, 6, 5, 4, 0], [1, 20, 21, 22, 23, 24], [1, 39, 0, 0, 0, 0]], "int32")
    return {"source_ids": source, "target_ids": target}


def build_model(key, seed=0):
    """The model of `key` (a preset name, or a key of `TIED`) at size "tiny", its weights
    drawn from `seed`."""
    import keras

    from zoo.models import build

    keras.utils.set_random_seed(seed)
    name, tie = TIED.get(key, (key, False))
    return build(name, "tiny", VOCAB_SIZE, VOCAB_SIZE, tie_embeddings=tie)


def stepwise(model, source_ids, target_ids):
    """(logits (B, Tt, V), attention (B, Tt, Ts)) of the decoder's step function fed the
    target ids one at a time (what the searches run), as float32 NumPy arrays."""
    from keras import ops

    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    memory, mask, states = encoder(ops.convert_to_tensor(source_ids), training=False)
    cache = decoder.prepare(memory, mask, states)
    state = decoder.initial_state(cache)
    params = decoder.loop_params()
    target = ops.convert_to_tensor(target_ids)
    logits, weights = [], []
    for t in range(target_ids.shape[1]):
        step_logits, state, step_weights = decoder.step(
            target[:, t], state, cache, training=False, params=params
        )
        logits.append(_numpy(step_logits))
        weights.append(_numpy(step_weights))
    return np.stack(logits, axis=1), np.stack(weights, axis=1)


def teacher_forced(model, inputs):
    """The logits (B, Tt, V) of `model` on the batch `inputs` (float32 NumPy)."""
    from keras import ops

    batch = {name: ops.convert_to_tensor(inputs[name]) for name in ("source_ids", "target_ids")}
    return _numpy(model(batch, training=False))


def probe(model, inputs):
    """{"logits", "step_logits", "attention"} of `model` on the batch `inputs`."""
    logits = teacher_forced(model, inputs)
    step_logits, attention = stepwise(model, inputs["source_ids"], inputs["target_ids"])
    return {"logits": logits, "step_logits": step_logits, "attention": attention}


def run_models(inputs, save_to=None, load=(), full=()):
    """Builds and saves the models, and loads saved ones, on this process's backend.

    Args:
        inputs: the batch (`toy_batch()`).
        save_to: None, or a folder: builds the models of `model_keys()`, saves each to
            `<save_to>/<key>.keras` and returns its logits as "saved/<key>/logits".
        load: folders of such files: loads each file with `safe_mode=True` and returns
            its logits as "<folder's name>/<key>/logits".
        full: folders (`save_to` and those of `load`) whose models get the whole probe
            (logits, step_logits, attention; `probe`), not the logits alone.
    Returns:
        the arrays, with "backend": this process's backend.
    """
    import keras

    import zoo  # noqa: F401 - registers the layers and models with Keras
    from zoo.backend import backend_name

    outputs = {"backend": np.array(backend_name())}

    def found(model, folder):
        if folder in full:
            return probe(model, inputs)
        return {"logits": teacher_forced(model, inputs)}

    if save_to is not None:
        os.makedirs(save_to, exist_ok=True)
        for key in model_keys():
            model = build_model(key)
            model.save(os.path.join(save_to, f"{key}.keras"))
            outputs.update({f"saved/{key}/{k}": v for k, v in found(model, save_to).items()})
    for folder in load:
        label = os.path.basename(os.path.normpath(folder))
        for key in model_keys():
            path = os.path.join(folder, f"{key}.keras")
            model = keras.models.load_model(path, compile=False, safe_mode=True)
            outputs.update({f"{label}/{key}/{k}": v for k, v in found(model, folder).items()})
    return outputs


def _numpy(tensor):
    from keras import ops

    return np.asarray(ops.convert_to_numpy(ops.cast(tensor, "float32")))


# -- the Translator on the child's backend ----------------------------------------------------
def translate_folder(inputs, folder, sentences, seed=7, export_to=None):
    """`Translator.from_directory(folder)`'s outputs for `sentences` on this process's
    backend: greedy and beam texts, scores and attention, the 2-best lists, `score` of the
    greedy translations, and sampling (twice with `seed`, once with another); with
    `export_to`, "refusals": `export_refusal`'s messages."""
    from zoo.translator import Translator

    translator = Translator.from_directory(folder)
    outputs = {}
    for name, beam_size in (("greedy", 1), ("beam", 2)):
        found = translator.translate_with_attention(sentences, beam_size=beam_size)
        outputs[f"{name}/texts"] = np.array([t.translation for t in found])
        outputs[f"{name}/scores"] = np.array([t.score for t in found], np.float32)
        width = max(1, *(len(t.target_tokens) for t in found))
        attention = np.zeros((len(found), width, max(1, *(len(t.source_tokens) for t in found))))
        for i, t in enumerate(found):
            attention[i, : t.weights.shape[0], : t.weights.shape[1]] = t.weights
        outputs[f"{name}/attention"] = attention.astype(np.float32)
        outputs[f"{name}/plain_texts"] = np.array(translator.translate(sentences, beam_size))
    n_best = translator.translate_n_best(sentences, n_best=2, beam_size=2)
    outputs["n_best/texts"] = np.array([[text for text, _ in row] for row in n_best])
    outputs["n_best/scores"] = np.array([[s for _, s in row] for row in n_best], np.float32)
    outputs["score"] = np.array(translator.score(sentences, list(outputs["greedy/texts"])))
    for name, draw_seed in (("sample", seed), ("sample_again", seed), ("sample_other", seed + 1)):
        outputs[name] = np.array(translator.sample(sentences, top_k=20, seed=draw_seed))
    if export_to is not None:
        outputs["refusals"] = export_refusal(inputs, folder, export_to)["messages"]
    return outputs


def greedy_target_ids(inputs, folder, sentences):
    """{"ids" (B, T) int32}: the target ids (END, then PAD) of greedy search on
    `Translator.from_directory(folder)`'s model for `sentences`, on this backend."""
    import tensorflow as tf

    from zoo.translator import Translator

    translator = Translator.from_directory(folder)
    found = translator.translate_function(1, attention=False)(tf.constant(sentences, tf.string))
    return {"ids": np.asarray(found["target_ids"]), "lengths": np.asarray(found["target_lengths"])}


def fit_and_save(inputs, folder, out, sentences, steps=20, seed=0):
    """Trains `folder`'s model on this backend for `steps` updates of `model.fit` on the
    pairs `inputs["source_ids"]` -> `inputs["target_ids"]` (START + y, y + END made here),
    writes the output folder `out` (model.keras, tokenizers, translator.json; no
    SavedModel, which needs TensorFlow) and returns the losses before and after
    ("losses") and `greedy_target_ids` of `out` for `sentences` ("ids", "lengths")."""
    import keras

    from zoo.constants import END_ID, PAD_ID, START_ID
    from zoo.training import keras_loss
    from zoo.translator import Translator

    keras.utils.set_random_seed(seed)
    translator = Translator.from_directory(folder)
    source, target = inputs["source_ids"], inputs["target_ids"]
    lengths = (target != PAD_ID).sum(axis=1)
    target_in = np.concatenate([np.full((len(target), 1), START_ID, "int32"), target], axis=1)
    target_out = np.concatenate([target, np.zeros((len(target), 1), "int32")], axis=1)
    target_out[np.arange(len(target)), lengths] = END_ID
    model = translator.model
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=keras_loss())
    batch = {"source_ids": source, "target_ids": target_in}
    before = model.evaluate(batch, target_out, verbose=0)
    model.fit(batch, target_out, batch_size=len(source), epochs=steps, verbose=0)
    after = model.evaluate(batch, target_out, verbose=0)
    translator.save(out, serving=False)
    greedy = greedy_target_ids({}, out, sentences)
    return {"losses": np.array([before, after], np.float32), **greedy}


def export_refusal(inputs, folder, out):
    """{"messages"}: what `export`, `export_litert` and `save(serving=True)` of
    `Translator.from_directory(folder)` raise on this backend (each writing to `out`)."""
    from zoo.translator import Translator

    translator = Translator.from_directory(folder)
    calls = (
        lambda: translator.export(out),
        lambda: translator.export_litert(out + ".tflite"),
        lambda: translator.save(out),
    )
    messages = []
    for call in calls:
        try:
            call()
        except RuntimeError as error:
            messages.append(str(error))
        else:
            messages.append("no error")
    return {"messages": np.array(messages)}


def load_file_logits(inputs, path):
    """{"logits", "dtypes"}: the teacher-forced logits of the model file at `path` (loaded
    with `keras.models.load_model`, safe mode) on `inputs`, and its weights' dtypes."""
    import keras

    import zoo  # noqa: F401 - registers the layers and models with Keras

    model = keras.models.load_model(path, compile=False, safe_mode=True)
    dtypes = sorted({str(keras.backend.standardize_dtype(w.dtype)) for w in model.weights})
    return {"logits": teacher_forced(model, inputs), "dtypes": np.array(dtypes)}
