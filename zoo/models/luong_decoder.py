"""The stacked LSTM decoder of Luong, Pham and Manning (2015), §3 (global/local attention)."""

import keras
from keras import ops

from zoo.checks import check_rate, check_sizes
from zoo.layers import AttentionBase, LocalAttention
from zoo.layers.initializers import uniform_or_default
from zoo.models.decoder_base import DecoderBase
from zoo.models.recurrence import (
    fused_rnn_available,
    lstm_params,
    lstm_sequence,
    lstm_update,
    project,
)
from zoo.models.stacked_lstm_encoder import (
    check_num_layers,
    stack_dropouts,
    stack_lstm,
    uniform_embedding,
)
from zoo.models.tying import readout_projection, tied_logits


@keras.saving.register_keras_serializable(package="zoo")
class LuongDecoder(DecoderBase):
    """Stacked LSTM decoder with global or local attention: Luong et al. 2015, §3.

    At target step t (0-based), with the L-layer LSTM stack and the top layer's state h_t:

        x_t   = [drop(E y_{t-1}); h~_{t-1}] with input feeding (§3.3, fig. 4), else drop(E y_{t-1})
        h_t   = LSTM stack(x_t, states_{t-1})             (§2, dropout between layers)
        c_t, a_t = attention(h_t, h_bar)                  (§3.1 global / §3.2 local, eq. 7-11)
        h~_t  = tanh(W_c [c_t; h_t])                       (eq. 5)
        logits_t = W_s drop(h~_t)                          (eq. 6)

    `drop` is dropout at rate `dropout` in training: on every non-recurrent connection
    (Zaremba et al. 2015, which Luong et al. §4.1 follow), i.e. the embeddings' output, the
    input of layers 2..L and h~_t before the softmax; h~_{t-1} is fed to the next step
    without it. In the step loop (input feeding) the masks between layers are drawn before
    the loop, a new one for every step (`_step_noise`), as on every Keras backend a loop
    body must not draw them itself.

    With `attention=None` this is the attention-free base system of Table 1
    (logits_t = W_s h_t, §2 eq. 4). The initial LSTM states are the encoder's final states
    (`StackedLSTMEncoder`), h~_{-1} = 0. Local attention gets `positions=t` (p_t = t for
    local-m, eq. 9; local-p predicts p_t itself, eq. 9-10); the step counter t is part of
    the state.

    Without input feeding, `call` takes the fast path: the whole target sequence runs
    through the LSTM stack at once (on a GPU the Keras LSTM layers' cuDNN kernel, on a CPU
    zoo's time-major `lstm_sequence` over the same cells' weights) and attention is computed
    for all steps in one call with a 3-D query. `step` uses the same weights (`lstm.cell`) and gives
    the same logits.

    Args:
        vocab_size: target vocabulary size.
        embedding_dim: target word embedding size.
        units: LSTM units per layer (also the size of h~_t).
        num_layers: 1 to 4; must equal the encoder's.
        dropout: rate on the embeddings, between LSTM layers and on h~ before W_s, in [0, 1).
        attention: a `zoo.layers` attention layer (`LuongAttention`, `LocalAttention`, ...)
            or None for no attention.
        input_feeding: feed h~_{t-1} to the first layer (needs attention).
        init_scale: > 0 draws embeddings, LSTM and projection kernels uniformly in
            [-init_scale, init_scale] (the paper: 0.1); 0 keeps the Keras defaults.
        tie_embeddings: the output layer reads the target embedding matrix E (Press and
            Wolf 2017): logits_t = drop(h~_t) E^T + b, through a projection W_p (units ->
            embedding_dim, no bias) when units != embedding_dim (`zoo.models.tying`);
            W_s is then not created. Default False.

    Call: `logits = decoder(target_ids, memory, source_mask, encoder_states, training=None)`
        encoder_states [h_1, c_1, ..., h_L, c_L] each (B, units) -> logits (B, Tt, V).
    Step: see `DecoderBase`. cache: memory, mask, keys (if attention), h_1, c_1, ...;
    state: (h_1, c_1, ..., h_L, c_L, h~_{t-1} (B, units), t (B,) int32).

    Example:
        decoder = LuongDecoder(50000, 1000, 1000, num_layers=4, dropout=0.2,
                               attention=LocalAttention(window=10, mode="predictive"),
                               input_feeding=True, init_scale=0.1, name="decoder")
        logits = decoder(target_ids, *encoder(source_ids))  # (B, Tt, 50000)
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        num_layers=1,
        dropout=0.0,
        attention=None,
        input_feeding=True,
        init_scale=0.0,
        tie_embeddings=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        sizes = check_sizes(name, vocab_size, embedding_dim, units)
        self.tie_embeddings = bool(tie_embeddings)
        self.vocab_size, self.embedding_dim, self.units = sizes
        self.num_layers = check_num_layers(name, num_layers)
        self.dropout = check_rate(name, "dropout", dropout)
        if isinstance(attention, dict):
            attention = keras.saving.deserialize_keras_object(attention)
        if attention is not None and not isinstance(attention, AttentionBase):
            raise ValueError(
                f"{name}: attention must be a zoo.layers attention layer or None, "
                f"got {attention!r}."
            )
        self.attention = attention
        self.input_feeding = bool(input_feeding)
        if self.input_feeding and attention is None:
            raise ValueError(
                f"{name}: input_feeding=True feeds the attentional state h~, which needs "
                "attention; pass input_feeding=False with attention=None."
            )
        self.init_scale = float(init_scale)
        policy = self.dtype_policy
        # One kernel initializer for the LSTMs, W_c and W_s (one seed under keras's seeding).
        kernel_init = uniform_or_default(self.init_scale, "glorot_uniform")
        self.embedding = uniform_embedding(vocab_size, embedding_dim, self.init_scale, policy)
        self.lstms = [
            stack_lstm(
                units,
                f"lstm_{i + 1}",
                kernel_init,
                uniform_or_default(self.init_scale, "orthogonal"),
                policy,
            )
            for i in range(num_layers)
        ]
        self.dropouts = stack_dropouts(self.dropout, num_layers, policy)  # on E y, layers 2..L
        self.output_dropout = keras.layers.Dropout(
            self.dropout, dtype=policy, name="output_dropout"
        )
        if attention is not None:
            self.W_c = keras.layers.Dense(
                units,
                activation="tanh",
                use_bias=False,
                kernel_initializer=kernel_init,
                dtype=policy,
                name="W_c",
            )
        if self.tie_embeddings:  # logits = [h~ W_p] E^T + b: E is the output matrix
            self.W_p = readout_projection(units, embedding_dim, kernel_init, policy)
        else:
            self.W_s = keras.layers.Dense(
                vocab_size, kernel_initializer=kernel_init, dtype=policy, name="W_s"
            )

    @property
    def _is_local(self):
        return isinstance(self.attention, LocalAttention)

    def build(self, target_ids_shape, memory_shape, source_mask_shape, encoder_states_shape):
        self._check_call_inputs(target_ids_shape, memory_shape, source_mask_shape)
        expected = 2 * self.num_layers
        dims = [tuple(shape)[-1] for shape in encoder_states_shape]
        if len(dims) != expected or any(d != self.units for d in dims):
            raise ValueError(
                f"LuongDecoder with num_layers={self.num_layers} and units={self.units} expects "
                f"encoder_states [h_1, c_1, ..., h_L, c_L]: {expected} tensors of {self.units} "
                f"features; got feature sizes {dims}. Use an encoder with the same num_layers "
                "and units."
            )
        self.embedding.build(target_ids_shape)
        first_input = self.embedding_dim + (self.units if self.input_feeding else 0)
        self.lstms[0].build((None, None, first_input))
        for lstm in self.lstms[1:]:
            lstm.build((None, None, self.units))
        if self.attention is not None:
            if not self.attention.built:  # from_config may pass an already built layer
                self.attention.build((None, self.units), tuple(memory_shape))
            self.W_c.build((None, memory_shape[-1] + self.units))
        if not self.tie_embeddings:
            self.W_s.build((None, self.units))
            return
        if self.W_p is not None:
            self.W_p.build((None, self.units))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.vocab_size,), initializer="zeros"
        )

    def prepare(self, memory, source_mask, encoder_states):
        """cache: memory, mask, keys (when attending) and h_1, c_1, ..., h_L, c_L."""
        cache = {"memory": memory, "mask": ops.cast(source_mask, "bool")}
        if self.attention is not None:
            cache["keys"] = self.attention.compute_keys(memory)
        for i in range(self.num_layers):
            cache[f"h_{i + 1}"] = encoder_states[2 * i]
            cache[f"c_{i + 1}"] = encoder_states[2 * i + 1]
        return cache

    def initial_state(self, cache):
        """(h_1, c_1, ..., h_L, c_L, h~_{-1} = 0, t = 0)."""
        dtype = self.compute_dtype
        states = []
        for i in range(self.num_layers):
            states += [ops.cast(cache[f"h_{i + 1}"], dtype), ops.cast(cache[f"c_{i + 1}"], dtype)]
        batch = ops.shape(cache["mask"])[0]
        attentional = ops.zeros((batch, self.units), dtype=dtype)
        steps = ops.zeros((batch,), dtype="int32")
        return (*states, attentional, steps)

    def _attend(self, h_top, cache, positions):
        """(context, weights) for h_top (B, [Tt,] units)."""
        kwargs = {"positions": positions} if self._is_local else {}
        return self.attention(
            h_top, cache["memory"], mask=cache["mask"], keys=cache["keys"], **kwargs
        )

    def _attentional(self, h_top, context):
        """h~ = tanh(W_c [c; h]) (eq. 5)."""
        return self.W_c(ops.concatenate([ops.cast(context, self.compute_dtype), h_top], axis=-1))

    def loop_params(self, pretransposed=True):
        """Each LSTM layer's weights; the first layer's kernel split as [K_E; K_h~] with
        input feeding (its input is [E y; h~]). `pretransposed`: as for
        `zoo.models.recurrence.lstm_params` (False where no gradient is taken)."""
        dtype = self.compute_dtype
        first = [self.embedding_dim] + ([self.units] if self.input_feeding else [])
        params = {"lstm_1": lstm_params(self.lstms[0].cell, first, dtype, pretransposed)}
        for i, lstm in enumerate(self.lstms[1:], start=2):
            params[f"lstm_{i}"] = lstm_params(lstm.cell, [self.units], dtype, pretransposed)
        return params

    def _step_inputs(self, ids, params, training=None):
        """The first LSTM layer's input projection of drop(E y): (B, [Tt,] 4 units)."""
        embedded = self.dropouts[0](self.embedding(ids), training=training)  # E y_{t-1}
        lstm = params["lstm_1"]
        return (project(embedded, lstm["kernels"][0], lstm["input_bias"]),)

    def _step_noise(self, leading_shape, training=None):
        """The dropout masks on the inputs of layers 2..L inside the recurrence (input
        feeding's step loop), one tensor `leading_shape + (units,)` per layer, drawn before
        the loop by the layer's own `Dropout` (its seed): 0 where a unit is dropped,
        1 / (1 - rate) where it is kept. None outside training, at rate 0 or with one
        layer."""
        if not training or not self.dropout or self.num_layers == 1:
            return ()
        ones = ops.ones((*leading_shape, self.units), dtype=self.compute_dtype)
        return tuple(dropout(ones, training=True) for dropout in self.dropouts[1:])

    def _advance(self, inputs, state, cache, params, training=None):
        # E y_{t-1} @ K_E + b (B, 4 units), and in training the masks of `_step_noise`
        projection, *masks = inputs
        layer_states, attentional, steps = state[:-2], state[-2], state[-1]
        if self.input_feeding:  # x_t = [E y_{t-1}; h~_{t-1}]: x_t @ K = E y @ K_E + h~ @ K_h~
            first = params["lstm_1"]
            projection = projection + project(
                attentional, first["kernels"][1], kernel_t=first["kernels_t"][1]
            )
        new_states, x = [], None
        for i, lstm in enumerate(self.lstms):
            h, c = layer_states[2 * i], layer_states[2 * i + 1]
            layer = params[f"lstm_{i + 1}"]
            if i > 0:
                if masks:  # drop(x) with this step's mask of dropouts[i] (`_step_noise`)
                    x = x * masks[i - 1]
                projection = project(
                    x, layer["kernels"][0], layer["input_bias"], kernel_t=layer["kernels_t"][0]
                )
            x, c = lstm_update(lstm.cell, layer, projection, h, c)  # h_t of layer i+1 (B, units)
            new_states += [x, c]
        if self.attention is None:
            weights = ops.zeros_like(cache["mask"], dtype=self.compute_dtype)
            attentional = x  # the base system reads out h_t directly
        else:
            context, weights = self._attend(x, cache, steps)  # (B, Dm), (B, Ts)
            attentional = self._attentional(x, context)  # h~_t (B, units)
        return (attentional,), (*new_states, attentional, steps + 1), weights

    def _readout(self, inputs, features, cache, training=None):
        (attentional,) = features
        attentional = self.output_dropout(attentional, training=training)
        if self.tie_embeddings:  # [drop(h~) W_p] E^T + b
            return tied_logits(
                attentional, self.embedding, self.output_bias, self.W_p, self.compute_dtype
            )
        return self.W_s(attentional)  # (..., V)

    def _lstm_sequence(self, i, params, projection, h, c):
        """Layer i+1 of the stack over a whole sequence, from its time-major input
        projection (Tt, B, 4 units): outputs h (Tt, B, units), the same `lstm_update` as
        `step`."""
        cell, layer = self.lstms[i].cell, params[f"lstm_{i + 1}"]
        outputs, _, _ = lstm_sequence(cell, layer, projection, h, c, time_major=True)
        return outputs

    def call(self, target_ids, memory, source_mask, encoder_states, training=None):
        """Teacher forcing: logits (B, Tt, V); the fast path when input_feeding is off."""
        cache = self.prepare(memory, source_mask, encoder_states)
        if self.input_feeding:
            logits, _ = self._stepwise_logits(target_ids, cache, training, return_weights=False)
            return logits
        # Fast path: each layer over the whole sequence (its input projection in one matmul),
        # then attention for all steps in one call with a 3-D query.
        if fused_rnn_available():  # cuDNN: the Keras LSTM layers over the whole sequence
            x = self.embedding(ops.cast(target_ids, "int32"))  # (B, Tt, m)
            for i, lstm in enumerate(self.lstms):
                x = self.dropouts[i](x, training=training)
                initial = [cache[f"h_{i + 1}"], cache[f"c_{i + 1}"]]
                x, _, _ = lstm(x, initial_state=initial, training=training)  # (B, Tt, units)
            return self._attentional_readout(x, cache, training)
        # The layers run time-major (no transposes between them); attention batch-major.
        params = self.loop_params(pretransposed=bool(training))
        ids = ops.transpose(ops.cast(target_ids, "int32"))  # (Tt, B)
        (projection,) = self._step_inputs(ids, params, training)  # (Tt, B, 4 units)
        x = None
        for i in range(self.num_layers):
            if i > 0:
                layer = params[f"lstm_{i + 1}"]
                x = self.dropouts[i](x, training=training)
                projection = project(x, layer["kernels"][0], layer["input_bias"])
            h, c = (ops.cast(cache[f"{k}_{i + 1}"], self.compute_dtype) for k in "hc")
            x = self._lstm_sequence(i, params, projection, h, c)  # (Tt, B, units)
        return self._attentional_readout(ops.swapaxes(x, 0, 1), cache, training)

    def _attentional_readout(self, x, cache, training):
        """Logits from the top layer's h (B, Tt, units), attention for all steps at once."""
        if self.attention is not None:
            context, _ = self._attend(x, cache, None)  # positions 0..Tt-1 for local
            x = self._attentional(x, context)  # (B, Tt, units)
        return self._readout(None, (x,), cache, training)

    def get_config(self):
        attention = self.attention
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
            "attention": None
            if attention is None
            else keras.saving.serialize_keras_object(attention),
            "input_feeding": self.input_feeding,
            "init_scale": self.init_scale,
            "tie_embeddings": self.tie_embeddings,
        }
