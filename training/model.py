"""PyTorch mirrors of the two llama.cpp graphs the demo pair runs on.

* `Target`: llama.cpp arch `llama` (src/models/llama.cpp): RMSNorm pre-norm blocks, RoPE in ggml's
  NORM mode (adjacent pairs), causal attention with scale 1/sqrt(head_dim) and grouped-query KV
  heads (n_head_kv < n_head, each KV head shared by n_head/n_head_kv consecutive query heads),
  SwiGLU FFN, final RMSNorm and an LM head tied to the token embedding (GGUF has no `output.weight`).
  `TargetConfig.from_gguf` reads the shape, rope theta and eps of a real GGUF (SmolLM2-135M), and
  `export_gguf.load_target_gguf` loads its (dequantized) weights.
  `forward(..., layer_inputs=ids)` also returns the residual stream *entering* each listed layer:
  llama.cpp's `t_layer_inp[il] = inpL`, read with `llama_get_embeddings_layer_inp`.
* `Draft`: llama.cpp arch `dflash` (src/models/dflash.cpp, graph from ~line 571), both branches:
    - context / feature injection (embedding batch): g = rms_norm(fc(concat_k feat_k)) * enc_norm;
      per layer K = k_norm(wk g) then RoPE, V = wv g (no norm), at the features' positions.
      Note: no attn_norm on g, and K/V use the same wk/wv as the block.
    - block (token batch): x = tok_embd[tokens] (the target's, no scale);
      per layer: h = rms_norm(x)*attn_norm; Q = q_norm(wq h), K = k_norm(wk h), V = wv h;
      RoPE (NEOX mode) on Q and K; attention of every block row over [context K/V ; block K/V]
      (non-causal: all block rows, plus context positions < anchor position), scale 1/sqrt(D);
      x = x + wo(attn); x = x + down(silu(gate(n)) * up(n)), n = rms_norm(x)*ffn_norm;
      logits = output(rms_norm(x)*output_norm), `output` = the target's (tied) head.
  Row i of the block (position P+i) predicts the token *at* P+i (no shift); row 0 holds the anchor.

Weights use torch Linear layout [out, in] = numpy layout of the ggml tensor, so export is a plain copy.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TargetConfig:
    vocab: int = 4096
    n_embd: int = 384
    n_layer: int = 6
    n_head: int = 6
    n_head_kv: int = 6
    n_ff: int = 1024
    ctx: int = 4096
    rope_base: float = 10000.0
    eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_gguf(cls, path) -> "TargetConfig":
        """The hyper-parameters of a `llama`-arch GGUF (e.g. SmolLM2: 30 layers, 9 heads / 3 KV heads,
        rope theta 1e5, eps 1e-5), read from its metadata rather than assumed."""
        import gguf  # only needed here

        r = gguf.GGUFReader(str(path))
        arch = r.fields["general.architecture"].contents()
        if arch != "llama":
            raise ValueError(f"{path}: arch {arch!r}, this mirror covers 'llama'")

        def get(key, default=None):
            f = r.fields.get(f"{arch}.{key}")
            return default if f is None else f.contents()

        n_embd, n_head = int(get("embedding_length")), int(get("attention.head_count"))
        if int(get("rope.dimension_count", n_embd // n_head)) != n_embd // n_head:
            raise ValueError("partial RoPE is not mirrored")
        if any(t.name == "output.weight" for t in r.tensors):
            raise ValueError("untied output head is not mirrored")
        vocab = get("vocab_size") or len(r.fields["tokenizer.ggml.tokens"].contents())
        return cls(vocab=int(vocab), n_embd=n_embd, n_layer=int(get("block_count")), n_head=n_head,
                   n_head_kv=int(get("attention.head_count_kv", n_head)), n_ff=int(get("feed_forward_length")),
                   ctx=int(get("context_length")), rope_base=float(get("rope.freq_base", 10000.0)),
                   eps=float(get("attention.layer_norm_rms_epsilon")))


@dataclass
class DraftConfig:
    n_embd: int = 384
    n_layer: int = 1
    n_head: int = 6
    n_head_kv: int = 6
    head_dim: int = 64
    n_ff: int = 1024
    target_layers: tuple[int, ...] = (1, 3, 5)   # llama.cpp layer-INPUT ids of the target
    block_size: int = 16
    mask_token_id: int = 0
    ctx: int = 4096
    rope_base: float = 10000.0
    eps: float = 1e-5

    def to_dict(self) -> dict:
        d = asdict(self)
        d["target_layers"] = list(self.target_layers)
        return d


class RMSNorm(nn.Module):
    """ggml_rms_norm(x, eps) * w (eps inside the sqrt, mean over the last dim)."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_cos_sin(pos: torch.Tensor, dim: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """theta_i = pos * base^(-2i/dim), i = 0..dim/2-1 (ggml_rope_ext, no scaling). Shapes [..., dim/2]."""
    inv = base ** (-torch.arange(0, dim, 2, dtype=torch.float32, device=pos.device) / dim)
    ang = pos.to(torch.float32)[..., None] * inv
    return ang.cos(), ang.sin()


def rope_norm(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """ggml NORM mode: rotate adjacent pairs (x[2i], x[2i+1]). x [..., T, H, D], cos [..., T, D/2]."""
    c, s = cos[..., None, :], sin[..., None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


def rope_neox(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """ggml NEOX mode: rotate (x[i], x[i+D/2])."""
    c, s = cos[..., None, :], sin[..., None, :]
    h = x.shape[-1] // 2
    x0, x1 = x[..., :h], x[..., h:]
    return torch.cat((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1)


class SwiGLU(nn.Module):
    def __init__(self, n_embd: int, n_ff: int) -> None:
        super().__init__()
        self.gate = nn.Linear(n_embd, n_ff, bias=False)
        self.up = nn.Linear(n_embd, n_ff, bias=False)
        self.down = nn.Linear(n_ff, n_embd, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class TargetBlock(nn.Module):
    def __init__(self, c: TargetConfig) -> None:
        super().__init__()
        self.c = c
        d = c.head_dim
        self.attn_norm = RMSNorm(c.n_embd, c.eps)
        self.wq = nn.Linear(c.n_embd, c.n_head * d, bias=False)
        self.wk = nn.Linear(c.n_embd, c.n_head_kv * d, bias=False)
        self.wv = nn.Linear(c.n_embd, c.n_head_kv * d, bias=False)
        self.wo = nn.Linear(c.n_head * d, c.n_embd, bias=False)
        self.ffn_norm = RMSNorm(c.n_embd, c.eps)
        self.ffn = SwiGLU(c.n_embd, c.n_ff)

    def forward(self, x, cos, sin, cache=None):
        c = self.c
        B, T, _ = x.shape
        d = c.head_dim
        h = self.attn_norm(x)
        q = rope_norm(self.wq(h).view(B, T, c.n_head, d), cos, sin)
        k = rope_norm(self.wk(h).view(B, T, c.n_head_kv, d), cos, sin)
        v = self.wv(h).view(B, T, c.n_head_kv, d)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # [B, H, T, D]
        if cache is not None:
            if cache.get("k") is not None:
                k = torch.cat((cache["k"], k), dim=2)
                v = torch.cat((cache["v"], v), dim=2)
            cache["k"], cache["v"] = k, v
        rep = c.n_head // c.n_head_kv
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        Tk = k.shape[2]
        if T == 1:
            a = F.scaled_dot_product_attention(q, k, v)
        elif Tk == T:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # chunk appended to a cache
            m = torch.ones(T, Tk, dtype=torch.bool).tril(diagonal=Tk - T)
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        x = x + self.wo(a.transpose(1, 2).reshape(B, T, c.n_head * d))
        return x + self.ffn(self.ffn_norm(x))


class Target(nn.Module):
    def __init__(self, c: TargetConfig) -> None:
        super().__init__()
        self.c = c
        self.tok_embd = nn.Embedding(c.vocab, c.n_embd)
        self.layers = nn.ModuleList(TargetBlock(c) for _ in range(c.n_layer))
        self.output_norm = RMSNorm(c.n_embd, c.eps)
        self.apply(self._init)
        for blk in self.layers:  # GPT-2 style scaled init of residual projections
            nn.init.normal_(blk.wo.weight, std=0.02 / math.sqrt(2 * c.n_layer))
            nn.init.normal_(blk.ffn.down.weight, std=0.02 / math.sqrt(2 * c.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, tokens: torch.Tensor, pos0: int = 0, layer_inputs=(), caches=None,
                return_hidden: bool = False):
        """tokens [B, T] -> logits [B, T, V] (and {lid: [B, T, E]} layer inputs if asked)."""
        B, T = tokens.shape
        pos = torch.arange(pos0, pos0 + T)
        cos, sin = rope_cos_sin(pos, self.c.head_dim, self.c.rope_base)
        x = self.tok_embd(tokens)
        feats = {}
        for il, blk in enumerate(self.layers):
            if il in layer_inputs:
                feats[il] = x
            x = blk(x, cos, sin, None if caches is None else caches[il])
        h = self.output_norm(x)
        if return_hidden:
            return h, feats
        logits = F.linear(h, self.tok_embd.weight)
        return (logits, feats) if layer_inputs else logits


class DraftBlock(nn.Module):
    def __init__(self, c: DraftConfig) -> None:
        super().__init__()
        self.c = c
        d = c.head_dim
        self.attn_norm = RMSNorm(c.n_embd, c.eps)
        self.wq = nn.Linear(c.n_embd, c.n_head * d, bias=False)
        self.wk = nn.Linear(c.n_embd, c.n_head_kv * d, bias=False)
        self.wv = nn.Linear(c.n_embd, c.n_head_kv * d, bias=False)
        self.wo = nn.Linear(c.n_head * d, c.n_embd, bias=False)
        self.q_norm = RMSNorm(d, c.eps)
        self.k_norm = RMSNorm(d, c.eps)
        self.ffn_norm = RMSNorm(c.n_embd, c.eps)
        self.ffn = SwiGLU(c.n_embd, c.n_ff)

    def ctx_kv(self, g, cos, sin):
        """Injection branch: g [B, Tc, E] (already fc + enc norm) -> K, V [B, Hkv, Tc, D]."""
        c = self.c
        B, T, _ = g.shape
        k = rope_neox(self.k_norm(self.wk(g).view(B, T, c.n_head_kv, c.head_dim)), cos, sin)
        v = self.wv(g).view(B, T, c.n_head_kv, c.head_dim)
        return k.transpose(1, 2), v.transpose(1, 2)

    def forward(self, x, cos, sin, ctx_k, ctx_v, mask):
        """x [B, Tb, E] block stream; ctx_k/v [B, Hkv, Tc, D]; mask [B or 1, 1, Tb, Tc+Tb] bool."""
        c = self.c
        B, T, _ = x.shape
        d = c.head_dim
        h = self.attn_norm(x)
        q = rope_neox(self.q_norm(self.wq(h).view(B, T, c.n_head, d)), cos, sin).transpose(1, 2)
        k = rope_neox(self.k_norm(self.wk(h).view(B, T, c.n_head_kv, d)), cos, sin).transpose(1, 2)
        v = self.wv(h).view(B, T, c.n_head_kv, d).transpose(1, 2)
        k = torch.cat((ctx_k, k), dim=2)
        v = torch.cat((ctx_v, v), dim=2)
        rep = c.n_head // c.n_head_kv
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.wo(a.transpose(1, 2).reshape(B, T, c.n_head * d))
        return x + self.ffn(self.ffn_norm(x))


class Draft(nn.Module):
    def __init__(self, c: DraftConfig) -> None:
        super().__init__()
        self.c = c
        L = len(c.target_layers)
        self.fc = nn.Linear(L * c.n_embd, c.n_embd, bias=False)
        self.enc_norm = RMSNorm(c.n_embd, c.eps)
        self.layers = nn.ModuleList(DraftBlock(c) for _ in range(c.n_layer))
        self.output_norm = RMSNorm(c.n_embd, c.eps)
        # Per-input-dimension preconditioning of fc: a real target's residual stream has a few dims
        # ~1e4 times larger than the rest, and with Adam those dims' weights would move the output by
        # lr * 1e4 each step. Training multiplies the features by feat_scale (1 / their RMS);
        # fold_feat_scale() moves it into fc.weight before export, so llama.cpp's fc(concat) is unchanged.
        self.register_buffer("feat_scale", torch.ones(L * c.n_embd), persistent=True)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)

    def encode(self, feats: torch.Tensor) -> torch.Tensor:
        """feats [B, Tc, L*E] (concat of target layer inputs, in target_layers order) -> g."""
        return self.enc_norm(self.fc(feats * self.feat_scale))

    @torch.no_grad()
    def fold_feat_scale(self) -> None:
        """fc(x * s) == (fc.weight * s)(x): the exported draft needs no scale of its own."""
        self.fc.weight.mul_(self.feat_scale[None, :].to(self.fc.weight.dtype))
        self.feat_scale.fill_(1.0)

    def forward(self, block_embd: torch.Tensor, block_pos: torch.Tensor, g: torch.Tensor,
                ctx_pos: torch.Tensor, mask: torch.Tensor, head_weight: torch.Tensor) -> torch.Tensor:
        """block_embd [B, Tb, E] (target tok_embd rows); block_pos [Tb] or [B, Tb]; g [B, Tc, E];
        ctx_pos [Tc] or [B, Tc]; mask [B|1, 1, Tb, Tc+Tb]; returns logits [B, Tb, V]."""
        hd, base = self.c.head_dim, self.c.rope_base
        bcos, bsin = rope_cos_sin(block_pos, hd, base)
        ccos, csin = rope_cos_sin(ctx_pos, hd, base)
        x = block_embd
        for blk in self.layers:
            ck, cv = blk.ctx_kv(g, ccos, csin)
            x = blk(x, bcos, bsin, ck, cv, mask)
        if head_weight is None:  # the normed hidden state (the trainer applies the head to labelled rows only)
            return self.output_norm(x)
        return F.linear(self.output_norm(x), head_weight)
