"""The bidirectional RNN encoder of RNNsearch (Bahdanau et al. 2014, §3.2)."""

import keras
from keras import ops

from zoo.models.gru_encoder_base import GRUEncoderBase
from zoo.models.recurrence import run_rnn
from zoo.models.reversal import lengths_from_mask, reverse_padded


@keras.saving.register_keras_serializable(package="zoo")
class BidirectionalGRUEncoder(GRUEncoderBase):
    """Bidirectional GRU encoder: Bahdanau et al. 2014, §3.2 and appendix A.2.1.

    The forward GRU reads x_1..x_Tx, the backward GRU reads x_Tx..x_1, and the annotation of
    source word j is h_j = [fwd_h_j; bwd_h_j]. The backward direction reverses each sentence
    within its own length (padding stays at the end), so that padding never enters a real
    annotation and right-padded batches keep cuDNN usable.

    Args:
        vocab_size: source vocabulary size (ids 0-3 reserved, 0 = padding).
        embedding_dim: m, the size of the source word embeddings E x_j.
        units: n, GRU units per direction (memory has 2n features).
        reset_after: GRU variant; True (the default) is the one cuDNN runs.
        dropout: rate in [0, 1) on the source embeddings in training (default 0.0: the paper
            mentions none; the base presets use 0.3).

    Call: `memory, source_mask, encoder_states = encoder(source_ids, training=None)`
        source_ids (B, Ts) int, right-padded with 0;
        memory (B, Ts, 2n) (zeros at padding), source_mask bool (B, Ts),
        encoder_states [bwd_h_1 (B, n)]: the backward state at the first word, from which
        the decoder computes s_0 = tanh(W_s bwd_h_1) (appendix A.2.2).

    Example:
        encoder = BidirectionalGRUEncoder(30000, 620, 1000, name="encoder")
        memory, mask, states = encoder(source_ids)  # (B, Ts, 2000), (B, Ts), [(B, 1000)]
    """

    GRU_NAMES = ("forward_gru", "backward_gru")
    MEMORY_FACTOR = 2  # h_j = [fwd_h_j; bwd_h_j]

    def call(self, source_ids, training=None):
        mask, x = self._embedded_source(source_ids, training)  # (B, Ts), (B, Ts, m)
        lengths = lengths_from_mask(mask)  # (B,)
        forward, _ = run_rnn(self.forward_gru, x, mask, training=training)  # (B, Ts, n)
        backward_in = reverse_padded(x, lengths)  # x_Tx .. x_1, padding kept at the end
        backward, bwd_h_1 = run_rnn(self.backward_gru, backward_in, mask, training=training)
        backward = reverse_padded(backward, lengths)  # backward[:, j] = bwd_h_j
        memory = ops.concatenate([forward, backward], axis=-1)  # (B, Ts, 2n)
        return self._masked(memory, mask), mask, [bwd_h_1]
