#!/usr/bin/env bash
# GPU check (under 8 minutes on one GPU): installs the project, trains the Luong
# base model (luong_global_general, base, 8k vocabularies, batch 64, real Multi30k batches)
# for a few hundred steps in mixed_float16 and in float32 and prints target tokens/s of each,
# then beam-5 (and greedy) decoding speed of test2016 at batch 64.
#
#   bash bench/gpu_check.sh [STEPS]      (default 200 timed steps per precision)
#
# Needs the corpora at $ZOO_DATA_DIR (default: shared/data beside the checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-200}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
# The device machine may have no network: install without resolving dependencies first; it
# needs a GPU build of TensorFlow 2.21 (pip's "tensorflow[and-cuda]") already installed.
pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2 || pip install -q -e . 2>&1 | tail -2
python -c "import tensorflow as tf; print('TF', tf.__version__, tf.config.list_physical_devices('GPU'))"
for precision in mixed_float16 float32; do
  timeout 200 python bench/train_speed.py --presets luong_global_general,luong_global_general:nofeed \
    --precision "$precision" --steps "$steps" --warmup 10 --max-seconds 60 --matmul-size 4096 \
    | tail -8 || echo "train_speed $precision: failed or timed out"
done
timeout 150 python bench/decode_speed.py --presets luong_global_general --batch-sizes 64 \
  --paths translator --limit 1000 || echo "decode_speed: failed or timed out"
