"""`Tokenizer`: the base class of every tokenizer in `zoo.text`.

A tokenizer is a `tf.Module`, so that its TensorFlow resources (SentencePiece model, lookup
tables) are tracked and exported with any SavedModel that holds it. Every method is made of
TensorFlow / tensorflow-text ops and works eagerly, inside `tf.function` and in `tf.data` maps.
"""

import json
import os

import numpy as np
import tensorflow as tf

from zoo.constants import END_ID, PAD_ID, RESERVED_TOKENS, START_ID
from zoo.json_files import write_json
from zoo.text.normalize import as_string_vector, normalize

CONFIG_FILE = "tokenizer.json"
FORMAT_VERSION = 1
DEFAULT_VOCAB_SIZE = 8000  # the subword tokenizers' and the recipes' vocabulary size


def clean_ids(ids):
    """Cuts each row at its first END_ID and drops PAD_ID / START_ID.

    Args:
        ids: `tf.RaggedTensor` or dense `tf.Tensor` `(B, T)` of integer ids (dense rows are
            right-padded with PAD_ID).

    Returns:
        `tf.RaggedTensor` `(B, None)` int32 holding the ids that are to be turned into text.
    """
    if isinstance(ids, tf.RaggedTensor):
        ids = ids.to_tensor(default_value=PAD_ID)
    else:
        ids = tf.convert_to_tensor(ids)
    if ids.shape.rank is not None and ids.shape.rank != 2:
        raise ValueError(f"ids must have shape (B, T), received shape {ids.shape}.")
    if not ids.dtype.is_integer:
        raise ValueError(f"ids must be integers, received dtype {ids.dtype.name}.")
    ids = tf.cast(ids, tf.int32)
    after_end = tf.cumsum(tf.cast(tf.equal(ids, END_ID), tf.int32), axis=1) > 0
    keep = ~after_end & tf.not_equal(ids, PAD_ID) & tf.not_equal(ids, START_ID)
    return tf.ragged.boolean_mask(ids, keep)


def check_vocab_size(vocab_size):
    """`vocab_size` as an int; ValueError unless it is an int above the 4 reserved ids."""
    if (
        isinstance(vocab_size, bool)
        or not isinstance(vocab_size, int | np.integer)
        or vocab_size <= len(RESERVED_TOKENS)
    ):
        raise ValueError(
            f"vocab_size must be an int greater than {len(RESERVED_TOKENS)} (the reserved ids), "
            f"received {vocab_size!r}."
        )
    return int(vocab_size)


class Tokenizer(tf.Module):
    """Base class: strings `(B,)` to ragged int32 ids and back, ids 0-3 as in `zoo.constants`.

    Subclasses set `kind`, implement `_tokenize(normalized_strings)`, `_detokenize(ragged_ids)`,
    `vocab_size`, `_save_files(directory)` and `_from_files(directory, config)`.

    Example:
        >>> tok = zoo.text.train_tokenizer("sentencepiece", sentences, vocab_size=500)
        >>> ids = tok.tokenize(tf.constant(["Ein Hund läuft."]))   # RaggedTensor (1, None)
        >>> tok.detokenize(ids).numpy()
        array([b'Ein Hund l\xc3\xa4uft.'], dtype=object)
    """

    kind = None
    samples_segmentations = False  # whether `sampling_tokenizer` can exist for this kind

    def __init__(self, lowercase=False, name=None):
        super().__init__(name=name)
        self.lowercase = bool(lowercase)

    # -- public API -------------------------------------------------------------------------
    def normalize(self, strings):
        """The tokenizer's normalisation (NFKC, spaces, optional lowercasing) of `strings`."""
        return normalize(as_string_vector(strings), self.lowercase)

    def tokenize(self, strings):
        """`tf.string` `(B,)` -> `tf.RaggedTensor` `(B, None)` int32 ids (no START/END added)."""
        strings = as_string_vector(strings)
        ids = self._tokenize(normalize(strings, self.lowercase))
        return tf.cast(ids, tf.int32)

    def detokenize(self, ids):
        """Ids `(B, T)` (ragged, or dense right-padded) -> `tf.string` `(B,)`.

        Each row is cut at its first END_ID; PAD_ID and START_ID are dropped.
        """
        return self._detokenize(clean_ids(ids))

    def sampling_tokenizer(self, alpha):
        """A tokenizer whose `tokenize` samples a segmentation (subword regularisation, Kudo
        2018). Only SentencePiece unigram models sample; the others raise ValueError."""
        raise ValueError(
            f"subword regularisation samples the segmentations of a SentencePiece unigram "
            f"model; this is a {self.kind!r} tokenizer, which has one segmentation per text. "
            "Train the tokenizers with --tokenizer sentencepiece, or set the subword "
            f"regularisation to 0 (received alpha={alpha!r})."
        )

    @property
    def vocab_size(self):
        raise NotImplementedError

    def save(self, directory):
        """Writes the tokenizer as plain files (`tokenizer.json` plus its model/vocab file)."""
        directory = os.fspath(directory)
        os.makedirs(directory, exist_ok=True)
        config = {"kind": self.kind, "format_version": FORMAT_VERSION}
        config.update(self.get_config())
        self._save_files(directory)
        write_json(os.path.join(directory, CONFIG_FILE), config)
        return directory

    @classmethod
    def load(cls, directory):
        """Restores a tokenizer written by `save` (exactly: same ids for the same text)."""
        config = read_config(directory)
        if cls.kind is not None and config["kind"] != cls.kind:
            raise ValueError(
                f"{os.path.join(directory, CONFIG_FILE)} holds a {config['kind']!r} tokenizer, "
                f"not a {cls.kind!r} one; use zoo.text.load_tokenizer(directory)."
            )
        return cls._from_files(os.fspath(directory), config)

    def get_config(self):
        return {"lowercase": self.lowercase, "vocab_size": int(self.vocab_size)}

    # -- subclass hooks ---------------------------------------------------------------------
    def _tokenize(self, strings):
        raise NotImplementedError

    def _detokenize(self, ids):
        raise NotImplementedError

    def _save_files(self, directory):
        raise NotImplementedError

    @classmethod
    def _from_files(cls, directory, config):
        raise NotImplementedError


def read_config(directory):
    """Reads and checks `tokenizer.json` in `directory`."""
    path = os.path.join(os.fspath(directory), CONFIG_FILE)
    if not os.path.isfile(path):
        raise ValueError(f"No tokenizer in {directory!s}: {path} does not exist.")
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except ValueError as error:  # invalid JSON or UTF-8: a damaged or truncated file
        raise ValueError(f"{path}: not a valid tokenizer config ({error}).") from None
    if (
        not isinstance(config, dict)
        or config.get("format_version") != FORMAT_VERSION
        or "kind" not in config
    ):
        raise ValueError(
            f"{path}: expected a zoo tokenizer config with format_version {FORMAT_VERSION} and "
            f"a 'kind', received {config!r}."
        )
    return config
