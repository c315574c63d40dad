"""Measure, before training, how llama.cpp on this CPU prices a k-token verify against k single decodes.

For each candidate target shape it exports random weights (Q8_0) plus a matching random draft, and
times: one-token decode, verify batches of k+1 tokens, the draft block and the feature injection.
The break-even acceptance length for DFlash is then tau* = (t_verify + t_draft + t_inject) / t_1.

    nice -n 10 python training/probe_speed.py --shapes 384x6x1024 512x8x1408
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from data import load_vocab
from export_gguf import export_draft, export_target
from llama_run import L, Pair
from model import Draft, DraftConfig, Target, TargetConfig


def bench(fn, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", nargs="+", default=["384x6x1024"], help="n_embd x n_layer x n_ff")
    ap.add_argument("--tokenizer", type=Path, default=Path("training/work/tokenizer.json"))
    ap.add_argument("--ctx", type=int, default=300, help="tokens already in the cache")
    ap.add_argument("--draft-layers", type=int, default=1)
    ap.add_argument("--ttype", default="f32")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    tokens, merges = load_vocab(a.tokenizer)
    V = len(tokens)
    for shape in a.shapes:
        E, nl, ff = map(int, shape.split("x"))
        tc = TargetConfig(vocab=V, n_embd=E, n_layer=nl, n_head=E // 64, n_head_kv=E // 64, n_ff=ff)
        lids = tuple(sorted({1, nl // 2, nl - 1}))
        dc = DraftConfig(n_embd=E, n_layer=a.draft_layers, n_head=E // 64, n_head_kv=E // 64, head_dim=64,
                         n_ff=ff, target_layers=lids, mask_token_id=3)
        torch.manual_seed(0)
        with tempfile.TemporaryDirectory() as d:
            tp, dp = Path(d) / "t.gguf", Path(d) / "d.gguf"
            export_target(Target(tc), tokens, merges, tp, a.ttype)
            export_draft(Draft(dc), tokens, merges, dp, "f16")
            size = tp.stat().st_size / 2**20
            pr = Pair(tp, dp, n_ctx=1024, n_batch=512, n_threads=a.threads)
            prompt = list(range(10, 10 + a.ctx))
            pr.target_decode(prompt, 0, out=False)
            pr.inject(pr.features(), 0)
            P = a.ctx

            def one():
                pr.target_decode([5], P, out=True)
                pr.target_rm(P)

            res = {"t1": bench(one, 40)}
            for k in (4, 8, 16):
                def ver(k=k):
                    pr.target_decode([5] * k, P, out=True)
                    pr.target_rm(P)
                res[f"v{k}"] = bench(ver, 15)
            for k in (4, 8, 16):
                res[f"d{k}"] = bench(lambda k=k: pr.draft_block(5, P, k - 1), 15)
            pr.target_decode([5] * 8, P, out=True)
            f = pr.features()
            pr.target_rm(P)

            def inj():
                pr.inject(f[:4], P)
                assert L.llama_memory_seq_rm(
                    L.llama_get_memory(pr.cd), 0, P, -1)
            res["inj4"] = bench(inj, 15)
            pr.close()
        t1 = res["t1"]
        line = f"{shape}: {size:.1f} MiB  t1={t1 * 1e3:.2f}ms"
        for k in (4, 8, 16):
            tot = res[f"v{k}"] + res[f"d{k}"] + res["inj4"]
            line += (f" | k={k}: verify {res[f'v{k}'] * 1e3:.2f} draft {res[f'd{k}'] * 1e3:.2f}"
                     f" -> tau* {tot / t1:.2f}")
        print(line, f" inj {res['inj4'] * 1e3:.2f}ms", flush=True)


if __name__ == "__main__":
    main()
