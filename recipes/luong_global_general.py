"""Luong et al. (2015): global attention with the `general` score.

Effective Approaches to Attention-based Neural Machine Translation (Luong, Pham and
Manning, EMNLP 2015, https://arxiv.org/abs/1508.04025), section 3.1: at every target
step the top decoder state h_t attends to all source states h_bar_s with

    score(h_t, h_bar_s) = h_t^T W_a h_bar_s                   (eq. 8, "general")
    a_t = softmax(score), c_t = sum_s a_t(s) h_bar_s          (eq. 7)
    h~_t = tanh(W_c [c_t; h_t]),  p(y_t | ...) = softmax(W_s h~_t)   (eq. 5, 6)

with input feeding (section 3.3), a stacked LSTM encoder reading the reversed source and
dropout 0.2 between layers: that is `--size paper`. `--size base`, the default, changes
some of these settings to train well on one machine: `--help` gives each model flag's
default at every size (zoo.models.presets). Paper (WMT'14 English->German, Table 4):
perplexity 6.1, 17.3 BLEU (19.1 with unknown-word replacement).

Measured results of the recipes: docs/papers.md.

    python recipes/luong_global_general.py                 # Multi30k de->en, --size base
    python recipes/luong_global_general.py --input-feeding --no-bidirectional --dropout 0.2  # the paper's model, base sizes
"""
# ruff: noqa: E402  (the imports that load TensorFlow follow its quiet start)

import zoo_startup

zoo_startup.quiet_tensorflow_start()  # first: no CUDA start-up lines on a CPU-only machine

import keras

import zoo.workflow
from zoo.layers import LuongAttention
from zoo.models import LuongDecoder, StackedLSTMEncoder

PRESET = "luong_global_general"  # the zoo.models preset this recipe builds in the open


def build_model(args, source_vocab_size, target_vocab_size):
    hp = zoo.workflow.hyperparameters(args, PRESET)  # sizes of --size
    source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
    target_ids = keras.Input(shape=(None,), dtype="int32", name="target_ids")

    encoder = StackedLSTMEncoder(
        source_vocab_size,
        hp["embedding_dim"],
        hp["units"],
        num_layers=hp["num_layers"],
        dropout=hp["dropout"],
        reverse_source=hp["reverse_source"],
        init_scale=hp["init_scale"],
        bidirectional=hp["bidirectional"],
        name="encoder",
    )
    attention = LuongAttention(score="general", init_scale=hp["init_scale"], name="attention")
    decoder = LuongDecoder(
        target_vocab_size,
        hp["embedding_dim"],
        hp["units"],
        num_layers=hp["num_layers"],
        dropout=hp["dropout"],
        attention=attention,
        input_feeding=hp["input_feeding"],
        init_scale=hp["init_scale"],
        name="decoder",
    )

    memory, source_mask, encoder_states = encoder(source_ids)
    logits = decoder(target_ids, memory, source_mask, encoder_states)
    return keras.Model({"source_ids": source_ids, "target_ids": target_ids}, logits, name=PRESET)


if __name__ == "__main__":
    zoo.workflow.main(
        build_model,
        recipe=PRESET,
        description=__doc__,
        switches=("dropout", "reverse_source", "bidirectional", "input_feeding"),  # no window
    )
