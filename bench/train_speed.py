"""Training throughput of the zoo presets on real Multi30k batches, with model-FLOP utilisation.

For each preset (built at `--size` with 8k SentencePiece vocabularies, the peer's sizes at
`base`): target tokens/s and sentence pairs/s of full training steps (forward, backward,
Adam with global-norm clipping 1.0 as the peer trains, `keras.optimizers.Adam`) in steady
state after warm-up, the process's peak RSS, the forward+backward matmul FLOPs per target
token (`zoo.models.params.flops`, read from the built model's layers; backward = 2 x
forward) and the model-FLOP utilisation against this machine's fp32 matmul rate, measured in
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

import statistics
import time

import common

DEFAULT_PRESETS = (
    "bahdanau_rnnsearch,luong_global_general:feed:unidirectional,"
    "luong_global_general:nofeed:unidirectional,luong_global_general"
)
# What `measure` reads of the flags.
OPTIONS = "size precision jit vocab_sizes warmup max_seconds matmul_size breakdown".split()


def family_of(name):
    """The peer model a preset is compared with: "luong" or "bahdanau"."""
    return "luong" if name.startswith("luong") else "bahdanau"


def parse_args(argv=None):
    p = common.parser(__doc__)
    common.add_preset_flags(p, DEFAULT_PRESETS)
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
    common.add_batch_flags(p)
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
    common.add_backend_flag(p)
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


def flop_report(spec, model, batches):
    """(the model's forward matmul FLOPs per target token of `batches`, term by term, as
    text; its forward+backward FLOPs per target token, 3 x the forward's)."""
    import numpy as np

    from zoo.models import params

    sources = [int(n) for x, _ in batches for n in np.count_nonzero(x["source_ids"], axis=1)]
    targets = [int(n) for _, y in batches for n in np.count_nonzero(y, axis=1)]
    units = params.flop_units(model, sources, targets)
    lines = [f"{spec}: forward matmul FLOPs per target token (x3 for forward+backward)"]
    for term, (unit, flops) in params.flop_terms(model).items():
        per = units[unit] / units["tgt"]
        lines.append(
            f"  {term:44s} {flops:>12,.0f} per {unit:4s} x {per:6.2f} = {flops * per / 1e6:7.3f} M"
        )
    total = params.flops(model, sources, targets) / units["tgt"]
    lines.append(f"  {'total forward':44s} {total / 1e6:40.3f} M;  fwd+bwd {3 * total / 1e6:.2f} M")
    return "\n".join(lines), 3 * total


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
    return 8 * 2 * n**3 * reps / (time.perf_counter() - start) / 1e9


def train_steps(model, optimizer, backend, jit, breakdown):
    """{"step": f(x, y) -> mean loss per token}: the backend's train step, the recipes'
    (`make_train_step`: a `tf.function` on TensorFlow, a jitted stateless step on batches
    padded to bucket lengths on JAX) or Keras's own of `model.fit` on PyTorch
    (`train_on_batch` with `zoo.training.keras_loss()`); with `breakdown` (TensorFlow),
    also "forward" and "fwd+bwd", the parts of the step."""
    from zoo.training import keras_loss, masked_token_stats
    from zoo.training.train_step import make_train_step

    if backend == "torch":
        model.compile(optimizer=optimizer, loss=keras_loss())
        return {"step": lambda x, y: float(model.train_on_batch(x, y))}
    step = make_train_step(model, optimizer, jit_compile=jit)
    if backend != "tensorflow":
        traced = lambda x, y: step((x, y))  # noqa: E731
    else:
        import tensorflow as tf

        ids = tf.TensorSpec((None, None), tf.int32)
        spec = ({"source_ids": ids, "target_ids": ids}, ids)
        traced = tf.function(lambda x, y: step((x, y)), input_signature=spec)

    def mean_loss_step(x, y):  # the step returns sums; the loop reads the mean per token
        loss_sum, _, tokens = traced(x, y)
        return float(loss_sum) / float(tokens)

    fns = {"step": mean_loss_step}
    if breakdown:

        def forward(x, y):
            loss_sum, _, tokens = masked_token_stats(y, model(x, training=True))
            return loss_sum / tf.maximum(tokens, 1.0)

        def forward_backward(x, y):
            with tf.GradientTape() as tape:
                loss = forward(x, y)
            tape.gradient(optimizer.scale_loss(loss), model.trainable_variables)
            return loss

        for key, function in (("forward", forward), ("fwd+bwd", forward_backward)):
            fns[key] = tf.function(function, input_signature=spec, jit_compile=jit)
    return fns


def compile_shapes(fns, warm, timed, key):
    """Runs the step once on a batch of each shape `key(x, y)` of `timed` not in `warm`:
    backends that compile per shape (XLA, `jax.jit`) compile before the timing."""
    seen = {key(x, y) for x, y in warm}
    for x, y in timed:
        if key(x, y) not in seen:
            seen.add(key(x, y))
            fns["step"](x, y)


def measure(spec, opts, batches):
    """Builds preset `spec`, times its train steps on `batches` (NumPy) after `warmup` of
    them, and returns its row (run in a fresh process of its own, `common.run_on`)."""
    import keras
    import numpy as np

    from zoo.backend import backend_name
    from zoo.training.train_step import prepare_optimizer

    backend = backend_name()
    model = common.build_model(
        spec, opts["size"], opts["vocab_sizes"], precision=opts["precision"], seed=0
    )
    # What training runs: the default optimizer (Adam, as the peer's runs, clipped to global
    # norm 1) and the backend's train step (loss, normalisation, clipping, loss scaling).
    optimizer = prepare_optimizer("adam", model)
    fns = train_steps(model, optimizer, backend, opts["jit"], opts["breakdown"])
    tensors = batches
    if backend == "tensorflow":
        import tensorflow as tf

        tensors = [({k: tf.constant(v) for k, v in x.items()}, tf.constant(y)) for x, y in batches]
    warmup = opts["warmup"]
    warm, timed = tensors[:warmup], tensors[warmup:]
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
            fns["step"](x, y)
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
        row["rss_mib"] = common.peak_memory_mib()
        return row
    row["warmup_s"] = time.perf_counter() - start

    times, loss = common.time_each(lambda b: fns["step"](*b), timed, opts["max_seconds"])
    done, elapsed = len(times), sum(times)
    tokens = sum(int(np.count_nonzero(np.asarray(y))) for _, y in timed[:done])
    pairs = sum(int(y.shape[0]) for _, y in timed[:done])
    for key in ("forward", "fwd+bwd"):
        if key in fns:
            fns[key](*timed[0]).numpy()
            parts, _ = common.time_each(lambda b, f=fns[key]: f(*b).numpy(), timed[:done])
            row[f"{key}_ms"] = 1e3 * sum(parts) / done
    text, flops_per_token = flop_report(spec, model, batches[warmup : warmup + done])
    print(text, flush=True)
    rate = matmul_rate(opts["matmul_size"], keras.config.dtype_policy().compute_dtype)
    row.update(
        steps=done,
        seconds=elapsed,
        tokens_per_s=tokens / elapsed,
        pairs_per_s=pairs / elapsed,
        step_ms_median=1e3 * statistics.median(times),
        step_ms=1e3 * elapsed / done,
        loss=loss,
        rss_mib=common.peak_memory_mib(),
        matmul_gflops=rate,
        used_batches=warmup + done,
        flops_per_token=flops_per_token,
        mflop_per_token=flops_per_token / 1e6,
        model_gflops=flops_per_token * tokens / elapsed / 1e9,
    )
    row["mfu"] = row["model_gflops"] / rate
    return row


def load_batches(args):
    """warmup + steps real train batches of the benchmark corpus as NumPy (the same ones for
    every preset); sets `args.vocab_sizes`, the tokenizers' (SentencePiece may learn fewer
    pieces than asked: 8000 -> 7931 for Multi30k en)."""
    import numpy as np

    from zoo.data import make_dataset

    source_tok, target_tok = common.tokenizers(args.vocab_size)
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
        ({k: np.asarray(v) for k, v in x.items()}, np.asarray(y))
        for x, y in dataset.take(args.warmup + args.steps).as_numpy_iterator()
    ]
    print(
        f"{len(batches)} train batches of {args.batch_size} in {time.perf_counter() - start:.1f} "
        "s (tokenisation included; not part of the timing)"
    )
    return batches


COLUMNS = [
    ("preset", "preset", None),
    ("backend", "backend", None),
    ("params", "params", "{:,}"),
    ("steps", "steps", "{}"),
    ("tokens_per_s", "tgt tok/s", "{:,.0f}"),
    ("pairs_per_s", "pairs/s", "{:.1f}"),
    ("step_ms", "ms/step", "{:.0f}"),
    ("forward_ms", "fwd ms", "{:.0f}"),
    ("fwd+bwd_ms", "fwd+bwd ms", "{:.0f}"),
    ("rss_mib", "peak RSS MiB", "{:,.0f}"),
    ("mflop_per_token", "MFLOP/tok f+b", "{:.1f}"),
    ("model_gflops", "model GFLOP/s", "{:.1f}"),
    ("matmul_gflops", "matmul GFLOP/s", "{:.1f}"),
    ("mfu", "MFU", "{:.1%}"),
    ("peer", "peer tok/s", "{:.0f}"),
    ("peer_src", "peer from", None),
    ("vs_peer", "x peer", "{:.2f}"),
    ("error", "error", None),
]


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
    specs = common.preset_specs(args.presets, args.size)
    families = sorted({family_of(spec) for spec in specs})
    peer = {}  # family -> (tokens/s, line), for the families measured here
    for family in families if common.peer_ready() else ():
        figure = common.peer_train_figure(family, args.run_peer or None)
        if figure:
            peer[family] = figure
            print(f"peer: {figure[1]}")
    batches = load_batches(args)
    opts = {key: getattr(args, key) for key in OPTIONS}
    rows = []
    for backend, spec in ((b, s) for b in backends for s in specs):
        print(f"{spec} on {backend}: measuring ...", flush=True)
        if args.in_process:
            row = measure(spec, opts, batches)
        else:
            row = common.run_on(backend, measure, spec, opts, batches)
        if "error" in row:
            print(f"{spec} on {backend}: FAILED: {row['error']}")
        else:
            family = family_of(spec)
            row["peer"], row["peer_src"] = (
                (peer[family][0], "measured")
                if family in peer
                else (common.PEER_README[f"train_{family}_tokens_per_s"], "README")
            )
            row["vs_peer"] = row["tokens_per_s"] / row["peer"]
            print(
                f"{spec} on {backend}: {row['tokens_per_s']:.0f} tok/s, {row['pairs_per_s']:.1f} "
                f"pairs/s, {row['steps']} steps, MFU {100 * row['mfu']:.1f}%",
                flush=True,
            )
        rows.append(row)

    print()
    print(
        f"size={args.size} precision={args.precision} jit={args.jit} batch={args.batch_size} "
        f"batching={args.batching} vocab={args.vocab_sizes}"
    )
    breakdown = ("forward_ms", "fwd+bwd_ms")
    print(common.table(rows, [c for c in COLUMNS if args.breakdown or c[0] not in breakdown]))
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
