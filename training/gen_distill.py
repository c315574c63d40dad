"""Distillation data for the draft: the target's own greedy answers to the training prompts.

For each training conversation's prompt (system/user turns + `<|im_start|>assistant\\n`) the trained
target generates greedily (fp32, KV cache, batches of prompts of equal length) until <|im_end|> or
--max-new tokens. The residual stream entering the draft's target layers is recorded for every
position on the way (the same rows llama.cpp's llama_get_embeddings_layer_inp returns), so the
draft trains on exactly the features and the greedy tokens it will see at inference.

Output: work/distill.npz with tokens (flat), feats (flat, f16, [N, L*E] in target_layers order),
offsets, prompt_len.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from data import IM_END
from export_gguf import load_ckpt


@torch.no_grad()
def generate(model, prompts: torch.Tensor, max_new: int, lids: list[int]):
    """prompts [B, P] -> tokens [B, P+n], feats [B, P+n, L*E], n_valid per row (incl. im_end)."""
    B, P = prompts.shape
    caches = [dict() for _ in model.layers]
    h, f = model(prompts, 0, layer_inputs=lids, caches=caches, return_hidden=True)
    feats = [torch.cat([f[l] for l in lids], dim=-1)]
    toks = [prompts]
    nxt = (h[:, -1] @ model.tok_embd.weight.T).argmax(-1)
    done = torch.zeros(B, dtype=torch.bool)
    length = torch.full((B,), P + max_new, dtype=torch.long)
    for i in range(max_new):
        toks.append(nxt[:, None])
        hit = (nxt == IM_END) & ~done
        length[hit] = P + i + 1
        done |= hit
        if done.all() or i == max_new - 1:
            break
        h, f = model(nxt[:, None], P + i, layer_inputs=lids, caches=caches, return_hidden=True)
        feats.append(torch.cat([f[l] for l in lids], dim=-1))
        nxt = (h[:, -1] @ model.tok_embd.weight.T).argmax(-1)
    tokens = torch.cat(toks, dim=1)
    fe = torch.cat(feats, dim=1)
    # features exist for every position whose token was fed; the last emitted token has none yet
    return tokens, fe, length


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("training/work"))
    ap.add_argument("--target-layers", default="1,2,3")
    ap.add_argument("--minutes", type=float, default=6.0)
    ap.add_argument("--max-new", type=int, default=160)
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    lids = [int(x) for x in a.target_layers.split(",")]
    model = load_ckpt(a.work / "target.pt")

    tok = np.load(a.work / "train_tokens.npy")
    off = np.load(a.work / "train_offsets.npy")
    from tokenizers import Tokenizer

    marker = np.asarray(Tokenizer.from_file(str(a.work / "tokenizer.json")).encode("<|im_start|>assistant\n").ids)
    m = len(marker)
    groups = defaultdict(list)
    for i in range(len(off) - 1):
        conv = tok[off[i]:off[i + 1]]
        win = np.lib.stride_tricks.sliding_window_view(conv, m)
        hit = np.flatnonzero((win == marker).all(axis=1))
        if len(hit):
            groups[int(hit[0]) + m].append(conv[:int(hit[0]) + m])
    rng = np.random.default_rng(0)
    order = []
    for P, ps in groups.items():
        ps = [ps[i] for i in rng.permutation(len(ps))]
        order += [ps[i:i + a.batch] for i in range(0, len(ps), a.batch)]
    order = [order[i] for i in rng.permutation(len(order))]

    out_tok, out_feat, offsets, plen = [], [], [0], []
    t0 = time.time()
    n_tok = 0
    for bi, ps in enumerate(order):
        if time.time() - t0 > a.minutes * 60:
            break
        prompts = torch.from_numpy(np.stack(ps).astype(np.int64))
        tokens, fe, length = generate(model, prompts, a.max_new, lids)
        P = prompts.shape[1]
        for r in range(len(ps)):
            n = int(length[r])
            # keep rows with features: positions 0..n-2 were fed (n-1 = last emitted token)
            t = tokens[r, :n].numpy().astype(np.uint16)
            f = fe[r, :n - 1].numpy().astype(np.float16)
            out_tok.append(t)
            out_feat.append(f)
            offsets.append(offsets[-1] + n)
            plen.append(P)
            n_tok += n - P
        if bi % 10 == 0:
            ended = float((length < P + a.max_new).float().mean())
            print(f"batch {bi}: {len(plen)} seqs, {n_tok} generated tokens, {time.time() - t0:.0f}s, "
                  f"{ended:.0%} ended with im_end", flush=True)
    # feats are one row shorter per sequence than tokens: store with the same offsets, padding a zero row
    feats = np.concatenate([np.concatenate([f, np.zeros((1, f.shape[1]), np.float16)]) for f in out_feat])
    np.savez(a.work / "distill.npz", tokens=np.concatenate(out_tok), feats=feats,
             offsets=np.asarray(offsets, np.int64), prompt_len=np.asarray(plen, np.int64),
             target_layers=np.asarray(lids, np.int64))
    print(f"wrote {len(plen)} sequences, {n_tok} generated tokens in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
