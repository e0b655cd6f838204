"""zoo.models: the encoders, decoders and translation models of Bahdanau et al. (2014) and
Luong et al. (2015), and `build(name, size, ...)` for the papers' presets.

    model = zoo.models.build("bahdanau_rnnsearch", size="base",
                             source_vocab_size=30000, target_vocab_size=30000)
    logits = model({"source_ids": source_ids, "target_ids": target_ids})  # (B, Tt, V)
"""

from zoo.models.build import (
    build_bahdanau_rnnencdec,
    build_bahdanau_rnnsearch,
    build_luong,
    model_dropout,
)
from zoo.models.decoder_base import DecoderBase
from zoo.models.ensemble import Ensemble
from zoo.models.gru_decoders import BahdanauDecoder, Maxout, RNNEncDecDecoder
from zoo.models.gru_encoders import BidirectionalGRUEncoder, GRUEncoder
from zoo.models.luong_decoder import LuongDecoder
from zoo.models.presets import (
    SIZES,
    TIE_EMBEDDINGS,
    attention_presets,
    build,
    family,
    preset_arguments,
    presets,
)
from zoo.models.recurrence import reverse_padded
from zoo.models.stacked_lstm_encoder import StackedLSTMEncoder
from zoo.models.tying import ThreeWayTiedModel, with_tied_embeddings

__all__ = [
    "model_dropout",
    "BahdanauDecoder",
    "BidirectionalGRUEncoder",
    "DecoderBase",
    "Ensemble",
    "GRUEncoder",
    "LuongDecoder",
    "Maxout",
    "RNNEncDecDecoder",
    "SIZES",
    "TIE_EMBEDDINGS",
    "attention_presets",
    "StackedLSTMEncoder",
    "ThreeWayTiedModel",
    "build",
    "build_bahdanau_rnnencdec",
    "build_bahdanau_rnnsearch",
    "build_luong",
    "family",
    "preset_arguments",
    "presets",
    "reverse_padded",
    "with_tied_embeddings",
]
