#!/usr/bin/env bash
# Rebuild the bundled demo pair (resources/demo/) from scratch, CPU only, offline.
# About 40 minutes of wall time on 2 shared cores. Needs a venv with the `train` extra:
#   python3 -m venv /tmp/venv-train && /tmp/venv-train/bin/pip install torch==2.13.0 numpy gguf==0.19.0 \
#       tokenizers llama-cpp-python==0.3.36
# PY=/path/to/that/python bash training/build_demo.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
PY="${PY:-/tmp/venv-train/bin/python}"
W=training/work
mkdir -p "$W/logs" resources/demo
run() { nice -n 10 "$PY" "$@"; }
# 1 thread: on a 2-core machine shared with other work, a second OpenMP thread mostly waits at barriers.
run training/data.py --out "$W"                                   # ~2 min: corpus, chat samples, BPE
run training/train_target.py --work "$W" --minutes 20 --threads 1 # target LM, time-budgeted schedule
run training/gen_distill.py --work "$W" --minutes 4 --threads 1  # target's greedy answers + features
run training/train_draft.py --work "$W" --minutes 8 --threads 1  # DFlash draft on them
run training/export_gguf.py --tokenizer "$W/tokenizer.json" --target-ckpt "$W/target.pt" --draft-ckpt "$W/draft.pt" \
    --target-type f32 --target-out resources/demo/demo-target.F32.gguf \
    --draft-type f16 --draft-out resources/demo/demo-dflash.F16.gguf
run training/verify_fidelity.py --work "$W" --target resources/demo/demo-target.F32.gguf \
    --draft resources/demo/demo-dflash.F16.gguf --json "$W/fidelity.json"
