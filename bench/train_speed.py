"""Training throughput of the zoo presets on real Multi30k batches, with model-FLOP utilisation.

For each preset (built at `--size` with 8k SentencePiece vocabularies, the peer's sizes at
`base`): target tokens/s and sentence pairs/s of full training steps (forward, backward,
Adam with global-norm clipping 1.0 as the peer trains, `keras.optimizers.Adam`) in steady
state after warm-up, the process's peak RSS, the analytic forward+backward FLOPs per target
token and the model-FLOP utilisation against this machine's fp32 matmul rate, measured in
the same process right after the preset. Every preset runs in its own process (clean memory
peak, own precision policy). Tokens are real target tokens (END included, padding
excluded), as Joey NMT counts.

    python bench/train_speed.py                      # 4 presets, base, about 3.5 min on 2 cores
    python bench/train_speed.py --presets luong_global_general:nofeed --steps 10 --jit
    python bench/train_speed.py --breakdown          # also time forward / forward+backward
    python bench/train_speed.py --backend tensorflow,jax,torch   # the Keras backends side by side

`--backend` runs each preset on each Keras backend, in a process of its own, with the train
step that trains there: on TensorFlow and JAX `zoo.training.train_step.make_train_step` (the
recipes' step; on JAX a jitted stateless step on batches padded to a few bucket lengths, each
compiled before the timing), on PyTorch Keras's own step of `model.fit` (`train_on_batch`
with `zoo.training.keras_loss()`). The same batches, optimizer and clipping on each.

A preset spec `NAME:SUFFIX...` changes the preset (bench/common.py, PRESET_SUFFIXES): `:nofeed`
and `:feed` set input feeding off and on (off: the decoder's whole-sequence path),
`:unidirectional` gives the paper's one-way encoder, `:tied` and `:untied` the output layer
tied to the target embeddings or not (`luong_local_p_general` at base ties it). The Luong
base presets have read both ways in the first encoder layer and run without input feeding
since 2026-12-01; the figures in bench/RESULTS.md ("Training speed") dated up to
2026-12-01, and the peer ratios they record, are those of `:feed:unidirectional` (the
plain name then) and `:nofeed:unidirectional` (":nofeed" then), which the default list
keeps.

The "x peer" column divides by the peer's figure measured on this machine when the peer is
set up (`../shared/peers/joeynmt/run.sh setup`): its Bahdanau model from the log of the last
`run.sh tput`, its Luong model from the last `bench/peer_luong.sh`. `--run-peer SECONDS`
reruns them first, so that both sides are measured in one run. Otherwise it divides by the
peer README's figures.
"""

import argparse
import concurrent.futures
import multiprocessing
import statistics
import time

import common

DEFAULT_PRESETS = (
    "bahdanau_rnnsearch,luong_global_general:feed:unidirectional,"
    "luong_global_general:nofeed:unidirectional,luong_global_general"
)


def family_of(name):
    """The peer model a preset is compared with: "luong" or "bahdanau"."""
    return "luong" if name.startswith("luong") else "bahdanau"


def parse_args(argv=None):
    from zoo.data import BATCHINGS, DEFAULT_BUCKET_WIDTH, make_dataset
    from zoo.text import DEFAULT_VOCAB_SIZE
    from zoo.workflow.flags import library_default

    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--presets",
        default=DEFAULT_PRESETS,
        help="comma-separated preset names (zoo.models.presets()), with suffixes: "
        + common.SUFFIX_HELP
        + "; or 'all' for every preset (default: %(default)s)",
    )
    common.add_model_arguments(p)
    p.add_argument(
        "--jit",
        action="store_true",
        help="compile the train step with XLA (jit_compile=True; TensorFlow: JAX always "
        "compiles its step, PyTorch runs it eagerly)",
    )
    p.add_argument(
        "--steps",
        type=int,
        default=20,
        help="timed training steps per preset (default: %(default)s)",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=60.0,
        help="stop timing a preset after this many seconds even if --steps are not done "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--warmup", type=int, default=3, help="untimed steps first (tracing) (default: %(default)s)"
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=library_default(make_dataset, "batch_size"),
        help="sentences per batch (default: %(default)s)",
    )
    p.add_argument(
        "--max-length",
        type=int,
        default=library_default(make_dataset, "max_length"),
        help="longest sentence in pieces (default: %(default)s)",
    )
    p.add_argument(
        "--batching",
        choices=BATCHINGS,
        default=library_default(make_dataset, "batching"),
        help="make_dataset's grouping of pairs into batches: sorted pools, length buckets of "
        f"width {DEFAULT_BUCKET_WIDTH}, or plain shuffled batches, as Joey NMT (default: "
        "%(default)s, make_dataset's)",
    )
    p.add_argument(
        "--vocab-size",
        type=int,
        default=DEFAULT_VOCAB_SIZE,
        help="SentencePiece vocabularies (default: %(default)s)",
    )
    p.add_argument(
        "--matmul-size",
        type=int,
        default=1024,
        help="n of the n x n x n matmul, in the precision's compute dtype, whose rate is the "
        "MFU denominator (default: %(default)s)",
    )
    p.add_argument(
        "--breakdown",
        action="store_true",
        help="also time forward only and forward+backward (no optimizer) per step "
        "(TensorFlow only)",
    )
    p.add_argument("--backend", default=common.default_backend(), help=common.BACKEND_HELP)
    p.add_argument(
        "--in-process",
        action="store_true",
        help="run the presets in this process, on its backend (peak memory then accumulates; "
        "for profiling)",
    )
    p.add_argument(
        "--run-peer",
        type=int,
        default=0,
        metavar="SECONDS",
        help="if the peer is set up, first train each needed peer model for SECONDS "
        "(`run.sh tput` for Bahdanau, bench/peer_luong.sh for Luong) (default: 0 = read the "
        "peer's last logs; where there is none, use the README figures)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="batch shuffling seed (default: %(default)s)"
    )
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------
# Analytic FLOPs. A (n x k) @ (k x m) matmul is 2nkm FLOPs; elementwise work, embeddings and
# the softmax's exp are not counted (they are not matmuls). Backward = 2 x forward.
# Returned per real token: (per source token, per target token, per (target, source) pair).
# ---------------------------------------------------------------------------------------


def _gru(inp, units):
    return 2 * 3 * (inp + units) * units


def _lstm(inp, units):
    return 2 * 4 * (inp + units) * units


def _output_terms(terms, matrix, width, m, v_tgt, tied):
    """The output layer's terms: the `width`-wide readout times `matrix`, or tied to the
    embeddings E (m wide) through a projection W_p where the widths differ."""
    if not tied:
        terms[f"softmax layer {matrix} ({v_tgt}-way)"] = ("tgt", 2 * width * v_tgt)
        return
    if width != m:
        terms[f"output projection W_p ({width} to {m})"] = ("tgt", 2 * width * m)
    terms[f"softmax layer E^T ({v_tgt}-way, tied)"] = ("tgt", 2 * m * v_tgt)


def flop_terms(name, size, vocab, overrides=None):
    """Forward matmul FLOPs of preset `name` with build `overrides` (common.parse_preset):
    (terms, arguments): a dict of named terms, each with its unit ("src" per source token,
    "tgt" per target token, "pair" per target x attended source position, "sent" per
    sentence) and FLOPs, and the preset's arguments with the overrides."""
    import zoo.models

    a = {**zoo.models.preset_arguments(name, size), **(overrides or {})}
    v_tgt = vocab[1]
    terms = {}
    if name == "bahdanau_rnnsearch":
        m, ne, n, l2, na = (
            a["embedding_dim"],
            a["encoder_units"],
            a["units"],
            2 * a["maxout_units"],
            a["attention_units"],
        )
        dm = 2 * ne
        terms["encoder BiGRU (2 dirs)"] = ("src", 2 * _gru(m, ne))
        terms["attention keys U_a h_j"] = ("src", 2 * dm * na)
        terms["s_0 = tanh(W_s bwd_h_1)"] = ("sent", 2 * ne * n)
        terms["attention W_a s_{i-1}"] = ("tgt", 2 * n * na)
        terms["attention v_a . tanh (per source pos)"] = ("pair", 2 * na)
        terms["context sum_j a_ij h_j"] = ("pair", 2 * dm)
        terms["decoder GRU [E y; c]"] = ("tgt", _gru(m + dm, n))
        terms["readout U_o s + V_o E y + C_o c"] = ("tgt", 2 * (n + m + dm) * l2)
        _output_terms(terms, "W_o", l2 // 2, m, v_tgt, a["tie_embeddings"])
    elif name == "bahdanau_rnnencdec":
        m, ne, n, l2 = a["embedding_dim"], a["encoder_units"], a["units"], 2 * a["maxout_units"]
        terms["encoder GRU"] = ("src", _gru(m, ne))
        terms["c = tanh(V h), s_0 = tanh(V' c)"] = ("sent", 2 * (ne * n + n * n))
        terms["decoder GRU [E y; c]"] = ("tgt", _gru(m + n, n))
        terms["readout U_o s + V_o E y + C_o c"] = ("tgt", 2 * (n + m + n) * l2)
        _output_terms(terms, "W_o", l2 // 2, m, v_tgt, a["tie_embeddings"])
    else:  # luong_*
        m, n, layers = a["embedding_dim"], a["units"], a["num_layers"]
        attention, score = a["attention"], a["score"]
        feed = a["input_feeding"]
        if a["bidirectional"]:  # layer 1: two LSTMs of n / 2, one each way
            terms[f"encoder {layers}-layer LSTM, layer 1 both ways"] = (
                "src",
                2 * _lstm(m, n // 2) + (layers - 1) * _lstm(n, n),
            )
        else:
            terms[f"encoder {layers}-layer LSTM"] = (
                "src",
                _lstm(m, n) + (layers - 1) * _lstm(n, n),
            )
        first = m + (n if feed else 0)
        terms[f"decoder {layers}-layer LSTM" + (" (input feeding)" if feed else "")] = (
            "tgt",
            _lstm(first, n) + (layers - 1) * _lstm(n, n),
        )
        if attention != "none":
            if score == "general":
                terms["attention keys h_s W_a^T"] = ("src", 2 * n * n)
                terms["score h_t . key (per source pos)"] = ("pair", 2 * n)
            elif score == "dot":
                terms["score h_t . h_s (per source pos)"] = ("pair", 2 * n)
            elif score == "concat":
                terms["attention keys h_s W_a[D:]"] = ("src", 2 * n * n)
                terms["attention h_t W_a[:D]"] = ("tgt", 2 * n * n)
                terms["score v_a . tanh (per source pos)"] = ("pair", 2 * n)
            elif score == "location":
                terms["score h_t W_a (max_length)"] = ("tgt", 2 * n * a["max_length"])
            if attention == "local_p":
                terms["position v_p . tanh(W_p h_t)"] = ("tgt", 2 * n * n + 2 * n)
            terms["context sum_s a_s h_s"] = ("pair", 2 * n)
            terms["h~ = tanh(W_c [c; h])"] = ("tgt", 2 * 2 * n * n)
        _output_terms(terms, "W_s", n, m, v_tgt, a["tie_embeddings"])
    return terms, a


def attended_pairs(name, args, source_len, target_len):
    """Target x source positions attended in one sentence (local: at most 2D+1)."""
    if name.startswith("luong") and args.get("attention") in ("local_m", "local_p"):
        return target_len * min(source_len, 2 * args["window"] + 1)
    return target_len * source_len


def batch_flops(name, terms, args, batches):
    """Forward FLOPs of real (unpadded) work over `batches` (numpy), and the target tokens."""
    total = 0.0
    tokens = 0
    for features, labels in batches:
        src = (features["source_ids"] != 0).sum(axis=1)
        tgt = (labels != 0).sum(axis=1)
        counts = {
            "src": float(src.sum()),
            "tgt": float(tgt.sum()),
            "sent": float(len(src)),
            "pair": float(
                sum(
                    attended_pairs(name, args, int(s), int(t))
                    for s, t in zip(src, tgt, strict=True)
                )
            ),
        }
        total += sum(counts[unit] * f for unit, f in terms.values())
        tokens += int(tgt.sum())
    return total, tokens


def describe_flops(label, name, size, vocab, overrides, batches):
    terms, args = flop_terms(name, size, vocab, overrides)
    src = sum(int((f["source_ids"] != 0).sum()) for f, _ in batches)
    tgt = sum(int((y != 0).sum()) for _, y in batches)
    pairs = sum(
        attended_pairs(name, args, int(s), int(t))
        for f, y in batches
        for s, t in zip((f["source_ids"] != 0).sum(1), (y != 0).sum(1), strict=True)
    )
    per = {"src": src / tgt, "tgt": 1.0, "sent": sum(len(y) for _, y in batches) / tgt}
    per["pair"] = pairs / tgt
    lines = [f"{label}: forward matmul FLOPs per target token (x3 for forward+backward)"]
    total = 0.0
    for key, (unit, f) in terms.items():
        value = f * per[unit]
        total += value
        lines.append(
            f"  {key:44s} {f:>12,.0f} per {unit:4s} x {per[unit]:6.2f} = {value / 1e6:7.3f} M"
        )
    lines.append(f"  {'total forward':44s} {total / 1e6:40.3f} M;  fwd+bwd {3 * total / 1e6:.2f} M")
    return "\n".join(lines), 3 * total


# ---------------------------------------------------------------------------------------


def matmul_rate(n, dtype="float32", seconds=3.0):
    """GFLOP/s of an n x n x n tf.linalg.matmul loop in `dtype` (same threads as training):
    the peak of the precision in use (bfloat16 under mixed_bfloat16)."""
    import tensorflow as tf

    a = tf.cast(tf.random.normal((n, n)), dtype)
    b = tf.cast(tf.random.normal((n, n)), dtype)

    @tf.function
    def f(a, b):
        c = a
        for _ in range(8):
            c = tf.linalg.matmul(c, b) * 1e-3
        return tf.reduce_sum(c)

    f(a, b).numpy()
    reps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        f(a, b).numpy()
        reps += 1
    elapsed = time.perf_counter() - start
    return 8 * 2 * n**3 * reps / elapsed / 1e9


def tensorflow_steps(model, optimizer, opts):
    """{"step": f(x, y) -> mean loss per token} on TensorFlow: the recipes' train step
    (`make_train_step` in a `tf.function`), and with `breakdown` its forward and
    forward+backward parts; x and y are tf tensors."""
    import tensorflow as tf

    from zoo.training import masked_token_stats
    from zoo.training.train_step import make_train_step

    jit = opts["jit"]
    step = make_train_step(model, optimizer, jit_compile=jit)
    trainable = model.trainable_variables

    def forward(inputs, targets):
        logits = model(inputs, training=True)
        loss_sum, _, tokens = masked_token_stats(targets, logits)
        return loss_sum / tf.maximum(tokens, 1.0), tokens

    def grads_fn(inputs, targets):
        with tf.GradientTape() as tape:
            loss, tokens = forward(inputs, targets)
            scaled = optimizer.scale_loss(loss)
        return tape.gradient(scaled, trainable), loss

    spec_in = (
        {
            "source_ids": tf.TensorSpec((None, None), tf.int32),
            "target_ids": tf.TensorSpec((None, None), tf.int32),
        },
        tf.TensorSpec((None, None), tf.int32),
    )
    traced_step = tf.function(lambda x, y: step((x, y)), input_signature=spec_in)

    def mean_loss_step(x, y):  # the step returns sums; the loop reads the mean per token
        loss_sum, _, tokens = traced_step(x, y)
        return loss_sum / tokens

    fns = {"step": mean_loss_step}
    if opts["breakdown"]:  # parts of the step, for the profile only
        fns["forward"] = tf.function(
            lambda x, y: forward(x, y)[0], input_signature=spec_in, jit_compile=jit
        )
        fns["fwd+bwd"] = tf.function(
            lambda x, y: grads_fn(x, y)[1], input_signature=spec_in, jit_compile=jit
        )
    return fns


def jax_steps(model, optimizer):
    """{"step": ...} on JAX: the recipes' train step there (`make_train_step`, a jitted
    stateless step on batches padded to bucket lengths); x and y are NumPy arrays."""
    from zoo.training.train_step import make_train_step

    step = make_train_step(model, optimizer)

    def mean_loss_step(x, y):
        loss_sum, _, tokens = step((x, y))
        return float(loss_sum) / float(tokens)

    return {"step": mean_loss_step}


def torch_steps(model, optimizer):
    """{"step": ...} on PyTorch: Keras's own train step, what `model.fit` runs there
    (`train_on_batch` with `zoo.training.keras_loss()`); x and y are NumPy arrays."""
    from zoo.training import keras_loss

    model.compile(optimizer=optimizer, loss=keras_loss())
    return {"step": lambda x, y: float(model.train_on_batch(x, y))}


def compile_shapes(fns, warm, timed, key):
    """Runs the step once on a batch of each shape `key(x, y)` of `timed` not in `warm`:
    backends that compile per shape (XLA, `jax.jit`) compile before the timing."""
    seen = {key(x, y) for x, y in warm}
    for x, y in timed:
        if key(x, y) not in seen:
            seen.add(key(x, y))
            fns["step"](x, y)


def measure(spec, opts, batches):
    """Runs in a fresh process: builds preset `spec`, times train steps, returns a dict."""
    import keras
    import numpy as np

    import zoo.models
    from zoo.backend import backend_name
    from zoo.training import set_precision
    from zoo.training.train_step import prepare_optimizer

    backend = backend_name()
    name, overrides = common.parse_preset(spec)
    set_precision(opts["precision"])
    keras.utils.set_random_seed(0)
    model = zoo.models.build(
        name,
        size=opts["size"],
        source_vocab_size=opts["vocab_sizes"][0],
        target_vocab_size=opts["vocab_sizes"][1],
        **overrides,
    )
    # What training runs: the default optimizer (Adam, as the peer's runs, clipped to global
    # norm 1) and the backend's train step (loss, normalisation, clipping, loss scaling).
    optimizer = prepare_optimizer("adam", model)
    if backend == "tensorflow":
        import tensorflow as tf

        fns = tensorflow_steps(model, optimizer, opts)
        tensors = [({k: tf.constant(v) for k, v in f.items()}, tf.constant(y)) for f, y in batches]
    else:
        fns = jax_steps(model, optimizer) if backend == "jax" else torch_steps(model, optimizer)
        tensors = batches
    warm, timed = tensors[: opts["warmup"]], tensors[opts["warmup"] :]
    row = {
        "preset": spec,
        "backend": backend,
        "params": int(sum(np.prod(v.shape) for v in model.trainable_variables)),
        "precision": opts["precision"],
        "jit": opts["jit"] if backend == "tensorflow" else backend == "jax",
    }
    start = time.perf_counter()
    try:
        for x, y in warm:
            float(fns["step"](x, y))
        if backend == "jax":  # jitted per bucket length (zoo.training.jax_step)
            from zoo.training.jax_step import bucket_length

            compile_shapes(fns, warm, timed, lambda x, y: (
                bucket_length(x["source_ids"].shape[1]), bucket_length(y.shape[1])
            ))  # fmt: skip
        elif row["jit"]:  # XLA compiles per shape
            compile_shapes(fns, warm, timed, lambda x, y: (
                tuple(x["source_ids"].shape), tuple(y.shape)
            ))  # fmt: skip
    except Exception as error:  # report, e.g. XLA that cannot compile the model
        text = str(error).strip().splitlines()
        row["error"] = next((t for t in text if "XLA" in t or "Error" in t), text[0])[:300]
        row["rss_mib"] = common.rss_peak_mib()
        return row
    row["warmup_s"] = time.perf_counter() - start

    done, tokens, pairs, elapsed = 0, 0, 0, 0.0
    times = []
    for x, y in timed:
        start = time.perf_counter()
        loss = float(fns["step"](x, y))
        times.append(time.perf_counter() - start)
        elapsed += times[-1]
        done += 1
        tokens += int(np.count_nonzero(np.asarray(y)))
        pairs += int(y.shape[0])
        if elapsed > opts["max_seconds"]:
            break
    row.update(
        steps=done,
        seconds=elapsed,
        tokens_per_s=tokens / elapsed,
        pairs_per_s=pairs / elapsed,
        step_ms_median=1e3 * statistics.median(times),
        loss=loss,
    )
    for key in ("forward", "fwd+bwd"):
        if key in fns:
            fns[key](*timed[0]).numpy()
            t0 = time.perf_counter()
            for x, y in timed[:done]:
                fns[key](x, y).numpy()
            row[f"{key}_ms"] = 1e3 * (time.perf_counter() - t0) / done
    row["step_ms"] = 1e3 * elapsed / done
    row["rss_mib"] = common.rss_peak_mib()
    row["matmul_gflops"] = matmul_rate(
        opts["matmul_size"], keras.config.dtype_policy().compute_dtype
    )
    row["used_batches"] = opts["warmup"] + done
    return row


def load_batches(args):
    """warmup + steps real Multi30k train batches as numpy (the same ones for every preset)."""
    import numpy as np

    from zoo.data import make_dataset

    source_tok, target_tok = common.tokenizers(args.vocab_size)
    # SentencePiece may learn fewer pieces than asked (8000 -> 7931 for Multi30k en)
    args.vocab_sizes = (source_tok.vocab_size, target_tok.vocab_size)
    corpus = common.bench_corpus("train")
    start = time.perf_counter()
    dataset = make_dataset(
        corpus.source,
        corpus.target,
        source_tok,
        target_tok,
        batch_size=args.batch_size,
        max_length=args.max_length,
        shuffle=True,
        seed=args.seed,
        batching=args.batching,
        drop_remainder=True,
        shuffle_buffer=5000,
    )
    batches = [
        ({k: np.asarray(v) for k, v in f.items()}, np.asarray(y))
        for f, y in dataset.take(args.warmup + args.steps).as_numpy_iterator()
    ]
    print(
        f"{len(batches)} Multi30k train batches of {args.batch_size} in "
        f"{time.perf_counter() - start:.1f} s (tokenisation included; not part of the timing)"
    )
    return batches


def main(argv=None):
    args = parse_args(argv)
    backends = common.parse_backends(args.backend)
    if args.in_process and backends != [common.default_backend()]:
        raise SystemExit(
            f"--in-process runs on this process's backend ({common.default_backend()}); "
            f"--backend {args.backend} needs a process per backend: leave --in-process out."
        )
    if args.breakdown and backends != ["tensorflow"]:
        raise SystemExit(f"--breakdown is TensorFlow's only; --backend is {args.backend}.")
    import zoo.models

    if args.presets == "all":
        specs = zoo.models.presets() + ["luong_global_general:feed:unidirectional"]
    else:
        specs = [s.strip() for s in args.presets.split(",") if s.strip()]
    for spec in specs:
        name, _ = common.parse_preset(spec)
        zoo.models.preset_arguments(name, args.size)  # ValueError for an unknown name/size

    peer = {}  # family -> (tokens/s, line), for the families measured here
    if common.peer_ready():
        for family in sorted({family_of(common.parse_preset(spec)[0]) for spec in specs}):
            figure = common.peer_train_figure(family, args.run_peer or None)
            if figure:
                peer[family] = figure
                print(f"peer: {figure[1]}")
    batches = load_batches(args)
    opts = {
        k: getattr(args, k)
        for k in (
            "size",
            "precision",
            "jit",
            "vocab_sizes",
            "warmup",
            "max_seconds",
            "matmul_size",
            "breakdown",
        )
    }
    rows = []
    for backend, spec in ((b, s) for b in backends for s in specs):
        name, overrides = common.parse_preset(spec)
        text, flops_per_token = describe_flops(
            spec, name, args.size, args.vocab_sizes, overrides, batches[args.warmup :]
        )
        print(text)
        print(f"{spec} on {backend}: measuring ...", flush=True)
        if args.in_process:
            row = measure(spec, opts, batches)
        else:
            context = multiprocessing.get_context("spawn")
            with (
                common.keras_backend(backend),
                concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool,
            ):
                row = pool.submit(measure, spec, opts, batches).result()
        row["flops_per_token"] = flops_per_token
        if "error" in row:
            print(f"{spec} on {backend}: FAILED: {row['error']}")
        else:
            used = batches[args.warmup : args.warmup + row["steps"]]
            terms, a = flop_terms(name, args.size, args.vocab_sizes, overrides)
            fwd, tokens = batch_flops(name, terms, a, used)
            row["flops_per_token"] = 3 * fwd / tokens
            row["model_gflops"] = row["flops_per_token"] * row["tokens_per_s"] / 1e9
            row["mfu"] = row["model_gflops"] / row["matmul_gflops"]
            family = family_of(name)
            if family in peer:
                row["peer"] = peer[family][0]
                row["peer_src"] = "measured"
            else:
                row["peer"] = common.PEER_README[f"train_{family}_tokens_per_s"]
                row["peer_src"] = "README"
            row["vs_peer"] = row["tokens_per_s"] / row["peer"]
            print(
                f"{spec} on {backend}: {row['tokens_per_s']:.0f} tok/s, {row['pairs_per_s']:.1f} pairs/s, "
                f"{row['steps']} steps, MFU {100 * row['mfu']:.1f}%",
                flush=True,
            )
        rows.append(row)

    print()
    print(
        f"size={args.size} precision={args.precision} jit={args.jit} batch={args.batch_size} "
        f"batching={args.batching} vocab={args.vocab_sizes}"
    )
    columns = [
        ("preset", "preset", None),
        ("backend", "backend", None),
        ("params", "params", "{:,}"),
        ("steps", "steps", "{}"),
        ("tokens_per_s", "tgt tok/s", "{:,.0f}"),
        ("pairs_per_s", "pairs/s", "{:.1f}"),
        ("step_ms", "ms/step", "{:.0f}"),
    ]
    if args.breakdown:
        columns += [("forward_ms", "fwd ms", "{:.0f}"), ("fwd+bwd_ms", "fwd+bwd ms", "{:.0f}")]
    columns += [
        ("rss_mib", "peak RSS MiB", "{:,.0f}"),
        ("flops_per_token", "MFLOP/tok f+b", None),
        ("model_gflops", "model GFLOP/s", "{:.1f}"),
        ("matmul_gflops", "matmul GFLOP/s", "{:.1f}"),
        ("mfu", "MFU", "{:.1%}"),
        ("peer", "peer tok/s", "{:.0f}"),
        ("peer_src", "peer from", None),
        ("vs_peer", "x peer", "{:.2f}"),
        ("error", "error", None),
    ]
    for row in rows:
        row["flops_per_token"] = f"{row['flops_per_token'] / 1e6:.1f}"
    print(common.table(rows, columns))
    if not common.peer_ready():
        print(
            "peer: not set up here (/work/shared/peers/joeynmt/run.sh setup); ratios are to the "
            "peer README's figures (900 Bahdanau, 600 Luong target tokens/s), not measured."
        )
    print(
        f"MFU = analytic fwd+bwd matmul FLOPs of real tokens x tokens/s / the "
        f"{args.matmul_size}^3 matmul rate in the precision's compute dtype, measured after "
        "each preset in the same process."
    )
    print(common.machine_line())
    return rows


if __name__ == "__main__":
    main()
