"""Export fidelity: llama.cpp logits vs the PyTorch mirrors on the same inputs.

Target: one llama.cpp decode of a whole sequence with every row output, vs `Target.forward`.
Draft: the llama.cpp DFlash flow (driver doc §1): target decode of the prefix -> layer inputs ->
inject into the draft KV -> block [anchor, mask x (B-1)] -> logits of every row, vs `Draft.forward`
with the same features, at several anchors per sequence (features are injected incrementally, as
the app does). The PyTorch side loads the weights back from the GGUF files (dequantized), so the
comparison isolates the graphs; the script also reports the drift against the fp32 checkpoints.

Pass criterion (exit 1 otherwise): max |Δlogit| <= --tol (default 0.05; the logits span ~±20) for
the draft and <= --tol-target for the target. Argmax agreement is reported too.

A real target with no training checkpoint (SmolLM2: no work/target.pt) is mirrored from its own GGUF
(`TargetConfig.from_gguf`, dequantized weights), so the check isolates llama.cpp's graph and its
activation rounding (a Q4_1 file's matmuls quantize activations to Q8_1). --no-draft checks only the
target (logits and the layer inputs at --target-layers).

    python training/verify_fidelity.py --target resources/demo/demo-target.gguf \
        --draft resources/demo/demo-dflash.gguf
    python training/verify_fidelity.py --work training/work/smol --target SmolLM2-135M-Instruct.Q4_1.gguf \
        --draft resources/smollm2/SmolLM2-135M-Instruct-DFlash.F16.gguf --tol-target 2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import gguf
import numpy as np
import torch

from export_gguf import draft_names, load_ckpt, load_gguf_weights, load_target_gguf, target_names
from llama_run import Pair, set_layer_inp
from model import Draft, DraftConfig, Target, TargetConfig


def torch_from_gguf(kind: str, path: Path, ckpt: Path) -> torch.nn.Module:
    if kind == "target" and not ckpt.exists():
        return load_target_gguf(path)
    ref = load_ckpt(ckpt)
    if kind == "target":
        m = Target(TargetConfig(**ref.c.to_dict()))
        load_gguf_weights(m, path, target_names(m.c))
    else:
        c = ref.c.to_dict()
        c["target_layers"] = tuple(c["target_layers"])
        m = Draft(DraftConfig(**c))
        load_gguf_weights(m, path, draft_names(m.c))
    return m.eval()


def draft_head(path: Path) -> tuple[np.ndarray, torch.Tensor] | None:
    """A reduced-head draft's (d2t target ids, its own output rows [n, E]); None when it borrows the
    target's head. Its logits are -inf outside those ids, so only they are compared."""
    r = gguf.GGUFReader(str(path))
    t = {x.name: x for x in r.tensors}
    if "d2t" not in t:
        return None
    ids = np.asarray(t["d2t"].data, np.int64).reshape(-1)
    o = t["output.weight"]
    rows = gguf.quants.dequantize(o.data, o.tensor_type).astype(np.float32).reshape(len(ids), -1)
    return ids, torch.from_numpy(rows)


@torch.no_grad()
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("training/work"))
    ap.add_argument("--target", type=Path, required=True)
    ap.add_argument("--draft", type=Path)
    ap.add_argument("--no-draft", action="store_true", help="check the target only")
    ap.add_argument("--target-layers", default=None, help="with --no-draft: layer inputs to compare")
    ap.add_argument("--distill", type=Path, default=None, help="sequences to run (default work/distill.npz)")
    ap.add_argument("--n-seq", type=int, default=6)
    ap.add_argument("--tol", type=float, default=0.05)
    ap.add_argument("--tol-target", type=float, default=None, help="default: --tol")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the figures here")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    tol_t = a.tol if a.tol_target is None else a.tol_target

    tgt = torch_from_gguf("target", a.target, a.work / "target.pt")
    has_ck = (a.work / "target.pt").exists()
    tgt_ck = load_ckpt(a.work / "target.pt") if has_ck else tgt
    z = np.load(a.distill or a.work / "distill.npz")
    if a.no_draft:
        dft = dft_ck = None
        lids = [int(x) for x in a.target_layers.split(",")] if a.target_layers else [int(x) for x in z["target_layers"]]
    else:
        dft = torch_from_gguf("draft", a.draft, a.work / "draft.pt")
        dft_ck = load_ckpt(a.work / "draft.pt")
        lids = list(dft.c.target_layers)
        B = dft.c.block_size
        MASK = dft.c.mask_token_id
    embd = tgt.tok_embd.weight
    head, cols = embd, slice(None)  # the draft's output head, and the logit columns it has
    red = None if a.no_draft else draft_head(a.draft)
    if red is not None:
        cols = red[0]
        head = embd.clone()
        head[torch.from_numpy(cols)] = red[1]
        print(f"reduced draft head: {len(cols)} of {embd.shape[0]} tokens (d2t)")

    rng = np.random.default_rng(123)
    seqs = rng.choice(len(z["prompt_len"]), size=min(a.n_seq, len(z["prompt_len"])), replace=False)
    pair = Pair(a.target, None if a.no_draft else a.draft, n_ctx=1024, n_batch=512, n_threads=a.threads)
    if a.no_draft:
        pair.lids = lids
        for lid in lids:
            set_layer_inp(pair.ct, lid, True)
    assert pair.lids == lids, (pair.lids, lids)
    lrel = 0.0
    res = {"target_max_abs": 0.0, "target_vs_ckpt_max_abs": 0.0, "target_argmax_agree": [0, 0],
           "layer_inp_max_abs": 0.0, "draft_max_abs": 0.0, "draft_vs_ckpt_max_abs": 0.0,
           "draft_argmax_agree": [0, 0], "logit_scale": 0.0, "layer_inp_scale": 0.0}

    for s in seqs:
        o, n, p = int(z["offsets"][s]), int(z["offsets"][s + 1] - z["offsets"][s]), int(z["prompt_len"][s])
        x = z["tokens"][o:o + n].astype(np.int64)
        # ---- target: whole sequence, every row
        pair.reset()
        lc = pair.target_decode(x.tolist(), 0, out=True)
        li = pair.layer_inputs()
        lt, ft = tgt(torch.from_numpy(x)[None], 0, layer_inputs=lids)
        lt = lt[0].numpy()
        lck = tgt_ck(torch.from_numpy(x)[None])[0].numpy() if has_ck else lt
        res["target_max_abs"] = max(res["target_max_abs"], float(np.abs(lc - lt).max()))
        res["target_vs_ckpt_max_abs"] = max(res["target_vs_ckpt_max_abs"], float(np.abs(lc - lck).max()))
        res["target_argmax_agree"][0] += int((lc.argmax(1) == lt.argmax(1)).sum())
        res["target_argmax_agree"][1] += n
        res["logit_scale"] = max(res["logit_scale"], float(np.abs(lt).max()))
        for lid in lids:
            ref = ft[lid][0].numpy()
            d = np.abs(li[lid] - ref)
            res["layer_inp_scale"] = max(res["layer_inp_scale"], float(np.abs(ref).max()))
            res["layer_inp_max_abs"] = max(res["layer_inp_max_abs"], float(d.max()))
            # relative to each row's RMS (the draft's fc sees rms-scaled features after its norm)
            rms = np.sqrt((ref ** 2).mean(axis=1, keepdims=True))
            lrel = max(lrel, float((d / rms).max()))
        res["layer_inp_max_rel_to_row_rms"] = lrel
        if "feats" in z.files and [int(v) for v in z["target_layers"]] == lids:
            # the stored training features (written by the batched generator) vs this PyTorch pass:
            # catches rows that a multi-sequence batch would have put out of order
            ref = np.concatenate([ft[lid][0].numpy() for lid in lids], axis=1)[:n - 1]
            d = np.abs(z["feats"][o:o + n - 1].astype(np.float32) - ref)
            rms = np.sqrt((ref.reshape(n - 1, len(lids), -1) ** 2).mean(axis=2)).repeat(ref.shape[1] // len(lids), 1)
            res["distill_feats_max_rel_to_row_rms"] = max(res.get("distill_feats_max_rel_to_row_rms", 0.0),
                                                          float((d / rms).max()))
            res["distill_feats_p99_rel"] = max(res.get("distill_feats_p99_rel", 0.0),
                                               float(np.percentile(d / rms, 99)))
        if dft is None:
            continue

        # ---- draft: incremental flow at up to 3 anchors in the generated part
        pair.reset()
        anchors = sorted(set(rng.integers(p, n - 1, size=3).tolist()))
        done = 0
        feats_all = []
        for P in anchors:
            pair.target_decode(x[done:P].tolist(), done, out=False)
            f = pair.features()
            feats_all.append(f)
            pair.inject(f, done)
            done = P
            ld = pair.draft_block(int(x[P]), P, B - 1)
            F_ = torch.from_numpy(np.concatenate(feats_all))[None]
            btok = torch.tensor([[int(x[P])] + [MASK] * (B - 1)])
            bpos = torch.arange(P, P + B)[None]
            mask = torch.ones(1, 1, B, P + B, dtype=torch.bool)
            g = dft.encode(F_)
            lp = dft(embd[btok], bpos, g, torch.arange(P), mask, head)[0].numpy()
            gk = dft_ck.encode(F_)
            lk = dft_ck(tgt_ck.tok_embd.weight[btok], bpos, gk, torch.arange(P), mask, tgt_ck.tok_embd.weight)[0].numpy()
            if red is not None:  # outside the head llama.cpp must give -inf (never drafted)
                outside = np.ones(ld.shape[1], bool)
                outside[cols] = False
                res["draft_outside_head_finite"] = res.get("draft_outside_head_finite", 0) + int(
                    np.isfinite(ld[:, outside]).sum())
            ld, lp, lk = ld[:, cols], lp[:, cols], lk[:, cols]
            res["draft_max_abs"] = max(res["draft_max_abs"], float(np.abs(ld - lp).max()))
            res["draft_vs_ckpt_max_abs"] = max(res["draft_vs_ckpt_max_abs"], float(np.abs(ld - lk).max()))
            res["draft_argmax_agree"][0] += int((ld.argmax(1) == lp.argmax(1)).sum())
            res["draft_argmax_agree"][1] += B
    pair.close()
    ok = res["target_max_abs"] <= tol_t and res["draft_max_abs"] <= a.tol and res["target_argmax_agree"][1] > 0
    if res.get("draft_outside_head_finite", 0):
        print("a reduced-head draft gave finite logits outside its head", file=sys.stderr)
        ok = False
    if dft is not None and res["draft_argmax_agree"][1] == 0:  # nothing compared must not pass
        print("no draft block was compared (sequences too short?)", file=sys.stderr)
        ok = False
    res["tol_target"] = tol_t
    res["tol"] = a.tol
    res["pass"] = ok
    print(json.dumps(res, indent=1))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
