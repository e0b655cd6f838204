"""The toy Translator whose searches write outputs of many lengths, for the export tests
(`writing_export` in conftest.py exports it)."""

import numpy as np
from translator_toy import MIXED, read_lines, toy_translator

CHUNK = 8  # writing_export's chunk_size
SENTENCES = read_lines("val.de", 30) + MIXED  # 37 sentences: 5 chunks of CHUNK at most


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
