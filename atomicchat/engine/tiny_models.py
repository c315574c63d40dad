"""Tiny random-weight GGUFs: llama and qwen35 targets, and DFlash drafts for them.

Used by the test suite (through tests/gguf_factory.py) and by `atomicchat --self-test`, which needs
a model pair at run time when no demo pair is bundled. Shapes follow llama.cpp's loaders
(src/models/{llama,qwen35,dflash}.cpp); numpy shapes are the reverse of ggml `ne`. The `test`
tokenizer maps ids to `tok_<i>` and detokenizes as hex, so no real vocabulary is needed. Weights are
small so that logits are not saturated and argmax is stable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from gguf import GGUFWriter


@dataclass(frozen=True)
class TargetSpec:
    arch: str = "llama"  # "llama" or "qwen35"
    n_vocab: int = 512
    n_embd: int = 64
    n_layer: int = 4
    n_head: int = 4
    n_head_kv: int = 2
    n_ff: int = 128
    n_ctx: int = 4096
    seed: int = 0
    eos_token_id: int | None = None  # None: no EOG token, generation runs to max_tokens
    chat_template: str | None = None
    scale: float = 0.08
    full_attention_interval: int = 2  # qwen35 only: every 2nd layer is full attention

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


@dataclass(frozen=True)
class DraftSpec:
    target_layers: tuple[int, ...] = (1, 2)
    n_layer: int = 1
    n_head: int = 4
    n_head_kv: int = 2
    n_ff: int = 128
    block_size: int = 16
    own_embeddings: bool = False  # True: ships token_embd (output ties to it)
    mask_token_id: int | None = -1  # -1: last vocab id; None: key omitted
    seed: int = 1
    scale: float = 0.08
    n_embd: int | None = None  # None: the target's (a different value makes a mismatched pair)
    n_vocab: int | None = None  # None: the target's
    extra_tensors: dict[str, np.ndarray] = field(default_factory=dict)
    extra_kv: dict[str, int] = field(default_factory=dict)


def _tokenizer(w: GGUFWriter, n_vocab: int, eos: int | None, mask: int | None = None) -> None:
    w.add_string("tokenizer.ggml.model", "test")
    w.add_array("tokenizer.ggml.tokens", [f"tok_{i}" for i in range(n_vocab)])
    w.add_array("tokenizer.ggml.scores", [0.0] * n_vocab)
    if eos is not None:
        w.add_uint32("tokenizer.ggml.eos_token_id", eos)
    if mask is not None:
        w.add_uint32("tokenizer.ggml.mask_token_id", mask)


class _Rand:
    def __init__(self, seed: int, scale: float) -> None:
        self.rng = np.random.default_rng(seed)
        self.scale = scale

    def w(self, *shape: int) -> np.ndarray:
        return (self.rng.standard_normal(shape) * self.scale).astype(np.float32)

    def norm(self, n: int) -> np.ndarray:
        return (1.0 + 0.05 * self.rng.standard_normal(n)).astype(np.float32)


def _ffn(w: GGUFWriter, r: _Rand, i: int, n_embd: int, n_ff: int) -> None:
    w.add_tensor(f"blk.{i}.ffn_gate.weight", r.w(n_ff, n_embd))
    w.add_tensor(f"blk.{i}.ffn_up.weight", r.w(n_ff, n_embd))
    w.add_tensor(f"blk.{i}.ffn_down.weight", r.w(n_embd, n_ff))


def write_target(path: Path, spec: TargetSpec = TargetSpec()) -> Path:  # noqa: B008
    path = Path(path)
    w = GGUFWriter(str(path), spec.arch)
    a = spec.arch
    E, D = spec.n_embd, spec.head_dim
    w.add_uint32(f"{a}.context_length", spec.n_ctx)
    w.add_uint32(f"{a}.embedding_length", E)
    w.add_uint32(f"{a}.block_count", spec.n_layer)
    w.add_uint32(f"{a}.feed_forward_length", spec.n_ff)
    w.add_uint32(f"{a}.attention.head_count", spec.n_head)
    w.add_uint32(f"{a}.attention.head_count_kv", spec.n_head_kv)
    w.add_float32(f"{a}.attention.layer_norm_rms_epsilon", 1e-6)
    w.add_uint32(f"{a}.rope.dimension_count", D)
    w.add_float32(f"{a}.rope.freq_base", 10000.0)
    if a == "qwen35":
        w.add_uint32(f"{a}.attention.key_length", D)
        w.add_uint32(f"{a}.attention.value_length", D)
        w.add_array(f"{a}.rope.dimension_sections", [D // 4, D // 8, D // 8, 0])
        w.add_uint32(f"{a}.ssm.conv_kernel", 4)
        w.add_uint32(f"{a}.ssm.state_size", 16)
        w.add_uint32(f"{a}.ssm.group_count", 2)
        w.add_uint32(f"{a}.ssm.time_step_rank", 4)
        w.add_uint32(f"{a}.ssm.inner_size", 64)
        w.add_uint32(f"{a}.full_attention_interval", spec.full_attention_interval)
    _tokenizer(w, spec.n_vocab, spec.eos_token_id)
    if spec.chat_template:
        w.add_string("tokenizer.chat_template", spec.chat_template)

    r = _Rand(spec.seed, spec.scale)
    w.add_tensor("token_embd.weight", r.w(spec.n_vocab, E) * 10)
    w.add_tensor("output_norm.weight", r.norm(E))
    w.add_tensor("output.weight", r.w(spec.n_vocab, E))
    H, Hkv = spec.n_head, spec.n_head_kv
    for i in range(spec.n_layer):
        w.add_tensor(f"blk.{i}.attn_norm.weight", r.norm(E))
        if a == "llama":
            w.add_tensor(f"blk.{i}.attn_q.weight", r.w(H * D, E))
            w.add_tensor(f"blk.{i}.attn_k.weight", r.w(Hkv * D, E))
            w.add_tensor(f"blk.{i}.attn_v.weight", r.w(Hkv * D, E))
            w.add_tensor(f"blk.{i}.attn_output.weight", r.w(E, H * D))
            w.add_tensor(f"blk.{i}.ffn_norm.weight", r.norm(E))
        else:
            w.add_tensor(f"blk.{i}.post_attention_norm.weight", r.norm(E))
            if (i + 1) % spec.full_attention_interval == 0:  # full attention (query + gate)
                w.add_tensor(f"blk.{i}.attn_q.weight", r.w(2 * H * D, E))
                w.add_tensor(f"blk.{i}.attn_k.weight", r.w(Hkv * D, E))
                w.add_tensor(f"blk.{i}.attn_v.weight", r.w(Hkv * D, E))
                w.add_tensor(f"blk.{i}.attn_output.weight", r.w(E, H * D))
                w.add_tensor(f"blk.{i}.attn_q_norm.weight", r.norm(D))
                w.add_tensor(f"blk.{i}.attn_k_norm.weight", r.norm(D))
            else:  # gated delta net
                head_k = head_v = 16
                n_k, n_v = 2, 4
                key_dim, value_dim = head_k * n_k, head_v * n_v
                conv_dim = 2 * key_dim + value_dim
                w.add_tensor(f"blk.{i}.attn_qkv.weight", r.w(conv_dim, E))
                w.add_tensor(f"blk.{i}.attn_gate.weight", r.w(value_dim, E))
                w.add_tensor(f"blk.{i}.ssm_conv1d.weight", r.w(conv_dim, 4) * 4)
                w.add_tensor(f"blk.{i}.ssm_dt.bias", r.w(n_v))
                w.add_tensor(f"blk.{i}.ssm_a", -np.abs(r.w(n_v)) * 10 - 0.5)
                w.add_tensor(f"blk.{i}.ssm_beta.weight", r.w(n_v, E))
                w.add_tensor(f"blk.{i}.ssm_alpha.weight", r.w(n_v, E))
                w.add_tensor(f"blk.{i}.ssm_norm.weight", r.norm(head_v))
                w.add_tensor(f"blk.{i}.ssm_out.weight", r.w(E, value_dim))
        _ffn(w, r, i, E, spec.n_ff)
    _finish(w)
    return path


def write_draft(path: Path, target: TargetSpec = TargetSpec(), spec: DraftSpec = DraftSpec()) -> Path:
    path = Path(path)
    w = GGUFWriter(str(path), "dflash")
    E = spec.n_embd or target.n_embd
    V = spec.n_vocab or target.n_vocab
    D = E // spec.n_head
    w.add_uint32("dflash.context_length", target.n_ctx)
    w.add_uint32("dflash.embedding_length", E)
    w.add_uint32("dflash.block_count", spec.n_layer)
    w.add_uint32("dflash.feed_forward_length", spec.n_ff)
    w.add_uint32("dflash.attention.head_count", spec.n_head)
    w.add_uint32("dflash.attention.head_count_kv", spec.n_head_kv)
    w.add_uint32("dflash.attention.key_length", D)
    w.add_uint32("dflash.attention.value_length", D)
    w.add_float32("dflash.attention.layer_norm_rms_epsilon", 1e-6)
    w.add_float32("dflash.rope.freq_base", 10000.0)
    w.add_uint32("dflash.rope.dimension_count", D)
    if target.arch == "qwen35":
        w.add_array("dflash.rope.dimension_sections", [D // 2, 0, 0, 0])
    w.add_uint32("dflash.block_size", spec.block_size)
    w.add_bool("dflash.attention.causal", False)
    w.add_array("dflash.target_layers", list(spec.target_layers))
    for key, value in spec.extra_kv.items():
        w.add_uint32(key, value)
    mask = None if spec.mask_token_id is None else (V - 1 if spec.mask_token_id == -1 else spec.mask_token_id)
    _tokenizer(w, V, target.eos_token_id, mask)

    r = _Rand(spec.seed, spec.scale)
    L = len(spec.target_layers)
    if spec.own_embeddings:
        w.add_tensor("token_embd.weight", r.w(V, E) * 10)
    w.add_tensor("fc.weight", r.w(E, L * E))
    w.add_tensor("enc.output_norm.weight", r.norm(E))
    w.add_tensor("output_norm.weight", r.norm(E))
    H, Hkv = spec.n_head, spec.n_head_kv
    for i in range(spec.n_layer):
        w.add_tensor(f"blk.{i}.attn_norm.weight", r.norm(E))
        w.add_tensor(f"blk.{i}.attn_q.weight", r.w(H * D, E))
        w.add_tensor(f"blk.{i}.attn_k.weight", r.w(Hkv * D, E))
        w.add_tensor(f"blk.{i}.attn_v.weight", r.w(Hkv * D, E))
        w.add_tensor(f"blk.{i}.attn_output.weight", r.w(E, H * D))
        w.add_tensor(f"blk.{i}.attn_q_norm.weight", r.norm(D))
        w.add_tensor(f"blk.{i}.attn_k_norm.weight", r.norm(D))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", r.norm(E))
        _ffn(w, r, i, E, spec.n_ff)
    for name, arr in spec.extra_tensors.items():
        w.add_tensor(name, arr)
    _finish(w)
    return path


def _finish(w: GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_not_gguf(path: Path) -> Path:
    Path(path).write_bytes(b"PK\x03\x04 this is a zip, not a model" * 4)
    return Path(path)


def write_pair(
    folder: Path, name: str = "tiny", target: TargetSpec = TargetSpec(), draft: DraftSpec = DraftSpec()
) -> tuple[Path, Path]:
    """Write `<name>-target.gguf` and `<name>-draft.gguf` into `folder`; return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    t = write_target(folder / f"{name}-target.gguf", target)
    d = write_draft(folder / f"{name}-draft.gguf", target, draft)
    return t, d
