"""Keep a distillation run's replies in the repo, and rebuild its features from them later.

A run of `gen_distill_llama.py` writes the target's replies *and* the layer inputs of every position
(5 layers x 576 x f16 = 5.8 KB a token: ~2 GB a run). Only the replies are worth keeping: the features
are a pure function of the tokens and the target file. Rounds 1-4's data were lost with the machines
that made them, so each new round had to start from new replies alone. Now a run is packed into
`training/data/NAME.npz` (token ids as uint16, offsets, prompt lengths, kind, greedy or sampled, and
the prompts: 0.2-0.4 MB a run) and committed; the next round rebuilds the features of every kept run with
one llama.cpp prefill per sequence and trains on all of them. That is not free on a CPU: on the F16 copy
with 2 threads it took 0.74 s a reply here (500 of round 5's replies in 371 s, 2026-12-06), ~45 minutes
for round 5's 3,572, against the 77 minutes that generated them.

    python training/replies.py pack work/smol/gen5.npz work/smol/gen5_prompts.json data/smollm2_r5a.npz
    python training/replies.py feats --target work/smol/target.F16.gguf data/smollm2_r5a.npz work/smol/r5a.npz
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

KEYS = ("tokens", "offsets", "prompt_len", "sampled", "kind")


def pack(distill: Path, prompts: Path, out: Path) -> None:
    """A distill.npz (with features) and its prompts list -> the replies alone, compressed."""
    z = np.load(distill)
    ps = json.loads(prompts.read_text())
    assert len(ps) == len(z["prompt_len"]), (len(ps), len(z["prompt_len"]))
    assert int(z["tokens"].max()) < 65536
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **{k: z[k] for k in KEYS}, target_layers=z["target_layers"],
                        prompts=np.asarray(ps))
    gen = int(z["offsets"][-1]) - int(z["prompt_len"].sum())
    print(f"packed {len(ps)} replies, {gen} generated tokens -> {out} ({out.stat().st_size / 1e6:.2f} MB)")


def feats(target: Path, replies: Path, out: Path, threads: int) -> None:
    """The replies -> a distill.npz with the target's layer inputs of every position but the last of
    each sequence (a zero row there), as gen_distill_llama.py writes it."""
    from gen_distill_llama import load_target
    from llama_run import L, get_layer_inp

    z = np.load(replies)
    lids = [int(x) for x in z["target_layers"]]
    offs = z["offsets"]
    n = max(512, int(np.diff(offs).max()))
    m, ct = load_target(target, n, n, 1, threads, lids)  # the run's own loader: same taps, same CPU path
    E = L.llama_model_n_embd(m)
    batch = L.llama_batch_init(n, 0, 1)
    mem = L.llama_get_memory(ct)
    rows = np.zeros((int(offs[-1]), E * len(lids)), np.float16)
    t0 = time.time()
    for s in range(len(offs) - 1):
        toks = z["tokens"][offs[s]:offs[s + 1] - 1]  # the last token is never fed
        for i, t in enumerate(toks):
            batch.token[i], batch.pos[i] = int(t), i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = int(i == len(toks) - 1)
        batch.n_tokens = len(toks)
        assert L.llama_decode(ct, batch) == 0
        rows[offs[s]:offs[s + 1] - 1] = np.concatenate(
            [np.ctypeslib.as_array(get_layer_inp(ct, lid), shape=(len(toks), E)) for lid in lids], axis=1)
        assert L.llama_memory_seq_rm(mem, 0, -1, -1)
        if s % 500 == 499:
            print(f"{s + 1} sequences, {time.time() - t0:.0f}s", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **{k: z[k] for k in KEYS}, feats=rows, target_layers=z["target_layers"])
    print(f"wrote {out}: {len(offs) - 1} sequences, {int(offs[-1])} tokens in {time.time() - t0:.0f}s")
    L.llama_batch_free(batch)
    L.llama_free(ct)
    L.llama_model_free(m)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="keep a run's replies (no features)")
    p.add_argument("distill", type=Path)
    p.add_argument("prompts", type=Path)
    p.add_argument("out", type=Path)
    f = sub.add_parser("feats", help="rebuild a kept run's features with llama.cpp")
    f.add_argument("--target", type=Path, required=True, help="the target GGUF the replies came from")
    f.add_argument("--threads", type=int, default=2)
    f.add_argument("replies", type=Path)
    f.add_argument("out", type=Path)
    a = ap.parse_args()
    if a.cmd == "pack":
        pack(a.distill, a.prompts, a.out)
    else:
        feats(a.target, a.replies, a.out, a.threads)


if __name__ == "__main__":
    main()
