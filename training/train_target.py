"""Train the demo target LM (arch `llama` mirror, see model.py) on the stdlib chat corpus.

The learning-rate schedule runs on wall time (warm-up, then cosine to 10% at --minutes), so a run
fits a time budget on a shared 2-core machine. A checkpoint is written every --ckpt-every steps and
at the end; --resume continues from one.

    nice -n 10 python training/train_target.py --minutes 20
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from model import Target, TargetConfig


def batches(tokens: np.ndarray, offsets: np.ndarray, bs: int, T: int, rng: np.random.Generator):
    """Windows of T+1 tokens starting at random conversation starts (packed across conversations)."""
    starts = offsets[:-1][offsets[:-1] + T + 1 <= len(tokens)]
    while True:
        s = rng.choice(starts, size=bs)
        yield torch.from_numpy(np.stack([tokens[i:i + T + 1] for i in s]).astype(np.int64))


@torch.no_grad()
def evaluate(model: Target, val: torch.Tensor) -> float:
    model.eval()
    tot = 0.0
    for i in range(0, len(val), 8):
        x = val[i:i + 8]
        lg = model(x[:, :-1])
        tot += F.cross_entropy(lg.reshape(-1, lg.shape[-1]), x[:, 1:].reshape(-1), reduction="sum").item()
    model.train()
    return tot / (val.shape[0] * (val.shape[1] - 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("training/work"))
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--n-embd", type=int, default=384)
    ap.add_argument("--n-layer", type=int, default=4)
    ap.add_argument("--n-head", type=int, default=6)
    ap.add_argument("--n-ff", type=int, default=1152)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=float, default=0.03, help="fraction of the time budget")
    ap.add_argument("--ckpt-every", type=int, default=25)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resume", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)

    tok = np.load(a.work / "train_tokens.npy")
    off = np.load(a.work / "train_offsets.npy")
    vtok = np.load(a.work / "val_tokens.npy")
    vocab = int(max(tok.max(), vtok.max())) + 1
    vocab = max(vocab, 4096)
    n_val = min(32, (len(vtok) - 1) // (a.seq + 1))
    val = torch.from_numpy(vtok[: n_val * (a.seq + 1)].reshape(n_val, a.seq + 1).astype(np.int64))

    cfg = TargetConfig(vocab=vocab, n_embd=a.n_embd, n_layer=a.n_layer, n_head=a.n_head, n_head_kv=a.n_head,
                       n_ff=a.n_ff)
    model = Target(cfg)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), fused=False)
    ck_path = a.work / "target.pt"
    step, spent = 0, 0.0
    if a.resume and ck_path.exists():
        ck = torch.load(ck_path, map_location="cpu", weights_only=False)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, spent = ck["step"], ck["seconds"]
        print(f"resumed at step {step}, {spent / 60:.1f} min spent")
    n_params = sum(p.numel() for p in model.parameters())
    print(f"target {cfg}: {n_params / 1e6:.2f} M params; {len(tok) / 1e6:.2f} M train tokens", flush=True)

    def save():
        torch.save({"cfg": cfg.to_dict(), "model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                    "seconds": spent}, ck_path)

    budget = a.minutes * 60
    gen = batches(tok, off, a.batch, a.seq, rng)
    t_last = time.time()
    losses = []
    model.train()
    while spent < budget:
        frac = spent / budget
        lr = a.lr * (frac / a.warmup if frac < a.warmup
                     else 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (frac - a.warmup) / (1 - a.warmup))))
        for g in opt.param_groups:
            g["lr"] = lr
        x = next(gen)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            lg = model(x[:, :-1])
        loss = F.cross_entropy(lg.float().reshape(-1, vocab), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        now = time.time()
        spent += now - t_last
        t_last = now
        losses.append(loss.item())
        if step % a.ckpt_every == 0:
            vl = evaluate(model, val)
            t_last = time.time()  # evaluation is not charged to the budget
            print(f"step {step} {spent / 60:.1f} min lr {lr:.2e} train {np.mean(losses):.3f} val {vl:.3f} "
                  f"({step * a.batch * a.seq / max(spent, 1e-9):.0f} tok/s)", flush=True)
            losses = []
            save()
    save()
    print(f"done: step {step}, {spent / 60:.1f} min, val {evaluate(model, val):.3f}", flush=True)


if __name__ == "__main__":
    main()
