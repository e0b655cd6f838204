"""Luong et al. (2015): the base system, a stacked LSTM encoder-decoder without attention.

Effective Approaches to Attention-based Neural Machine Translation (Luong, Pham and
Manning, EMNLP 2015, https://arxiv.org/abs/1508.04025), section 2 and Table 1's first
rows: the encoder's final LSTM states start the decoder, which predicts

    h_t = LSTM stack(E y_{t-1}, h_{t-1}),  p(y_t | y_<t, x) = softmax(W_s h_t)   (eq. 4)

Table 1 (WMT'14 English->German): Base 11.3 BLEU; + reverse 12.6 (--reverse-source);
+ dropout 14.0 (--dropout 0.2). `--help` gives each model flag's default at every --size
(zoo.models.presets); `--no-reverse-source --no-bidirectional --dropout 0` gives the plain
"Base" row. Attention (luong_global_*.py, luong_local_*.py) adds up to 5 BLEU on top of
this system.

Measured results of the recipes: docs/papers.md.

    python recipes/luong_base.py                        # Multi30k de->en, --size base
    python recipes/luong_base.py --no-reverse-source --no-bidirectional --dropout 0
"""
# ruff: noqa: E402  (the imports that load TensorFlow follow its quiet start)

import zoo_startup

zoo_startup.quiet_tensorflow_start()  # first: no CUDA start-up lines on a CPU-only machine

import keras

import zoo.workflow
from zoo.models import LuongDecoder, StackedLSTMEncoder

PRESET = "luong_base"  # the zoo.models preset this recipe builds in the open


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
    decoder = LuongDecoder(
        target_vocab_size,
        hp["embedding_dim"],
        hp["units"],
        num_layers=hp["num_layers"],
        dropout=hp["dropout"],
        attention=None,  # no attention: logits from the top LSTM state h_t
        input_feeding=False,
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
        switches=("dropout", "reverse_source", "bidirectional"),
    )
