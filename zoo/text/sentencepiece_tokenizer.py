"""`SentencePieceTokenizer`: subword tokenizer (the default), trained with `sentencepiece`,
run in the graph by `tensorflow_text.SentencepieceTokenizer`."""

import hashlib
import io
import os
import re

import sentencepiece as spm
import tensorflow as tf
import tensorflow_text as tf_text
from sentencepiece import sentencepiece_model_pb2
from tensorflow_text.python.ops import sentencepiece_tokenizer as _tf_text_sp

from zoo.checks import check_non_negative_float
from zoo.constants import (
    END_ID,
    END_TOKEN,
    PAD_ID,
    PAD_TOKEN,
    RESERVED_TOKENS,
    START_ID,
    START_TOKEN,
    UNK_ID,
    UNK_TOKEN,
)
from zoo.text.normalize import normalize_texts
from zoo.text.tokenizer import DEFAULT_VOCAB_SIZE, Tokenizer, check_vocab_size

MODEL_FILE = "sentencepiece.model"
MODEL_TYPES = ("unigram", "bpe")


class _SharedModelResource(_tf_text_sp._SentencepieceModelResource):
    """tensorflow-text's SentencePiece model resource, given a `shared_name`.

    tensorflow-text 2.21 creates the model as a kernel-owned resource with no shared name
    (its TODO b/318839908). Two consequences this class fixes: two models in one SavedModel
    collapse into the first one after loading (so a source and a target tokenizer exported
    together would both use the source model), and `tf.random.set_seed` (which clears
    TensorFlow's kernel cache) destroys the model under a live tokenizer. A shared name
    derived from the model's bytes keeps each model distinct and alive.
    """

    def _create_resource(self):
        shared_name = "zoo_sentencepiece_" + hashlib.sha256(self._model).hexdigest()[:16]
        with tf.name_scope(self._name or "SentenceTokenizerInitializer"):
            return _tf_text_sp.gen_sentencepiece_tokenizer.sentencepiece_op(
                model=self._model, shared_name=shared_name
            )


def _sentencepiece_op_tokenizer(model_proto, nbest_size=0, alpha=1.0):
    tokenizer = tf_text.SentencepieceTokenizer(
        model=model_proto, out_type=tf.int32, nbest_size=nbest_size, alpha=alpha
    )
    tokenizer._model_resource = _SharedModelResource(model_proto, None)
    return tokenizer


class SentencePieceTokenizer(Tokenizer):
    """Subword tokenizer: a SentencePiece model (Kudo & Richardson, 2018) run in the graph.

    Detokenisation is lossless for normalised text (`detokenize(tokenize(x)) ==
    normalize(x)`) as long as every character was seen in training (unseen characters become
    UNK_ID and are shown as " ⁇ "; pass `byte_fallback=True` to `train` to avoid this).

    Args:
        model_proto: the serialized SentencePiece model (`bytes`, the `.model` file), trained
            with pad_id=0, bos_id=1, eos_id=2, unk_id=3.
        lowercase: lowercase text before tokenizing (must match how the model was trained).

    Shapes: `tokenize` `(B,)` string -> ragged `(B, None)` int32; `detokenize` back to `(B,)`.

    Example:
        >>> tok = SentencePieceTokenizer.train(train_sentences, vocab_size=8000)
        >>> tok.tokenize(["Zwei Hunde spielen."])
        <tf.RaggedTensor [[...]]>
    """

    kind = "sentencepiece"
    samples_segmentations = True  # unigram models; BPE ones refuse (`sampling_tokenizer`)

    def __init__(self, model_proto, lowercase=False, name=None):
        super().__init__(lowercase=lowercase, name=name)
        if not isinstance(model_proto, bytes):
            raise ValueError(
                f"model_proto must be the serialized model (bytes), received {type(model_proto)}."
            )
        processor = _processor(model_proto)
        reserved = {PAD_ID: PAD_TOKEN, START_ID: START_TOKEN, END_ID: END_TOKEN, UNK_ID: UNK_TOKEN}
        found = {i: processor.id_to_piece(i) for i in reserved if i < processor.get_piece_size()}
        if found != reserved:
            raise ValueError(
                f"The SentencePiece model must reserve ids {reserved}, received {found}. Train it "
                "with SentencePieceTokenizer.train (pad_id=0, bos_id=1, eos_id=2, unk_id=3)."
            )
        self.model_proto = model_proto
        self._vocab_size = processor.get_piece_size()
        self._sp = _sentencepiece_op_tokenizer(model_proto)
        self.sampling_alpha = 0.0  # > 0 on the tokenizers of `sampling_tokenizer` only

    @classmethod
    def train(
        cls,
        sentences,
        vocab_size=DEFAULT_VOCAB_SIZE,
        model_type="unigram",
        lowercase=False,
        character_coverage=1.0,
        byte_fallback=False,
        max_sentences=2_000_000,
        seed=0,
    ):
        """Trains a SentencePiece model on `sentences` (an iterable of `str`).

        Args:
            sentences: training text, one sentence per item (the training split only).
            vocab_size: size of the vocabulary, reserved ids included. A soft limit: a small
                corpus may give a few pieces fewer.
            model_type: "unigram" or "bpe".
            lowercase: lowercase before training and tokenizing.
            character_coverage: share of characters the model must cover (1.0: all).
            byte_fallback: spell unknown characters as UTF-8 bytes instead of UNK_ID.
            max_sentences: at most this many sentences (a seeded sample) feed the trainer.
            seed: seed of SentencePiece's random generator.
        """
        if model_type not in MODEL_TYPES:
            raise ValueError(f"model_type must be one of {MODEL_TYPES}, received {model_type!r}.")
        vocab_size = check_vocab_size(vocab_size)
        texts = [t for t in normalize_texts(sentences, lowercase) if t]
        if not texts:
            raise ValueError("Cannot train a SentencePiece model on no (non-empty) sentences.")
        if hasattr(spm, "set_random_generator_seed"):
            spm.set_random_generator_seed(int(seed))
        model = io.BytesIO()
        _train(
            vocab_size,
            sentence_iterator=iter(texts),
            model_writer=model,
            model_type=model_type,
            pad_id=PAD_ID,
            bos_id=START_ID,
            eos_id=END_ID,
            unk_id=UNK_ID,
            pad_piece=PAD_TOKEN,
            bos_piece=START_TOKEN,
            eos_piece=END_TOKEN,
            unk_piece=UNK_TOKEN,
            normalization_rule_name="nfkc",
            character_coverage=float(character_coverage),
            byte_fallback=bool(byte_fallback),
            hard_vocab_limit=False,
            input_sentence_size=int(max_sentences),
            shuffle_input_sentence=True,
            num_threads=min(os.cpu_count() or 1, 16),
            minloglevel=2,
        )
        return cls(model.getvalue(), lowercase=lowercase)

    @property
    def vocab_size(self):
        return self._vocab_size

    @property
    def model_type(self):
        """The SentencePiece model's type: "unigram", "bpe" (or "word", "char")."""
        model = sentencepiece_model_pb2.ModelProto()
        model.ParseFromString(self.model_proto)
        return sentencepiece_model_pb2.TrainerSpec.ModelType.Name(
            model.trainer_spec.model_type
        ).lower()

    def sampling_tokenizer(self, alpha):
        """A tokenizer of the same model whose `tokenize` samples a segmentation each call:
        subword regularisation (Kudo 2018), unigram language-model sampling over all the
        segmentations (`nbest_size=-1`), each one's probability raised to the power `alpha`
        (smaller: more varied segmentations; Kudo used 0.1 to 0.5). Every sampled segmentation
        detokenizes to the same text. Training data only: translation uses this tokenizer.

        SentencePiece's sampler (inside tensorflow-text) takes no seed: the samples differ
        from run to run even where everything else is seeded.

        Raises ValueError for `alpha` not > 0 and for a BPE model (its sampling would be
        BPE-dropout, another method with another meaning of `alpha`).
        """
        alpha = check_non_negative_float("sampling_tokenizer", "alpha", alpha)
        if alpha == 0:
            raise ValueError("sampling_tokenizer: alpha must be > 0 (0 means no sampling).")
        if self.model_type != "unigram":
            raise ValueError(
                f"subword regularisation samples the segmentations of a unigram SentencePiece "
                f"model; this one is a {self.model_type!r} model (BPE-dropout is not offered). "
                "Train the tokenizers with model_type='unigram' (the default), or set the "
                "subword regularisation to 0."
            )
        sampler = type(self)(self.model_proto, lowercase=self.lowercase)
        sampler._sp = _sentencepiece_op_tokenizer(self.model_proto, nbest_size=-1, alpha=alpha)
        sampler.sampling_alpha = alpha
        return sampler

    def _call_sp(self, method, *args):
        return getattr(self._sp, method)(*args)

    def id_to_token(self, ids):
        """Ids (any shape) -> their pieces (`tf.string`, same shape)."""
        return self._call_sp("id_to_string", ids)

    def _tokenize(self, strings):
        return self._call_sp("tokenize", strings)

    def _detokenize(self, ids):
        return self._call_sp("detokenize", ids)

    def _save_files(self, directory):
        with open(os.path.join(directory, MODEL_FILE), "wb") as f:
            f.write(self.model_proto)

    @classmethod
    def _from_files(cls, directory, config):
        path = os.path.join(directory, MODEL_FILE)
        if not os.path.isfile(path):
            raise ValueError(f"Missing SentencePiece model file {path}.")
        with open(path, "rb") as f:
            model_proto = f.read()
        try:
            return cls(model_proto, lowercase=config["lowercase"])
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None


def _processor(model_proto):
    """A `SentencePieceProcessor` of `model_proto`; ValueError when it is no model."""
    if model_proto:
        try:
            return spm.SentencePieceProcessor(model_proto=model_proto)
        except RuntimeError:  # sentencepiece's message names only its own source line
            pass
    raise ValueError(
        f"not a valid SentencePiece model ({len(model_proto):,} bytes: damaged, truncated or "
        "another kind of file); save the tokenizer again, or copy its folder again."
    )


def _train(vocab_size, **options):
    """`SentencePieceTrainer.train(vocab_size=vocab_size, **options)`, its errors as
    ValueErrors that say what to change."""
    try:
        spm.SentencePieceTrainer.train(vocab_size=int(vocab_size), **options)
    except RuntimeError as error:
        found = re.search(r"smaller than required_chars\. \d+ vs (\d+)", str(error))
        if found:
            needed = int(found.group(1))
            raise ValueError(
                f"vocab_size {vocab_size} is too small for these sentences: SentencePiece needs "
                f"at least {needed} pieces (the {len(RESERVED_TOKENS)} reserved ids and one per "
                f"character of the training text); use a vocab_size (--vocab-size) of "
                f"{needed} or more."
            ) from None
        reason = str(error).split("] ", 1)[-1].strip() or str(error)
        raise ValueError(
            f"SentencePiece cannot train with vocab_size {vocab_size}: {reason}"
        ) from None
