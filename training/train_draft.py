"""Train the DFlash draft on the target's greedy answers (work/distill.npz from gen_distill.py).

Per sequence, K anchor positions a are drawn at random from the generated part. Each gives a block
[x_a, MASK x (B-1)] at positions a..a+B-1 that attends (non-causally) to itself and to the fused
target features of positions < a -- the same view llama.cpp's draft has when it drafts after the
target committed x_a. Loss: cross-entropy on block rows k = 1..B-1 against the target's greedy
tokens x_{a+k}, weighted exp(-(k-1)/gamma) (the DFlash recipe's decay: early rows matter most).
The token embedding and LM head are the target's, frozen (the draft GGUF borrows them).

The printed `tau` is the mean acceptance length a greedy verify would give on held-out blocks:
1 + the number of leading rows whose argmax equals the target's token.

    nice -n 10 python training/train_draft.py --minutes 8 --threads 1
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from data import MASK
from export_gguf import draft_head_ids, draft_names, load_ckpt, load_gguf_weights, load_target_gguf
from model import Draft, DraftConfig


class Blocks:
    _cache: dict = {}

    def __init__(self, path: Path, idx: np.ndarray, B: int, K: int, rng: np.random.Generator,
                 mask: int = MASK) -> None:
        if path not in Blocks._cache:  # train and val share one copy of the (large) arrays
            z = np.load(path)
            Blocks._cache[path] = {k: z[k] for k in ("tokens", "feats", "offsets", "prompt_len", "target_layers")}
        z = Blocks._cache[path]
        self.mask = mask
        self.tokens, self.feats, self.off, self.plen = z["tokens"], z["feats"], z["offsets"], z["prompt_len"]
        self.lids = [int(x) for x in z["target_layers"]]
        n = self.off[1:] - self.off[:-1]
        self.idx = idx[(n[idx] - self.plen[idx]) >= 2]
        self.B, self.K, self.rng = B, K, rng

    def batch(self, S: int, seqs: np.ndarray | None = None, anchors_per: int | None = None):
        B, K = self.B, anchors_per or self.K
        seqs = self.rng.choice(self.idx, size=S) if seqs is None else seqs
        S = len(seqs)
        lens = [int(self.off[s + 1] - self.off[s]) for s in seqs]
        Tc = max(lens)
        D = self.feats.shape[1]
        ctx = np.zeros((S, Tc, D), np.float32)
        btok = np.full((S, K * B), self.mask, np.int64)
        bpos = np.zeros((S, K * B), np.int64)
        lab = np.full((S, K * B), -100, np.int64)
        anc = np.zeros((S, K), np.int64)
        for r, s in enumerate(seqs):
            o, n, p = int(self.off[s]), lens[r], int(self.plen[s])
            x = self.tokens[o:o + n].astype(np.int64)
            ctx[r, :n] = self.feats[o:o + n]
            a = np.sort(self.rng.integers(p, n - 1, size=K))  # anchor in [p, n-2]
            anc[r] = a
            for j, aj in enumerate(a):
                sl = slice(j * B, (j + 1) * B)
                btok[r, j * B] = x[aj]
                bpos[r, sl] = aj + np.arange(B)
                m = min(B, n - aj)
                lab[r, j * B + 1:j * B + m] = x[aj + 1:aj + m]
        blk = np.repeat(np.arange(K), B)
        ctx_mask = np.arange(Tc)[None, None, :] < np.repeat(anc, B, axis=1)[:, :, None]   # [S, KB, Tc]
        blk_mask = np.broadcast_to(blk[:, None] == blk[None, :], (S, K * B, K * B))
        mask = np.concatenate([ctx_mask, blk_mask], axis=2)[:, None]
        t = torch.from_numpy
        return t(ctx), t(btok), t(bpos), t(lab), t(np.ascontiguousarray(mask))


def run(draft: Draft, embd: torch.Tensor, ctx, btok, bpos, lab, mask, labelled_only: bool = False,
        head_ids: torch.Tensor | None = None):
    """Logits [S, K*B, V]; labelled_only: (logits [n, V], labels [n]) of the rows with a label only
    (the anchor rows and rows past the end skip the 49k-wide head, most of the step's cost).
    head_ids (sorted token ids holding every label): the head is restricted to those rows of the
    embedding and the labels are their indices in it -- a sampled softmax that cuts the head's cost."""
    g = draft.encode(ctx)
    if not labelled_only:
        return draft(F.embedding(btok, embd), bpos, g, torch.arange(ctx.shape[1]), mask, embd)
    h = draft(F.embedding(btok, embd), bpos, g, torch.arange(ctx.shape[1]), mask, None)
    sel = lab.reshape(-1) != -100
    y = lab.reshape(-1)[sel]
    if head_ids is None:
        return F.linear(h.reshape(-1, h.shape[-1])[sel], embd), y
    return F.linear(h.reshape(-1, h.shape[-1])[sel], embd[head_ids]), torch.searchsorted(head_ids, y)


def feature_scale(blocks: "Blocks", n: int = 20000, floor: float = 1e-2) -> torch.Tensor:
    """1 / RMS of each feature dimension over n positions of the training sequences (see
    model.Draft.feat_scale)."""
    rows = np.concatenate([np.arange(blocks.off[s], blocks.off[s + 1] - 1) for s in blocks.idx])
    pick = np.random.default_rng(0).choice(rows, size=min(n, len(rows)), replace=False)
    f = blocks.feats[np.sort(pick)].astype(np.float32)
    return torch.from_numpy(1.0 / np.maximum(np.sqrt((f * f).mean(axis=0)), floor))


def tau_of(logits: torch.Tensor, lab: torch.Tensor, B: int) -> tuple[float, np.ndarray]:
    pred = logits.argmax(-1).view(-1, B)[:, 1:]
    y = lab.view(-1, B)[:, 1:]
    full = (y != -100).all(dim=1)
    ok = (pred == y)[full].int()
    acc = ok.cumprod(dim=1).sum(dim=1).float()
    per_pos = ok.float().mean(dim=0).numpy()
    return 1.0 + acc.mean().item(), per_pos


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("training/work"))
    ap.add_argument("--minutes", type=float, default=8.0)
    ap.add_argument("--block", type=int, default=8)
    ap.add_argument("--anchors", type=int, default=12)
    ap.add_argument("--seqs", type=int, default=8)
    ap.add_argument("--n-layer", type=int, default=1)
    ap.add_argument("--n-ff", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--gamma", type=float, default=4.0)
    ap.add_argument("--warmup", type=float, default=0.04)
    ap.add_argument("--ckpt-every", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--target-gguf", type=Path,
                    help="borrow embedding/head and shape from this llama GGUF (e.g. SmolLM2) instead of work/target.pt")
    ap.add_argument("--mask-id", type=int, default=MASK, help="the draft's mask token (default: the demo's)")
    ap.add_argument("--val-frac", type=float, default=1 / 40)
    ap.add_argument("--feat-norm", action=argparse.BooleanOptionalAction, default=True,
                    help="precondition fc with 1/RMS of each feature dim (folded into fc at export)")
    ap.add_argument("--init-gguf", type=Path,
                    help="start from this draft GGUF's weights (a previous round; same shape) instead of random")
    ap.add_argument("--keep-best", action="store_true",
                    help="also save the checkpoint with the best held-out tau so far to draft.best.pt (a data set "
                         "small enough to overfit: the last checkpoint need not be the best)")
    ap.add_argument("--head-neg", type=int, default=-1,
                    help=">= 0: train the head on the data's own tokens plus this many random others per "
                         "step (a sampled softmax); -1: the full vocabulary")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)

    out_norm = None
    if a.target_gguf:
        tc, embd, out_norm = load_target_gguf(a.target_gguf, embd_only=True)
    else:
        target = load_ckpt(a.work / "target.pt")
        embd = target.tok_embd.weight.detach().clone()
        tc = target.c
    n_seq = len(np.load(a.work / "distill.npz")["prompt_len"])
    perm = rng.permutation(n_seq)
    n_val = min(max(16, int(n_seq * a.val_frac)), n_seq // 4)
    train = Blocks(a.work / "distill.npz", perm[n_val:], a.block, a.anchors, rng, a.mask_id)
    val = Blocks(a.work / "distill.npz", perm[:n_val], a.block, a.anchors, np.random.default_rng(1), a.mask_id)
    val_batches = [val.batch(8, seqs=val.idx[i:i + 8], anchors_per=8) for i in range(0, min(64, len(val.idx)), 8)]

    cfg = DraftConfig(n_embd=tc.n_embd, n_layer=a.n_layer, n_head=tc.n_head, n_head_kv=tc.n_head_kv,
                      head_dim=tc.head_dim, n_ff=a.n_ff, target_layers=tuple(train.lids), block_size=a.block,
                      mask_token_id=a.mask_id, ctx=tc.ctx, rope_base=tc.rope_base, eps=tc.eps)
    draft = Draft(cfg)
    if a.feat_norm:
        draft.feat_scale.copy_(feature_scale(train))
        print(f"feature scale: 1/RMS in [{float(draft.feat_scale.min()):.2e}, {float(draft.feat_scale.max()):.2e}]",
              flush=True)
    data_ids = None
    if a.head_neg >= 0:  # the data's tokens (already in memory), and an earlier round's head (--init-gguf) too
        held = [train.tokens.astype(np.int64)] + ([draft_head_ids(a.init_gguf)] if a.init_gguf else [])
        data_ids = torch.from_numpy(np.unique(np.concatenate(held)))
    if data_ids is not None:
        print(f"head: {len(data_ids)} data tokens + {a.head_neg} random per step, of {embd.shape[0]}", flush=True)
    if a.init_gguf:  # a previous round's draft: its fc has the old feature scale folded in
        load_gguf_weights(draft, a.init_gguf, draft_names(cfg), strict=True)
        with torch.no_grad():  # unfold this round's scale, so fc(feats * scale) equals the loaded fc(feats)
            draft.fc.weight.div_(draft.feat_scale[None, :])
        print(f"initialised from {a.init_gguf}", flush=True)
    elif out_norm is not None:  # a real target's embedding rows are long: start with logits of std ~1
        with torch.no_grad():
            draft.output_norm.weight.fill_(1.0 / float(embd.std() * math.sqrt(embd.shape[1])))
    opt = torch.optim.AdamW(draft.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.01)
    step, spent = 0, 0.0
    ck_path = a.work / "draft.pt"
    if a.resume and ck_path.exists():
        ck = torch.load(ck_path, map_location="cpu", weights_only=False)
        draft.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, spent = ck["step"], ck["seconds"]
    print(f"draft {cfg}: {sum(p.numel() for p in draft.parameters()) / 1e6:.2f} M params; "
          f"{len(train.idx)} train / {len(val.idx)} val sequences", flush=True)
    B = a.block
    w = torch.tensor([0.0] + [math.exp(-(k - 1) / a.gamma) for k in range(1, B)])

    def loss_of(logits, lab):
        ce = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), lab.reshape(-1), reduction="none",
                             ignore_index=-100).view(-1, B)
        ww = w[None, :] * (lab.view(-1, B) != -100)
        return (ce * ww).sum() / ww.sum().clamp(min=1)

    @torch.no_grad()
    def evaluate():
        draft.eval()
        taus, pp, ls = [], [], []
        for vb in val_batches:
            lg = run(draft, embd, *vb)
            t, p = tau_of(lg, vb[3], B)
            taus.append(t)
            pp.append(p)
            ls.append(loss_of(lg, vb[3]).item())
        draft.train()
        return float(np.mean(ls)), float(np.mean(taus)), np.mean(pp, axis=0)

    def save(path: Path = ck_path):
        torch.save({"draft_cfg": cfg.to_dict(), "model": draft.state_dict(), "opt": opt.state_dict(),
                    "step": step, "seconds": spent}, path)

    best_tau = -1.0
    if a.init_gguf and not a.resume:  # where the last round's draft stands on this data: the bar to beat
        vl, vt, pp = evaluate()
        print(f"step 0 val {vl:.3f} tau {vt:.2f} pos-acc {np.round(pp, 2).tolist()}", flush=True)
        if a.keep_best:
            best_tau = vt
            save(a.work / "draft.best.pt")

    budget = a.minutes * 60
    t_last = time.time()
    losses = []
    while spent < budget:
        frac = spent / budget
        lr = a.lr * (frac / a.warmup if frac < a.warmup
                     else 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * (frac - a.warmup) / (1 - a.warmup))))
        for gr in opt.param_groups:
            gr["lr"] = lr
        ctx, btok, bpos, lab, mask = train.batch(a.seqs)
        head_ids = None
        if data_ids is not None:
            head_ids = torch.unique(torch.cat([data_ids, torch.randint(embd.shape[0], (a.head_neg,))]))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            lg, y = run(draft, embd, ctx, btok, bpos, lab, mask, labelled_only=True, head_ids=head_ids)
        ce = F.cross_entropy(lg.float(), y, reduction="none")
        wr = w.repeat(lab.numel() // B)[lab.reshape(-1) != -100]
        loss = (ce * wr).sum() / wr.sum().clamp(min=1e-6)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(draft.parameters(), 1.0)
        opt.step()
        step += 1
        now = time.time()
        spent += now - t_last
        t_last = now
        losses.append(loss.item())
        if step % a.ckpt_every == 0:
            vl, vt, pp = evaluate()
            t_last = time.time()
            print(f"step {step} {spent / 60:.1f} min lr {lr:.2e} train {np.mean(losses):.3f} val {vl:.3f} "
                  f"tau {vt:.2f} pos-acc {np.round(pp, 2).tolist()}", flush=True)
            losses = []
            save()
            if a.keep_best and vt > best_tau:
                best_tau = vt
                save(a.work / "draft.best.pt")
                print(f"best so far: tau {vt:.2f} at step {step}", flush=True)
    save()
    vl, vt, pp = evaluate()
    print(f"done: step {step}, {spent / 60:.1f} min, val {vl:.3f} tau {vt:.2f} pos-acc {np.round(pp, 2).tolist()}")


if __name__ == "__main__":
    main()
