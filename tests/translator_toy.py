"""A tiny untrained Translator on real Multi30k tokenizers, shared by the translator,
export and CLI tests (untrained models output junk: tests compare paths, not quality)."""

import keras
import numpy as np

from zoo.data.files import data_dir
from zoo.models import build
from zoo.text import train_tokenizer
from zoo.translator import Translator

TRAIN_LINES = 300
VOCAB_SIZE = 200

# Every awkward input at once: empty, whitespace only, non-breaking spaces, characters never
# seen in training, and a sentence far over the training length limit (50 tokens).
LONG = (
    "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche und ein Hund läuft "
    "über die Wiese, während eine Frau mit einem roten Hut auf einer Bank sitzt und liest. "
) * 4
MIXED = [
    "Ein Hund rennt.",
    "",
    "   \t ",
    "Ωμέγα ☃ 漢字 🙂",
    LONG,
    "\u00a0Zwei\u00a0Männer\u00a0lachen.\u00a0",
    "Eine Frau.",
]


def read_lines(name, count=TRAIN_LINES):
    path = data_dir() / "multi30k" / name
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()[:count]


def toy_translator(
    preset="bahdanau_rnnsearch", target_kind="sentencepiece", beam_size=2, seed=0, **settings
):
    """A Translator with a tiny `preset` model and tokenizers of VOCAB_SIZE ids trained on
    TRAIN_LINES Multi30k de/en lines (SentencePiece source, `target_kind` target).

    The weights are seeded: an untrained model's logits have near-ties, and the float
    rounding of two graphs (the SavedModel's and the Translator's tf.function) may break a
    near-tie differently over a long junk output; with fixed weights the comparison is the
    same on every run. (Seeding is safe for tokenizers made earlier: their SentencePiece
    resources have shared names and survive `tf.random.set_seed`.) The length penalty is 0
    (ranking by log-probability, as `zoo.search.search` without one) unless `settings`
    give another.
    """
    settings.setdefault("length_penalty", 0.0)
    source = train_tokenizer("sentencepiece", read_lines("train.de"), vocab_size=VOCAB_SIZE)
    target = train_tokenizer(target_kind, read_lines("train.en"), vocab_size=VOCAB_SIZE)
    keras.utils.set_random_seed(seed)
    model = build(
        preset,
        size="tiny",
        source_vocab_size=source.vocab_size,
        target_vocab_size=target.vocab_size,
    )
    return Translator(model, source, target, beam_size=beam_size, **settings)


def writing_toy():
    """The toy Translator (beam 2) with an output layer of unit normal weights and no bias,
    and GNMT's length penalty 2: greedy and beam search write outputs of many lengths (an
    untrained model's end at once)."""
    translator = toy_translator("bahdanau_rnnsearch", beam_size=2, length_penalty=2.0)
    rng = np.random.default_rng(0)
    for weight in translator.model.weights:
        if weight.path == "decoder/W_o/kernel":
            weight.assign(rng.normal(size=weight.shape).astype("float32"))
        elif weight.path == "decoder/W_o/bias":
            weight.assign(np.zeros(weight.shape, "float32"))
    return translator
