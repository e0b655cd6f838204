"""Luong et al. (2015): local attention with the `dot` score (local-p / local-m).

Effective Approaches to Attention-based Neural Machine Translation (Luong, Pham and
Manning, EMNLP 2015, https://arxiv.org/abs/1508.04025), section 3.2: at target step t
the decoder attends to a window [p_t - D, p_t + D] of source states only:

    local-p (--mode predictive, default): p_t = S * sigmoid(v_p^T tanh(W_p h_t))   (eq. 9)
    local-m (--mode monotonic):           p_t = t
    score(h_t, h_bar_s) = h_t^T h_bar_s                            (eq. 8, "dot")
    a_t(s) = align(h_t, h_bar_s) exp(-(s - p_t)^2 / (2 (D/2)^2))   (eq. 10, local-p)
    h~_t = tanh(W_c [c_t; h_t]),  p(y_t | ...) = softmax(W_s h~_t)   (eq. 5, 6)

with input feeding (section 3.3), a stacked LSTM encoder reading the reversed source,
dropout 0.2 and D = 10 (--window): that is `--size paper`. `--size base`, the default,
changes some of these settings to train well on one machine: `--help` gives each model
flag's default at every size (zoo.models.presets). Paper (WMT'14 English->German, Table
4): local-p (dot): perplexity 6.6, 18.0 BLEU (19.6 with unknown-word replacement); local-m
(dot) did not train well (perplexity > 7).

Measured results of the recipes: docs/papers.md.

    python recipes/luong_local_dot.py                   # Multi30k de->en, --size base
    python recipes/luong_local_dot.py --mode monotonic --window 5
"""
# ruff: noqa: E402  (the imports that load TensorFlow follow its quiet start)

import zoo_startup

zoo_startup.quiet_tensorflow_start()  # first: no CUDA start-up lines on a CPU-only machine

import keras

import zoo.workflow
from zoo.layers import LocalAttention
from zoo.models import LuongDecoder, StackedLSTMEncoder


def build_model(args, source_vocab_size, target_vocab_size):
    preset = "luong_local_p_dot" if args.mode == "predictive" else "luong_local_m_dot"
    hp = zoo.workflow.hyperparameters(args, preset)  # sizes of --size
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
    attention = LocalAttention(
        window=hp["window"],
        mode=args.mode,
        score="dot",
        init_scale=hp["init_scale"],
        name="attention",
    )
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
    return keras.Model({"source_ids": source_ids, "target_ids": target_ids}, logits, name=preset)


if __name__ == "__main__":
    zoo.workflow.main(
        build_model,
        recipe="luong_local_dot",
        description=__doc__,
        add_arguments=zoo.workflow.add_mode_argument,
    )
