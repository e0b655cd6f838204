"""Bahdanau et al. (2014): RNNsearch, the first attention-based translation model.

Neural Machine Translation by Jointly Learning to Align and Translate (Bahdanau, Cho and
Bengio, ICLR 2015, https://arxiv.org/abs/1409.0473), section 3 and appendix A:

    h_j = [fwd_h_j; bwd_h_j]                     bidirectional GRU encoder (section 3.2)
    e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)     alignment model (eq. 6, appendix A.1.2)
    a_ij = softmax_j(e_ij),  c_i = sum_j a_ij h_j
    s_i = GRU(s_{i-1}, [E y_{i-1}; c_i]),  s_0 = tanh(W_s bwd_h_1)
    t_i = maxout(U_o s_{i-1} + V_o E y_{i-1} + C_o c_i),  p(y_i | ...) = softmax(W_o t_i)

trained with Adadelta (rho 0.95, eps 1e-6) and gradient norm clipping at 1 (appendix
A.2.2). Table 1 (WMT'14 English->French, all test sentences): RNNsearch-30 21.50 BLEU,
RNNsearch-50 26.75 BLEU, against 13.93 / 17.82 for RNNencdec (bahdanau_rnnencdec.py).
The output folder's bleu_by_length.png is the paper's figure 2, attention_*.png its
figure 3.

Measured results of the recipes: docs/papers.md.

    python recipes/bahdanau_rnnsearch.py                # Multi30k de->en, --size base
    python recipes/bahdanau_rnnsearch.py --optimizer paper  # the paper's Adadelta training
"""
# ruff: noqa: E402  (the imports that load TensorFlow follow its quiet start)

import zoo_startup

zoo_startup.quiet_tensorflow_start()  # first: no CUDA start-up lines on a CPU-only machine

import keras

import zoo.workflow
from zoo.models import BahdanauDecoder, BidirectionalGRUEncoder

PRESET = "bahdanau_rnnsearch"  # the zoo.models preset this recipe builds in the open


def build_model(args, source_vocab_size, target_vocab_size):
    hp = zoo.workflow.hyperparameters(args, PRESET)  # sizes of --size
    source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
    target_ids = keras.Input(shape=(None,), dtype="int32", name="target_ids")

    # Dropout on the embeddings and the maxout output (--dropout; not in the paper).
    encoder = BidirectionalGRUEncoder(
        source_vocab_size,
        hp["embedding_dim"],
        hp["encoder_units"],
        dropout=hp["dropout"],
        name="encoder",
    )
    # The decoder owns its additive (Bahdanau) attention of `attention_units` (n').
    decoder = BahdanauDecoder(
        target_vocab_size,
        hp["embedding_dim"],
        hp["units"],
        hp["maxout_units"],
        attention_units=hp["attention_units"],
        dropout=hp["dropout"],
        name="decoder",
    )

    memory, source_mask, encoder_states = encoder(source_ids)
    logits = decoder(target_ids, memory, source_mask, encoder_states)
    return keras.Model({"source_ids": source_ids, "target_ids": target_ids}, logits, name=PRESET)


if __name__ == "__main__":
    zoo.workflow.main(build_model, recipe=PRESET, description=__doc__)
