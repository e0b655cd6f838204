"""`SavedModelTranslator`: the `Translator` interface over an exported SavedModel."""

import os

import tensorflow as tf

from zoo.checks import check_int
from zoo.export.saved_model import load_exported, read_export_metadata
from zoo.search.defaults import BATCH_SIZE
from zoo.translation import as_text, check_sentences, run_in_batches, to_translation


class SavedModelTranslator:
    """Translates with a SavedModel written by `Translator.export` (e.g. `<out>/serving`).

    Offers `translate` and `translate_with_attention` like `zoo.translator.Translator`, but
    the beam size is the one chosen at export time: `beam_size=None` or that size uses the
    `translate` endpoint, `beam_size=1` the `translate_greedy` endpoint (when exported);
    any other size raises ValueError.

    Args:
        path: the SavedModel folder.
        batch_size: sentences per call of the endpoint.

    Example:
        >>> serving = SavedModelTranslator("saved_models/luong_local_general/serving")
        >>> serving.translate(["Ein Hund rennt."])  # doctest: +SKIP
        ['A dog is running.']
    """

    def __init__(self, path, batch_size=BATCH_SIZE):
        path = os.fspath(path)
        if not os.path.isfile(os.path.join(path, "saved_model.pb")):
            raise ValueError(f"{path} is not a SavedModel folder (no saved_model.pb).")
        self.path = path
        self.batch_size = check_int(None, "batch_size", batch_size)
        self.metadata = read_export_metadata(path)
        self.loaded = load_exported(path)
        self.beam_size = self.metadata.get("beam_size")

    def _endpoint(self, beam_size):
        if beam_size == "n_best":
            return self.loaded.translate_n_best
        if beam_size is None or beam_size == self.beam_size:
            return self.loaded.translate
        if beam_size == 1 and hasattr(self.loaded, "translate_greedy"):
            return self.loaded.translate_greedy
        raise ValueError(
            f"This SavedModel was exported with beam size {self.beam_size} (and greedy search "
            f"if translate_greedy exists); received beam_size={beam_size!r}. Use the model "
            "folder (Translator.from_directory) for other beam sizes."
        )

    def _run(self, sentences, beam_size, batch_size, progress, endpoint=None):
        """Runs `endpoint(strings, start)` (default: the endpoint of `beam_size`) over batches
        sorted by length (`zoo.translation.run_in_batches`, the `Translator`'s runner; here
        by characters: the tokenizers are inside the SavedModel's graph)."""
        sentences = check_sentences(sentences)
        if endpoint is None:
            chosen = self._endpoint(beam_size)
            endpoint = lambda strings, start: chosen(strings)  # noqa: E731
        batch_size = (
            self.batch_size if batch_size is None else check_int(None, "batch_size", batch_size)
        )
        return sentences, run_in_batches(sentences, batch_size, endpoint, progress)

    def translate_n_best(self, sentences, n_best=None, batch_size=None, progress=False):
        """Like `Translator.translate_n_best`, through the `translate_n_best` endpoint: a
        list of `[(translation, score), ...]` per sentence (`n_best`: at most the exported
        n, default all of them)."""
        exported = self.metadata.get("n_best")
        if not hasattr(self.loaded, "translate_n_best") or not exported:
            raise ValueError(
                f"The SavedModel in {self.path} has no translate_n_best endpoint; export it "
                "with n_best=N (Translator.export), or use the model folder."
            )
        n_best = exported if n_best is None else check_int(None, "n_best", n_best)
        if n_best > exported:
            raise ValueError(f"This SavedModel gives {exported} best at most; received {n_best}.")
        _, outputs = self._run(sentences, "n_best", batch_size, progress)
        return [
            [
                (as_text(text), float(score))
                for text, score in zip(
                    o["translations"][:n_best], o["scores"][:n_best], strict=True
                )
            ]
            for o in outputs
        ]

    def sample(self, sentences, seed=0, batch_size=None, progress=False):
        """Like `Translator.sample`, through the `sample` endpoint (its temperature, top_k and
        top_p were fixed at export, `metadata["sampling"]`): one drawn translation per
        sentence. The same sentences, seed and batch size give the same draws."""
        if not hasattr(self.loaded, "sample") or self.metadata.get("sampling") is None:
            raise ValueError(
                f"The SavedModel in {self.path} has no sample endpoint; export it with "
                "sampling={...} (Translator.export), or use the model folder."
            )
        seed = check_int(None, "seed", seed, minimum=0)

        def endpoint(strings, start):  # each batch its own seed
            return self.loaded.sample(strings, tf.constant(seed + start, tf.int64))

        _, outputs = self._run(sentences, None, batch_size, progress, endpoint=endpoint)
        return [as_text(out["translation"]) for out in outputs]

    def translate(
        self, sentences, beam_size=None, batch_size=None, progress=False, replace_unknown=False
    ):
        """Translates a list of str; returns a list of str in input order. With
        `replace_unknown`, the `translation_unk_replaced` output (`Translator.translate`'s
        rule without a dictionary)."""
        key = "translation_unk_replaced" if replace_unknown else "translation"
        if key not in self.metadata.get("outputs", [key]):
            raise ValueError(
                f"The SavedModel in {self.path} has no {key} output (exported with "
                "attention=False, or by an older zoo); export it again, or use the model folder."
            )
        _, outputs = self._run(sentences, beam_size, batch_size, progress)
        return [as_text(out[key]) for out in outputs]

    def translate_with_attention(self, sentences, beam_size=None, batch_size=None, progress=False):
        """Like `Translator.translate_with_attention`: a `Translation` per sentence."""
        if "attention" not in self.metadata.get("outputs", ["attention"]):
            raise ValueError(
                f"The SavedModel in {self.path} was exported with attention=False: it has no "
                "attention output. Use translate(), or export again with attention=True."
            )
        sentences, outputs = self._run(sentences, beam_size, batch_size, progress)
        return [to_translation(s, out) for s, out in zip(sentences, outputs, strict=True)]
