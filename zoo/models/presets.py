"""The papers' configurations as named presets, each in three sizes.

Sizes (the values: the dicts below, which docs/training.md tabulates):
- `tiny`: unit tests (Luong: a bidirectional first layer and input feeding, so that the
  tests run both).
- `base`: trains on one machine. Bahdanau: dropout on the embeddings and the maxout output
  (the paper mentions none; small corpora such as Multi30k need it). Luong: the paper's
  uniform initialisation and window, and three departures from the paper: a bidirectional
  first encoder layer (half the units per direction), no input feeding (the decoder then
  runs in one pass) and more dropout. docs/training.md says why, docs/papers.md compares
  them with the paper's choices.
- `paper`: the papers' sizes: Bahdanau et al. 2014 appendix A.2/B and Luong et al. 2015
  section 4.1 (a reversed source, a unidirectional encoder). `build` takes the vocabulary
  sizes (the papers': DEFAULT_VOCAB_SIZES).

Every preset takes `tie_embeddings` (default `TIE_EMBEDDINGS`, off: the papers' separate
output matrix; on at `base` for `TIED_AT_BASE`, the main job's preset, where it trained the
better model on Multi30k in two seeds, docs/training.md): True makes the decoder's output
layer read the target embedding matrix (Press and Wolf 2017), through a projection to the
embedding size where the readout is larger or smaller (Luong's h~ has `units` features,
Bahdanau's maxout output `maxout_units`); "three_way" reads the source with it too (equal
vocabulary sizes).

Example:
    model = zoo.models.build("luong_local_p_general", size="base", source_vocab_size=8000,
                             target_vocab_size=8000, input_feeding=False)
"""

from zoo.layers.local_attention import WINDOW
from zoo.models.build import build_bahdanau_rnnencdec, build_bahdanau_rnnsearch, build_luong

SIZES = ("tiny", "base", "paper")
DEFAULT_VOCAB_SIZES = {"bahdanau": 30000, "luong": 50000}  # the papers' vocabularies
TIE_EMBEDDINGS = False  # the papers' models have an output matrix of their own
TIED_AT_BASE = ("luong_local_p_general",)  # presets whose base size ties them (see above)


# The papers' sizes, and the other sizes as departures from them (docstring above).
_RNNSEARCH_PAPER = dict(
    embedding_dim=620,
    encoder_units=1000,
    units=1000,
    maxout_units=500,
    attention_units=1000,
    dropout=0.0,
)
_RNNSEARCH_SIZES = {
    "tiny": dict(embedding_dim=16, encoder_units=32, units=32, maxout_units=16, attention_units=32),
    "base": dict(
        embedding_dim=256,
        encoder_units=256,
        units=512,
        maxout_units=256,
        attention_units=512,
        dropout=0.3,
    ),
    "paper": {},
}
_RNNENCDEC_PAPER = dict(
    embedding_dim=620, encoder_units=1000, units=1000, maxout_units=500, dropout=0.0
)
_RNNENCDEC_SIZES = {
    "tiny": dict(embedding_dim=16, encoder_units=32, units=32, maxout_units=16),
    "base": dict(embedding_dim=256, encoder_units=512, units=512, maxout_units=256, dropout=0.3),
    "paper": {},
}
_LUONG_PAPER = dict(
    embedding_dim=1000,
    units=1000,
    num_layers=4,
    dropout=0.2,
    reverse_source=True,
    bidirectional=False,
    input_feeding=True,
    init_scale=0.1,
    window=WINDOW,
    max_length=100,  # location attention's positions: Luong et al. trained on <= 50 words
)
_LUONG_SIZES = {
    "tiny": dict(
        embedding_dim=16, units=32, num_layers=2, bidirectional=True, init_scale=0.0, max_length=32
    ),
    "base": dict(
        embedding_dim=256,
        units=512,
        num_layers=2,
        dropout=0.3,
        bidirectional=True,
        input_feeding=False,
    ),
    "paper": {},
}


def _sized(paper, departures):
    """sizes(size) -> a new dict: the paper's values with the size's departures."""

    def sizes(size):
        return {**paper, "tie_embeddings": TIE_EMBEDDINGS, **departures[size]}

    return sizes


_bahdanau_rnnsearch = _sized(_RNNSEARCH_PAPER, _RNNSEARCH_SIZES)
_bahdanau_rnnencdec = _sized(_RNNENCDEC_PAPER, _RNNENCDEC_SIZES)
_luong_sizes = _sized(_LUONG_PAPER, _LUONG_SIZES)


def _luong(attention, score, input_feeding):
    def sizes(size):
        values = _luong_sizes(size)  # its input_feeding: the size's choice for attention
        values["input_feeding"] = input_feeding and values["input_feeding"]
        if size == "base" and f"luong_{attention}_{score}" in TIED_AT_BASE:
            values["tie_embeddings"] = True
        return dict(**values, attention=attention, score=score)

    return sizes


# name -> (builder, family, sizes(size) -> the builder's keyword arguments)
_PRESETS = {
    "bahdanau_rnnencdec": (build_bahdanau_rnnencdec, "bahdanau", _bahdanau_rnnencdec),
    "bahdanau_rnnsearch": (build_bahdanau_rnnsearch, "bahdanau", _bahdanau_rnnsearch),
    "luong_base": (build_luong, "luong", _luong("none", "general", False)),
    "luong_global_dot": (build_luong, "luong", _luong("global", "dot", True)),
    "luong_global_general": (build_luong, "luong", _luong("global", "general", True)),
    "luong_global_concat": (build_luong, "luong", _luong("global", "concat", True)),
    "luong_global_location": (build_luong, "luong", _luong("global", "location", True)),
    "luong_local_m_dot": (build_luong, "luong", _luong("local_m", "dot", True)),
    "luong_local_m_general": (build_luong, "luong", _luong("local_m", "general", True)),
    "luong_local_p_dot": (build_luong, "luong", _luong("local_p", "dot", True)),
    "luong_local_p_general": (build_luong, "luong", _luong("local_p", "general", True)),
}


def presets():
    """The preset names, e.g. ["bahdanau_rnnencdec", "bahdanau_rnnsearch", "luong_base", ...]."""
    return list(_PRESETS)


def attention_presets():
    """The presets with attention (every one but the fixed-context baselines), in order:
    ["bahdanau_rnnsearch", "luong_global_dot", ..., "luong_local_p_general"]."""
    return [
        name
        for name, (builder, _, sizes) in _PRESETS.items()
        if builder is build_bahdanau_rnnsearch or sizes("tiny").get("attention", "none") != "none"
    ]


def family(name):
    """ "bahdanau" or "luong"."""
    _check_name(name)
    return _PRESETS[name][1]


def _check_name(name):
    if name not in _PRESETS:
        raise ValueError(f"Unknown preset {name!r}; valid presets: {', '.join(_PRESETS)}.")


def preset_arguments(name, size="base"):
    """The keyword arguments a preset passes to its builder at `size` (a new dict)."""
    _check_name(name)
    if size not in SIZES:
        raise ValueError(f"Unknown size {size!r} for preset {name!r}; valid sizes: {SIZES}.")
    return _PRESETS[name][2](size)


def build(name, size="base", source_vocab_size=None, target_vocab_size=None, **overrides):
    """Builds preset `name` at `size` as a functional keras.Model.

    Args:
        name: one of `presets()`.
        size: "tiny", "base" or "paper".
        source_vocab_size, target_vocab_size: vocabulary sizes (ids 0-3 reserved).
        **overrides: any of the preset's arguments (see `preset_arguments(name)`), e.g.
            embedding_dim, units, num_layers, dropout, input_feeding, reverse_source, window,
            score, tie_embeddings. An unknown name raises ValueError listing the valid ones.

    Returns:
        keras.Model: {"source_ids": (B, Ts) int32, "target_ids": (B, Tt) int32} -> logits
        (B, Tt, target_vocab_size), with layers "encoder" and "decoder".
    """
    arguments = preset_arguments(name, size)
    for label, value in (
        ("source_vocab_size", source_vocab_size),
        ("target_vocab_size", target_vocab_size),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 5:
            raise ValueError(
                f"build({name!r}) needs {label}, an int > 4 (ids 0-3 are reserved); got {value!r}."
            )
    unknown = sorted(set(overrides) - set(arguments))
    if unknown:
        raise ValueError(
            f"Unknown override(s) {unknown} for preset {name!r}; valid overrides: "
            f"{', '.join(sorted(arguments))}."
        )
    arguments.update(overrides)
    builder = _PRESETS[name][0]
    return builder(source_vocab_size, target_vocab_size, name=name, **arguments)
