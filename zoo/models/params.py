"""The size of a translation model: its parameters and its matmul FLOPs.

Prints the parameter counts of the presets: `python -m zoo params` (or `zoo params`).

python -m zoo params --size paper
python -m zoo params --size base --bahdanau-vocab 8000 --luong-vocab 8000

`python -m zoo.models.params` runs the same command.

`flop_terms(model)` and `flops(model, source_lengths, target_lengths)` count the forward
matmul FLOPs of a built model (`build`) from its own layers' sizes; bench/train_speed.py
divides its measured rate by them (model-FLOP utilisation).
"""

import argparse
import math

from zoo.layers import LocalAttention
from zoo.models.gru_decoders import BahdanauDecoder, RNNEncDecDecoder
from zoo.models.luong_decoder import LuongDecoder
from zoo.models.presets import DEFAULT_VOCAB_SIZES, SIZES, build, family, presets

# What a FLOP term is counted per: a source token, a target token, a target token times a
# source position it attends, a sentence.
FLOP_UNITS = ("src", "tgt", "pair", "sent")


def parameter_counts(size, bahdanau_vocab, luong_vocab, names=None):
    """[(preset, vocabulary size, parameters)] for `names` (default: every preset)."""
    import keras

    vocab = {"bahdanau": bahdanau_vocab, "luong": luong_vocab}
    rows = []
    for name in names or presets():
        v = vocab[family(name)]
        model = build(name, size=size, source_vocab_size=v, target_vocab_size=v)
        rows.append((name, v, model.count_params()))
        del model
        keras.backend.clear_session()
    return rows


def _matmul(*weights):
    """Forward FLOPs of one vector times each of `weights` (a (k,) or (k, m) weight: 2km,
    a multiply and an add per entry)."""
    return sum(2 * math.prod(weight.shape) for weight in weights)


def _recurrent(layers):
    """Forward FLOPs per step of Keras GRU/LSTM layers or cells: input and recurrent kernels."""
    cells = [getattr(layer, "cell", layer) for layer in layers]
    return sum(_matmul(cell.kernel, cell.recurrent_kernel) for cell in cells)


def _luong_attention_terms(decoder):
    """The terms of a `LuongDecoder`'s attention (none without attention)."""
    attention = decoder.attention
    if attention is None:
        return {}
    scorer = attention.scorer if isinstance(attention, LocalAttention) else attention
    memory_dim = decoder.W_c.kernel.shape[0] - decoder.units
    terms = {}
    if scorer.score == "general":
        terms["attention keys h_s W_a^T"] = ("src", _matmul(scorer.W_a))
        terms["score h_t . key (per source pos)"] = ("pair", 2 * memory_dim)
    elif scorer.score == "dot":
        terms["score h_t . h_s (per source pos)"] = ("pair", 2 * memory_dim)
    elif scorer.score == "concat":
        query_dim, units = scorer.W_a.shape[0] - memory_dim, scorer.W_a.shape[1]
        terms["attention keys h_s W_a[D:]"] = ("src", 2 * memory_dim * units)
        terms["attention h_t W_a[:D]"] = ("tgt", 2 * query_dim * units)
        terms["score v_a . tanh (per source pos)"] = ("pair", _matmul(scorer.v_a))
    elif scorer.score == "location":
        terms[f"score h_t W_a ({scorer.W_a.shape[1]} positions)"] = ("tgt", _matmul(scorer.W_a))
    if isinstance(attention, LocalAttention) and attention.mode == "predictive":
        terms["position v_p . tanh(W_p h_t)"] = ("tgt", _matmul(attention.W_p, attention.v_p))
    terms["context sum_s a_s h_s"] = ("pair", 2 * memory_dim)
    terms["h~ = tanh(W_c [c; h])"] = ("tgt", _matmul(decoder.W_c.kernel))
    return terms


def _gru_decoder_terms(decoder):
    """The terms of a `BahdanauDecoder` or `RNNEncDecDecoder` up to its readout."""
    terms = {}
    if isinstance(decoder, BahdanauDecoder):
        attention = decoder.attention
        terms["attention keys U_a h_j"] = ("src", _matmul(attention.U_a))
        terms["s_0 = tanh(W_s bwd_h_1)"] = ("sent", _matmul(decoder.W_s.kernel))
        terms["attention W_a s_{i-1}"] = ("tgt", _matmul(attention.W_a))
        terms["attention v_a . tanh (per source pos)"] = ("pair", _matmul(attention.v_a))
        terms["context sum_j a_ij h_j"] = ("pair", 2 * attention.U_a.shape[0])
    else:
        terms["c = tanh(V h), s_0 = tanh(V' c)"] = (
            "sent",
            _matmul(decoder.V.kernel, decoder.V_prime.kernel),
        )
    terms["decoder GRU [E y; c]"] = ("tgt", _recurrent([decoder.cell]))
    readout = (decoder.U_o.kernel, decoder.V_o.kernel, decoder.C_o.kernel)
    terms["readout U_o s + V_o E y + C_o c"] = ("tgt", _matmul(*readout))
    return terms


def flop_terms(model):
    """The forward matmul FLOPs of a built translation model (`build`), read from its layers'
    sizes: {term: (unit, FLOPs per unit)}, each unit one of FLOP_UNITS. A (n x k) @ (k x m)
    product is 2nkm FLOPs; embedding lookups, elementwise work and the softmax's exp are not
    counted (no matmuls); the backward pass is about twice the forward. ValueError for a
    model whose decoder is none of zoo's."""
    encoder, decoder = model.get_layer("encoder"), model.get_layer("decoder")
    if isinstance(decoder, LuongDecoder):
        layers, kind = encoder.lstms, "LSTM"
    elif isinstance(decoder, (BahdanauDecoder, RNNEncDecDecoder)):
        layers, kind = [getattr(encoder, name) for name in encoder.GRU_NAMES], "GRU"
    else:
        raise ValueError(
            f"flop_terms counts zoo's translation models; {model.name!r} has a decoder of "
            f"type {type(decoder).__name__}."
        )
    terms = {f"encoder {kind}s ({len(layers)} layers)": ("src", _recurrent(layers))}
    if kind == "LSTM":
        feeding = " (input feeding)" if decoder.input_feeding else ""
        terms[f"decoder {len(decoder.lstms)}-layer LSTM{feeding}"] = (
            "tgt",
            _recurrent(decoder.lstms),
        )
        terms.update(_luong_attention_terms(decoder))
    else:
        terms.update(_gru_decoder_terms(decoder))
    vocab = decoder.vocab_size
    if decoder.tie_embeddings:
        if decoder.W_p is not None:
            width, dim = decoder.W_p.kernel.shape
            terms[f"output projection W_p ({width} to {dim})"] = (
                "tgt",
                _matmul(decoder.W_p.kernel),
            )
        terms[f"softmax layer E^T ({vocab}-way, tied)"] = (
            "tgt",
            _matmul(decoder.embedding.embeddings),
        )
    else:
        output = decoder.W_s if kind == "LSTM" else decoder.W_o
        terms[f"softmax layer {output.name} ({vocab}-way)"] = ("tgt", _matmul(output.kernel))
    return terms


def flop_units(model, source_lengths, target_lengths):
    """{unit: count} of FLOP_UNITS in sentence pairs of these token lengths (two sequences
    of ints, padding left out): tokens, sentences and attended (target, source) positions,
    at most 2D + 1 source positions per target token under local attention of window D."""
    if len(source_lengths) != len(target_lengths):
        raise ValueError(
            f"flop_units needs a target length per source length; got {len(source_lengths)} "
            f"and {len(target_lengths)}."
        )
    attention = getattr(model.get_layer("decoder"), "attention", None)
    span = 2 * attention.window + 1 if isinstance(attention, LocalAttention) else None
    pairs = zip(source_lengths, target_lengths, strict=True)
    return {
        "src": float(sum(source_lengths)),
        "tgt": float(sum(target_lengths)),
        "pair": float(
            sum(int(t) * (int(s) if span is None else min(int(s), span)) for s, t in pairs)
        ),
        "sent": float(len(source_lengths)),
    }


def flops(model, source_lengths, target_lengths):
    """Forward matmul FLOPs (`flop_terms`) of the model on sentence pairs of these token
    lengths, trained with teacher forcing (`flop_units`)."""
    units = flop_units(model, source_lengths, target_lengths)
    return sum(units[unit] * value for unit, value in flop_terms(model).values())


def main(argv=None, prog="python -m zoo params"):
    """The command: `argv` its arguments, `prog` how the usage line names it."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Print the parameter count of each preset."
    )
    parser.add_argument(
        "--size", choices=SIZES, default="paper", help="preset size (default: %(default)s)"
    )
    parser.add_argument(
        "--bahdanau-vocab",
        type=int,
        default=DEFAULT_VOCAB_SIZES["bahdanau"],
        help="source and target vocabulary size of the Bahdanau presets (default: %(default)s)",
    )
    parser.add_argument(
        "--luong-vocab",
        type=int,
        default=DEFAULT_VOCAB_SIZES["luong"],
        help="source and target vocabulary size of the Luong presets (default: %(default)s)",
    )
    parser.add_argument(
        "--preset",
        action="append",
        choices=presets(),
        help="only this preset (repeatable; default: all)",
    )
    args = parser.parse_args(argv)
    rows = parameter_counts(args.size, args.bahdanau_vocab, args.luong_vocab, args.preset)
    width = max(len(name) for name, _, _ in rows)
    print(f"{'preset':<{width}}  {'vocab':>7}  {'parameters':>13}")
    for name, vocab, count in rows:
        print(f"{name:<{width}}  {vocab:>7}  {count:>13,}")


if __name__ == "__main__":
    main(prog="python -m zoo.models.params")
