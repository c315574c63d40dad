"""Merge distillation sets (gen_distill_llama.py's distill.npz files) into one, for a training round
that learns from several generation runs: sequences are appended in order, offsets shifted.

    python training/merge_distill.py work/smol/distill.npz work/smol/distill_r3.npz work/smol/distill_r3b.npz
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def merge(out: Path, parts: list[Path]) -> None:
    zs = [np.load(p) for p in parts]
    lids = [z["target_layers"].tolist() for z in zs]
    assert all(x == lids[0] for x in lids), f"target layers differ: {lids}"
    offsets, base = [np.zeros(1, np.int64)], 0
    for z in zs:
        offsets.append(z["offsets"][1:] + base)
        base += int(z["offsets"][-1])
    np.savez(out, tokens=np.concatenate([z["tokens"] for z in zs]), feats=np.concatenate([z["feats"] for z in zs]),
             offsets=np.concatenate(offsets), prompt_len=np.concatenate([z["prompt_len"] for z in zs]),
             target_layers=zs[0]["target_layers"], sampled=np.concatenate([z["sampled"] for z in zs]),
             kind=np.concatenate([z["kind"] for z in zs]))
    print(f"wrote {out}: {sum(len(z['prompt_len']) for z in zs)} sequences, {base} tokens")


if __name__ == "__main__":
    merge(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
