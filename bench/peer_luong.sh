#!/usr/bin/env bash
# The reference peer's Luong-style model, trained for a while so that its throughput can be
# taken beside bench/train_speed.py in one run (the peer's own run.sh times only its
# Bahdanau model).
#
#   bench/peer_luong.sh [SECONDS]     train for SECONDS (default 240), print steady-state tokens/s
#
# Needs the peer set up: ../shared/peers/joeynmt/run.sh setup (its virtual environment and
# SentencePiece models under JOEY_WORK, default /tmp/joeynmt-peer).
#
# The model is the peer README's Luong model: the peer's bahdanau.yaml with 2-layer LSTM 512
# encoder (unidirectional) and decoder, Luong "general" attention, input feeding, and the
# decoder started from the encoder's last state ("last"; Luong et al. use the final states).
# Everything else (8k vocabularies, embeddings 256, dropout 0.2, Adam, batch 64) is as in
# bahdanau.yaml. Joey NMT 2.3.0 crashes on a unidirectional RNN encoder: it always reads a
# second (backward) direction. The patch applied at runtime below uses the forward state
# alone when there is one direction, the fix the peer README describes.
#
# The log goes to $JOEY_WORK/logs/tput_luong.log; bench/train_speed.py reads it for its
# Luong rows ("peer from: measured").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peer=$here/../../shared/peers/joeynmt
work=${JOEY_WORK:-/tmp/joeynmt-peer}
py=${JOEY_VENV:-$work/venv}/bin/python
secs=${1:-240}
[ -x "$py" ] || { echo "peer not set up: run $peer/run.sh setup" >&2; exit 2; }
[ -e "$work/spm/spm.en.model" ] || { echo "peer not set up: run $peer/run.sh setup" >&2; exit 2; }

cfg=$work/tput_luong.yaml
# Only the lines that differ from bahdanau.yaml; encoder lines come before decoder lines.
sed -e "s#@WORK@#$work#g" \
    -e "s#model_dir: \"$work/runs/bahdanau\"#model_dir: \"$work/runs/tput_luong\"#" \
    -e "s#^\(    epochs:\).*#\1 1#; s#^\(    logging_freq:\).*#\1 20#; s#^\(    validation_freq:\).*#\1 100000#" \
    -e "s#rnn_type: \"gru\"#rnn_type: \"lstm\"#" \
    -e "s#hidden_size: 256        \# per direction -> 512 annotations#hidden_size: 512#" \
    -e "s#bidirectional: True#bidirectional: False#" \
    -e "s#num_layers: 1#num_layers: 2#" \
    -e "s#attention: \"bahdanau\".*#attention: \"luong\"#" \
    -e "s#init_hidden: \"bridge\".*#init_hidden: \"last\"#" \
    "$peer/bahdanau.yaml" > "$cfg"
for want in 'rnn_type: "lstm"' 'hidden_size: 512' 'bidirectional: False' 'num_layers: 2' \
            'attention: "luong"' 'init_hidden: "last"' 'input_feeding: True'; do
  grep -q "$want" "$cfg" || { echo "could not derive $cfg from bahdanau.yaml ($want)" >&2; exit 2; }
done

log=$work/logs/tput_luong.log
mkdir -p "$work/logs"
timeout -s INT "$secs" "$py" - "$cfg" > "$log" 2>&1 <<'PY' || true
import inspect, sys, textwrap
import joeynmt.encoders as encoders

# Joey NMT 2.3.0's RecurrentEncoder.forward reads hidden_layerwise[-1:, 1] (the backward
# direction) even when the RNN has one direction; use the forward state alone then.
source = textwrap.dedent(inspect.getsource(encoders.RecurrentEncoder.forward))
old = "bwd_hidden_last = hidden_layerwise[-1:, 1]"
if old not in source:
    sys.exit("joeynmt changed: the unidirectional-encoder patch no longer applies")
source = source.replace(old, "bwd_hidden_last = hidden_layerwise[-1:, 1] if self.rnn.bidirectional else hidden_layerwise[-1:, 0][..., :0]")
namespace = vars(encoders).copy()
exec(compile(source, encoders.__file__, "exec"), namespace)
encoders.RecurrentEncoder.forward = namespace["forward"]

from joeynmt.__main__ import main

sys.argv = ["joeynmt", "train", sys.argv[1], "-t"]  # as run.sh runs it: python -m joeynmt train CFG -t
main()
PY
grep -m1 "Total params" "$log" | sed 's/.* - //' || true
# Parsed by bench/common.py (standard library only), as train_speed.py reads the same log.
python3 - "$here" "$log" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from common import peer_log_figure

figure = peer_log_figure(sys.argv[2])
if figure is None:
    sys.exit("too few log lines: train longer (see " + sys.argv[2] + ")")
print(f"joeynmt luong: {figure['tokens_per_s']:.0f} target tokens/s, "
      f"{figure['pairs_per_s']:.1f} sentence pairs/s (steps {figure['first_step']}.."
      f"{figure['last_step']}, {figure['seconds']:.0f} s, batch 64)")
PY
