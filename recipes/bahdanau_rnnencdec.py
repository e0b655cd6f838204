"""Bahdanau et al. (2014): RNNencdec, the encoder-decoder baseline without attention.

Neural Machine Translation by Jointly Learning to Align and Translate (Bahdanau, Cho and
Bengio, ICLR 2015, https://arxiv.org/abs/1409.0473), section 4.2, after Cho et al. (2014):
a GRU encoder compresses the whole source into one fixed vector

    c = tanh(V h_Tx)

which conditions every step of a GRU decoder with a maxout deep output. This is the
baseline RNNsearch (bahdanau_rnnsearch.py) improves on; its BLEU falls quickly with the
sentence length (the paper's figure 2; see bleu_by_length.png). Table 1 (WMT'14
English->French, all test sentences): RNNencdec-30 13.93 BLEU, RNNencdec-50 17.82 BLEU.

Measured results of the recipes: docs/papers.md.

    python recipes/bahdanau_rnnencdec.py                # Multi30k de->en, --size base
"""
# ruff: noqa: E402  (the imports that load TensorFlow follow its quiet start)

import zoo_startup

zoo_startup.quiet_tensorflow_start()  # first: no CUDA start-up lines on a CPU-only machine

import keras

import zoo.workflow
from zoo.models import GRUEncoder, RNNEncDecDecoder

PRESET = "bahdanau_rnnencdec"  # the zoo.models preset this recipe builds in the open


def build_model(args, source_vocab_size, target_vocab_size):
    hp = zoo.workflow.hyperparameters(args, PRESET)  # sizes of --size
    source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
    target_ids = keras.Input(shape=(None,), dtype="int32", name="target_ids")

    # Dropout on the embeddings and the maxout output (--dropout; not in the paper).
    encoder = GRUEncoder(
        source_vocab_size,
        hp["embedding_dim"],
        hp["encoder_units"],
        dropout=hp["dropout"],
        name="encoder",
    )
    decoder = RNNEncDecDecoder(
        target_vocab_size,
        hp["embedding_dim"],
        hp["units"],
        hp["maxout_units"],
        dropout=hp["dropout"],
        name="decoder",
    )

    memory, source_mask, encoder_states = encoder(source_ids)
    logits = decoder(target_ids, memory, source_mask, encoder_states)
    return keras.Model({"source_ids": source_ids, "target_ids": target_ids}, logits, name=PRESET)


if __name__ == "__main__":
    zoo.workflow.main(build_model, recipe=PRESET, description=__doc__)
