"""zoo.translator: strings in, translations out, with a trained model and its two tokenizers.

Everything between text and text runs as one TensorFlow graph per beam size: source
tokenisation (`zoo.text.Preprocessor`), greedy/beam search (`zoo.search.search`) and target
detokenisation (`zoo.translator.graph`). The same graph is what `Translator.export` writes
as a SavedModel, so a process that loads it (with TensorFlow and tensorflow-text only) gets
the same translations. `Translator.save` and `Translator.from_directory` write and read an
output folder (`zoo.translator.output_folder`: model.keras, the tokenizers, translator.json,
serving/). A Translator keeps its most recently used graphs (`zoo.translator.translator`);
sampling runs one graph for every seed and setting (`zoo.translator.sampling`), and
`Translator.score` gives given translations' log-probabilities (`zoo.translator.scoring`).
On JAX and PyTorch the same methods run in stages (`zoo.translator.staged`): the tokenizers
in TensorFlow on the CPU, the model and the search on the backend, the ids between them as
NumPy arrays; the export stays TensorFlow (`output_folder.EXPORT_COMMAND`).

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

from zoo.translator.output_folder import (
    CONFIG_FILE,
    MODEL_FILE,
    SERVING_DIR,
    SETTINGS,
    SOURCE_TOKENIZER_DIR,
    TARGET_TOKENIZER_DIR,
)
from zoo.translator.translator import Translator

__all__ = [
    "CONFIG_FILE",
    "MODEL_FILE",
    "SERVING_DIR",
    "SETTINGS",
    "SOURCE_TOKENIZER_DIR",
    "TARGET_TOKENIZER_DIR",
    "Translator",
]
