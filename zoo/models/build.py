"""Builders of the papers' translation models, one per architecture family.

Each builder takes explicit keyword arguments (no option dictionaries) and returns a
functional `keras.Model` with inputs {"source_ids", "target_ids"} and logits as output,
containing one layer named "encoder" and one named "decoder" (docs/design.md).
`zoo.models.build(name, size, ...)` picks a builder and its sizes from `presets.py`.
"""

import keras

from zoo.layers import LocalAttention, LuongAttention
from zoo.models.gru_decoders import BahdanauDecoder, RNNEncDecDecoder
from zoo.models.gru_encoders import BidirectionalGRUEncoder, GRUEncoder
from zoo.models.luong_decoder import LuongDecoder
from zoo.models.stacked_lstm_encoder import StackedLSTMEncoder
from zoo.models.tying import ThreeWayTiedModel, check_three_way

LUONG_ATTENTIONS = ("none", "global", "local_m", "local_p")
TIE_CHOICES = (False, True, "three_way")  # the builders' tie_embeddings


def model_dropout(model):
    """The dropout rate of a translation model: its "encoder" layer's `dropout` (0.0 when
    it has none, or no layer of that name)."""
    try:
        return float(getattr(model.get_layer("encoder"), "dropout", 0.0) or 0.0)
    except ValueError:
        return 0.0


def _inputs():
    source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
    target_ids = keras.Input(shape=(None,), dtype="int32", name="target_ids")
    return source_ids, target_ids


def _three_way(tie_embeddings, source_vocab_size, target_vocab_size):
    """Whether `tie_embeddings` (one of TIE_CHOICES) ties the source embeddings too."""
    if tie_embeddings not in TIE_CHOICES:
        raise ValueError(f"tie_embeddings must be one of {TIE_CHOICES}; got {tie_embeddings!r}.")
    if tie_embeddings != "three_way":
        return False
    check_three_way(source_vocab_size, target_vocab_size)
    return True


def _model(encoder, decoder, name):
    source_ids, target_ids = _inputs()
    memory, source_mask, encoder_states = encoder(source_ids)
    logits = decoder(target_ids, memory, source_mask, encoder_states)
    model_class = ThreeWayTiedModel if encoder.shared_embedding else keras.Model
    return model_class(
        inputs={"source_ids": source_ids, "target_ids": target_ids}, outputs=logits, name=name
    )


def build_bahdanau_rnnsearch(
    source_vocab_size,
    target_vocab_size,
    *,
    embedding_dim,
    encoder_units,
    units,
    maxout_units,
    attention_units,
    dropout=0.0,
    tie_embeddings=False,
    name="bahdanau_rnnsearch",
):
    """RNNsearch (Bahdanau et al. 2014 §3, appendix A.2): bidirectional GRU encoder with
    `encoder_units` per direction, GRU decoder of `units` with additive attention of
    `attention_units` and a maxout deep output of `maxout_units`; `dropout` on both
    embeddings and the maxout output (not in the paper; 0 reproduces it); `tie_embeddings`:
    the output layer reads the target embeddings (Press and Wolf 2017, `BahdanauDecoder`)."""
    encoder = BidirectionalGRUEncoder(
        source_vocab_size,
        embedding_dim,
        encoder_units,
        dropout=dropout,
        shared_embedding=_three_way(tie_embeddings, source_vocab_size, target_vocab_size),
        name="encoder",
    )
    decoder = BahdanauDecoder(
        target_vocab_size,
        embedding_dim,
        units,
        maxout_units,
        attention_units=attention_units,
        dropout=dropout,
        tie_embeddings=bool(tie_embeddings),
        name="decoder",
    )
    return _model(encoder, decoder, name)


def build_bahdanau_rnnencdec(
    source_vocab_size,
    target_vocab_size,
    *,
    embedding_dim,
    encoder_units,
    units,
    maxout_units,
    dropout=0.0,
    tie_embeddings=False,
    name="bahdanau_rnnencdec",
):
    """RNNencdec (Cho et al. 2014, Bahdanau et al. 2014's baseline): GRU encoder whose last
    state gives one fixed context c = tanh(V h_Tx) for a GRU decoder with maxout output;
    `tie_embeddings`: its output layer reads the target embeddings (`RNNEncDecDecoder`)."""
    encoder = GRUEncoder(
        source_vocab_size,
        embedding_dim,
        encoder_units,
        dropout=dropout,
        shared_embedding=_three_way(tie_embeddings, source_vocab_size, target_vocab_size),
        name="encoder",
    )
    decoder = RNNEncDecDecoder(
        target_vocab_size,
        embedding_dim,
        units,
        maxout_units,
        dropout=dropout,
        tie_embeddings=bool(tie_embeddings),
        name="decoder",
    )
    return _model(encoder, decoder, name)


def luong_attention_layer(attention, score, window, max_length, init_scale=0.0):
    """The attention layer of a Luong configuration (None for attention="none")."""
    if attention not in LUONG_ATTENTIONS:
        raise ValueError(f"attention must be one of {LUONG_ATTENTIONS}, got {attention!r}.")
    if attention == "none":
        return None
    if attention == "global":
        return LuongAttention(
            score=score,
            max_length=max_length if score == "location" else None,
            init_scale=init_scale,
            name="attention",
        )
    mode = "monotonic" if attention == "local_m" else "predictive"
    return LocalAttention(
        window=window, mode=mode, score=score, init_scale=init_scale, name="attention"
    )


def build_luong(
    source_vocab_size,
    target_vocab_size,
    *,
    embedding_dim,
    units,
    num_layers,
    dropout,
    reverse_source,
    bidirectional,
    init_scale,
    attention,
    score,
    window,
    max_length,
    input_feeding,
    tie_embeddings=False,
    name="luong",
):
    """Luong et al. 2015: stacked LSTM encoder-decoder (§2, §4.1) with `attention` one of
    "none" (the base system), "global" (§3.1, score dot/general/concat/location; location
    addresses at most `max_length` source words), "local_m" or "local_p" (§3.2, window D =
    `window`), and input feeding (§3.3); `tie_embeddings`: the output layer reads the target
    embeddings (Press and Wolf 2017, `LuongDecoder`), "three_way" the source's too
    (`ThreeWayTiedModel`, one vocabulary)."""
    encoder = StackedLSTMEncoder(
        source_vocab_size,
        embedding_dim,
        units,
        num_layers=num_layers,
        dropout=dropout,
        reverse_source=reverse_source,
        init_scale=init_scale,
        bidirectional=bidirectional,
        shared_embedding=_three_way(tie_embeddings, source_vocab_size, target_vocab_size),
        name="encoder",
    )
    decoder = LuongDecoder(
        target_vocab_size,
        embedding_dim,
        units,
        num_layers=num_layers,
        dropout=dropout,
        attention=luong_attention_layer(attention, score, window, max_length, init_scale),
        input_feeding=input_feeding,
        init_scale=init_scale,
        tie_embeddings=bool(tie_embeddings),
        name="decoder",
    )
    return _model(encoder, decoder, name)
