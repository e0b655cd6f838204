"""Precision policies: "float32", "mixed_float16", "mixed_bfloat16".

Call `set_precision` *before* building the model: Keras layers read the global policy when
they are created. Under a mixed policy the layers compute in float16/bfloat16 with float32
variables; `zoo.training.losses` casts logits to float32 so softmax and loss stay float32,
and `zoo.training.train` wraps the optimizer in `keras.optimizers.LossScaleOptimizer` when
the model's policy is "mixed_float16" (bfloat16 has float32's range and needs no scaling).

`auto_precision` chooses for the machine at hand (`--precision auto`): "mixed_bfloat16" on
a CPU with AMX bfloat16 matrix units (Intel Sapphire Rapids and later), where TensorFlow's
oneDNN kernels run bfloat16 matrix products several times faster than float32, and
"float32" elsewhere (measurements: bench/RESULTS.md, "Precision on the CPU").

Example:
    previous = set_precision("mixed_bfloat16")
    model = zoo.models.build(...)
    ...
    set_precision(previous)  # restore
"""

import keras

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
AUTO = "auto"  # `auto_precision` decides
BFLOAT16_FLAGS = ("amx_bf16",)
"""The CPU flags (/proc/cpuinfo) under which `auto_precision` trains in bfloat16."""
MATRIX_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8")
"""The CPU flags that decide the speed of matrix products, as results record them."""
CPUINFO = "/proc/cpuinfo"


def cpu_flags(cpuinfo=None):
    """The CPU's flags (a frozenset of str) read from `cpuinfo`, the text of /proc/cpuinfo
    (default: this machine's; an empty set where there is none, e.g. macOS)."""
    if cpuinfo is None:
        try:
            with open(CPUINFO, encoding="utf-8") as f:
                cpuinfo = f.read()
        except OSError:
            return frozenset()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def auto_precision(flags=None, gpus=None):
    """(precision, reason): the policy `--precision auto` trains with on this machine.

    Args:
        flags: the CPU's flags (default: `cpu_flags()`).
        gpus: the number of visible GPUs (default: TensorFlow's count).

    "mixed_bfloat16" where the CPU has AMX bfloat16 units (`BFLOAT16_FLAGS`) and no GPU
    trains; else "float32". The reason names the flags it saw."""
    flags = cpu_flags() if flags is None else frozenset(flags)
    if gpus is None:
        import tensorflow as tf

        gpus = len(tf.config.list_physical_devices("GPU"))
    seen = " ".join(f for f in MATRIX_FLAGS if f in flags) or "none of " + " ".join(MATRIX_FLAGS)
    if gpus:
        return (
            "float32",
            f"{gpus} GPU(s) train; --precision mixed_float16 computes in float16 there",
        )
    if all(f in flags for f in BFLOAT16_FLAGS):
        return "mixed_bfloat16", f"the CPU has AMX bfloat16 units (flags: {seen})"
    return "float32", f"the CPU has no AMX bfloat16 units (flags: {seen})"


def set_precision(name):
    """Sets the global Keras dtype policy to `name`; returns the previous policy's name."""
    if name not in PRECISIONS:
        raise ValueError(f"Unknown precision {name!r}; expected one of {PRECISIONS}.")
    previous = keras.config.dtype_policy().name
    keras.config.set_dtype_policy(name)
    return previous


def needs_loss_scaling(model):
    """True when `model` computes in float16 (its dtype policy is mixed_float16 or float16)."""
    return model.dtype_policy.compute_dtype == "float16"
