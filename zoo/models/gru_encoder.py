"""The unidirectional GRU encoder of RNNencdec (Cho et al. 2014; Bahdanau et al. 2014 §2.1)."""

import keras

from zoo.models.gru_encoder_base import GRUEncoderBase
from zoo.models.recurrence import run_rnn


@keras.saving.register_keras_serializable(package="zoo")
class GRUEncoder(GRUEncoderBase):
    """Unidirectional GRU encoder of the RNNencdec baseline (Bahdanau et al. 2014 §2.1, §4.2;
    Cho et al. 2014 §2.2): h_t = f(x_t, h_{t-1}); the decoder turns the last state h_Tx into
    the fixed context vector c = tanh(V h_Tx) (see `RNNEncDecDecoder`).

    Args:
        vocab_size: source vocabulary size (0 = padding).
        embedding_dim: size of the source word embeddings.
        units: GRU units.
        reset_after: GRU variant; True (the default) is the one cuDNN runs.
        dropout: rate in [0, 1) on the source embeddings in training (default 0.0: the paper
            mentions none; the base presets use 0.3).

    Call: `memory, source_mask, encoder_states = encoder(source_ids, training=None)`
        memory (B, Ts, units) (zeros at padding), source_mask bool (B, Ts),
        encoder_states [h_Tx (B, units)], the state after each sentence's last real word.

    Example:
        memory, mask, [h_last] = GRUEncoder(30000, 620, 1000, name="encoder")(source_ids)
    """

    GRU_NAMES = ("gru",)

    def call(self, source_ids, training=None):
        mask, x = self._embedded_source(source_ids, training)  # (B, Ts), (B, Ts, m)
        memory, h_last = run_rnn(self.gru, x, mask, training=training)  # (B, Ts, n), (B, n)
        return self._masked(memory, mask), mask, [h_last]
