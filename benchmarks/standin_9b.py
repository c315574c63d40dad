"""A random-weight stand-in for Qwen3.5-9B (Q4_K_M) and its z-lab DFlash draft (Q8_0), exact shapes.

Issue 13 part 3: nothing had ever run at the real model's size here. This writes, into
~/.cache/atomicchat/bench-models/ (never into the repository; never run in CI):

  standin-qwen35-9b-target.Q4_K_M.gguf   arch qwen35, the shapes of Qwen/Qwen3.5-9B
  standin-qwen35-9b-draft.Q8_0.gguf      arch dflash, the shapes of z-lab/Qwen3.5-9B-DFlash

Route: each model is first written as F16 (F32 for norms, ssm_a, ssm_dt, ssm_conv1d, as in real
GGUFs) with gguf-py, tensor by tensor straight to disk (the 248,320 x 4096 embedding alone would be
4 GB as float32), then converted with llama.cpp's own `llama_model_quantize` (so the tensor-type
mix is exactly what llama.cpp's Q4_K_M / Q8_0 recipes choose). The F16 intermediate (about 18 GB
for the target) is deleted afterwards unless --keep-f16.

Where the shapes come from (all in this repository or ../shared/docs):
  target: resources/catalog.json `facts` (32 layers, n_embd 4096, vocab 248,320, 8 attention
    layers with 16 Q / 4 KV heads of dim 256, recurrent state = 24 x (32 heads x 128 x 128 + conv
    3 x 8192)) and shared/docs/models.md (FFN 12288). From the recurrent-state figure: 32 value
    heads of 128 (value_dim 4096) and conv_dim 8192 = 2 x key_dim + value_dim, so key_dim 2048 =
    16 key heads of 128; every 4th layer is full attention (24 + 8). Qwen3.5's partial rotary
    (factor 0.25 -> rope dim 64 of 256), M-RoPE sections [11, 11, 10, 0] and rope base 1e7 follow
    the Qwen3.5 config as llama.cpp's converter writes it (an assumption: the config file is not
    in this repository).
  draft: resources/dflash_drafts.json + shared/docs/models.md (6 layers, block 16, target_layers
    [2, 6, 10, 14, 18, 22, 26, 30], mask token 248077, sliding window 4096 on 5 of 6 layers, no
    token_embd / output: it borrows the target's) and catalog.json (8 KV heads of dim 128). Not
    stated anywhere: n_head 32 (4096 / 128) and n_ff 12288; both are confirmed by the published
    Q8_0 file size (1,383,768,224 B): 6 x (2 x 4096^2 + 2 x 1024 x 4096 + 3 x 4096 x 12288) +
    8 x 4096^2 (fc) = 1,291,845,632 weights x 34/32 B = 1,372,585,984 B, the remaining ~11 MB
    being the copied Qwen tokenizer. Which layer is the full-attention one is not known; the last
    one is assumed.

Tokenizer: llama.cpp's `test` vocabulary (ids -> `tok_<i>`, text is hashed into ids, as
atomicchat/engine/tiny_models.py does) with all 248,320 tokens, so the vocab-sized buffers
(logits, embeddings) are the real size. No EOG token: generation always runs to max_tokens.

Weights are uniform with the variance of 1/fan_in, so every matmul keeps activations near unit
scale (finite logits, checked by standin_bench.py); GDN decay / dt follow tiny_models.

    /work/main/.venv/bin/python benchmarks/standin_9b.py [--out-dir DIR] [--force] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path.home() / ".cache" / "atomicchat" / "bench-models"
TARGET_NAME = "standin-qwen35-9b-target.Q4_K_M.gguf"
DRAFT_NAME = "standin-qwen35-9b-draft.Q8_0.gguf"


@dataclass(frozen=True)
class Qwen35_9B:  # noqa: N801
    n_vocab: int = 248_320
    n_embd: int = 4096
    n_layer: int = 32
    n_ff: int = 12_288
    n_head: int = 16
    n_head_kv: int = 4
    head_dim: int = 256
    full_attention_interval: int = 4  # layers 3, 7, ..., 31 are full attention: 8 of 32
    rope_dim: int = 64  # partial_rotary_factor 0.25 of 256
    rope_sections: tuple[int, int, int, int] = (11, 11, 10, 0)
    rope_base: float = 10_000_000.0
    ssm_conv_kernel: int = 4
    ssm_state: int = 128  # head_k_dim = head_v_dim
    ssm_groups: int = 16  # key heads
    ssm_v_heads: int = 32  # time_step_rank
    ssm_inner: int = 4096  # value_dim = 32 x 128
    n_ctx_train: int = 262_144
    eps: float = 1e-6


@dataclass(frozen=True)
class DFlashDraft9B:
    n_layer: int = 6
    n_head: int = 32
    n_head_kv: int = 8
    head_dim: int = 128
    n_ff: int = 12_288
    block_size: int = 16
    target_layers: tuple[int, ...] = (2, 6, 10, 14, 18, 22, 26, 30)
    mask_token_id: int = 248_077
    sliding_window: int = 4096
    swa_pattern: tuple[bool, ...] = (True, True, True, True, True, False)


T = Qwen35_9B()
DR = DFlashDraft9B()


def target_tensors(t: Qwen35_9B = T) -> list[tuple[str, tuple[int, ...], str, float]]:
    """(name, numpy shape, kind, scale): kind f16 = matrix, f32 = kept float32; scale = std."""
    E = t.n_embd
    out: list[tuple[str, tuple[int, ...], str, float]] = [
        ("token_embd.weight", (t.n_vocab, E), "f16", 1.0),
        ("output_norm.weight", (E,), "norm", 0.0),
        ("output.weight", (t.n_vocab, E), "f16", E**-0.5),
    ]
    key_dim = t.ssm_state * t.ssm_groups
    value_dim = t.ssm_inner
    conv_dim = 2 * key_dim + value_dim
    for i in range(t.n_layer):
        b = f"blk.{i}."
        out.append((b + "attn_norm.weight", (E,), "norm", 0.0))
        out.append((b + "post_attention_norm.weight", (E,), "norm", 0.0))
        if (i + 1) % t.full_attention_interval == 0:
            H, Hkv, D = t.n_head, t.n_head_kv, t.head_dim
            out += [
                (b + "attn_q.weight", (2 * H * D, E), "f16", E**-0.5),
                (b + "attn_k.weight", (Hkv * D, E), "f16", E**-0.5),
                (b + "attn_v.weight", (Hkv * D, E), "f16", E**-0.5),
                (b + "attn_output.weight", (E, H * D), "f16", (H * D) ** -0.5),
                (b + "attn_q_norm.weight", (D,), "norm", 0.0),
                (b + "attn_k_norm.weight", (D,), "norm", 0.0),
            ]
        else:
            out += [
                (b + "attn_qkv.weight", (conv_dim, E), "f16", E**-0.5),
                (b + "attn_gate.weight", (value_dim, E), "f16", E**-0.5),
                (b + "ssm_conv1d.weight", (conv_dim, t.ssm_conv_kernel), "f32", 0.5),
                (b + "ssm_dt.bias", (t.ssm_v_heads,), "f32", 0.1),
                (b + "ssm_a", (t.ssm_v_heads,), "ssm_a", 0.0),
                (b + "ssm_beta.weight", (t.ssm_v_heads, E), "f16", E**-0.5),
                (b + "ssm_alpha.weight", (t.ssm_v_heads, E), "f16", E**-0.5),
                (b + "ssm_norm.weight", (t.ssm_state,), "norm", 0.0),
                (b + "ssm_out.weight", (E, value_dim), "f16", value_dim**-0.5),
            ]
        out += [
            (b + "ffn_gate.weight", (t.n_ff, E), "f16", E**-0.5),
            (b + "ffn_up.weight", (t.n_ff, E), "f16", E**-0.5),
            (b + "ffn_down.weight", (E, t.n_ff), "f16", t.n_ff**-0.5),
        ]
    return out


def draft_tensors(d: DFlashDraft9B = DR, E: int = T.n_embd) -> list[tuple[str, tuple[int, ...], str, float]]:
    L = len(d.target_layers)
    H, Hkv, D = d.n_head, d.n_head_kv, d.head_dim
    out: list[tuple[str, tuple[int, ...], str, float]] = [
        ("fc.weight", (E, L * E), "f16", (L * E) ** -0.5),
        ("enc.output_norm.weight", (E,), "norm", 0.0),
        ("output_norm.weight", (E,), "norm", 0.0),
    ]
    for i in range(d.n_layer):
        b = f"blk.{i}."
        out += [
            (b + "attn_norm.weight", (E,), "norm", 0.0),
            (b + "attn_q.weight", (H * D, E), "f16", E**-0.5),
            (b + "attn_k.weight", (Hkv * D, E), "f16", E**-0.5),
            (b + "attn_v.weight", (Hkv * D, E), "f16", E**-0.5),
            (b + "attn_output.weight", (E, H * D), "f16", (H * D) ** -0.5),
            (b + "attn_q_norm.weight", (D,), "norm", 0.0),
            (b + "attn_k_norm.weight", (D,), "norm", 0.0),
            (b + "ffn_norm.weight", (E,), "norm", 0.0),
            (b + "ffn_gate.weight", (d.n_ff, E), "f16", E**-0.5),
            (b + "ffn_up.weight", (d.n_ff, E), "f16", E**-0.5),
            (b + "ffn_down.weight", (E, d.n_ff), "f16", d.n_ff**-0.5),
        ]
    return out


class _Pool:
    """Random unit-variance float16 values, copied out at random offsets: generating 9e9 fresh
    samples would cost minutes of numpy for weights nobody reads; copies from a 64 Mi pool at
    random offsets per 1 Mi chunk are random enough for speed measurements."""

    CHUNK = 1 << 20

    def __init__(self, seed: int, n: int = 1 << 26) -> None:
        self.rng = np.random.default_rng(seed)
        u = self.rng.random(n, dtype=np.float32)
        self.unit = ((u * 2.0 - 1.0) * np.float32(3.0**0.5)).astype(np.float32)  # uniform, var 1
        self.by_scale: dict[float, np.ndarray] = {}

    def _scaled(self, scale: float) -> np.ndarray:
        if scale not in self.by_scale:
            self.by_scale[scale] = (self.unit * np.float32(scale)).astype(np.float16)
        return self.by_scale[scale]

    def chunks(self, n: int, scale: float):
        pool = self._scaled(scale)
        done = 0
        while done < n:
            k = min(self.CHUNK, n - done)
            off = int(self.rng.integers(0, len(pool) - k))
            yield pool[off : off + k]
            done += k


def _small(kind: str, shape: tuple[int, ...], scale: float, rng: np.random.Generator) -> np.ndarray:
    if kind == "norm":
        return (1.0 + 0.05 * rng.standard_normal(shape)).astype(np.float32)
    if kind == "ssm_a":
        return (-np.abs(rng.standard_normal(shape)) * 0.8 - 0.5).astype(np.float32)
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _tokenizer(w, n_vocab: int, mask: int | None = None) -> None:  # noqa: ANN001
    w.add_string("tokenizer.ggml.model", "test")
    w.add_array("tokenizer.ggml.tokens", [f"tok_{i}" for i in range(n_vocab)])
    w.add_array("tokenizer.ggml.scores", [0.0] * n_vocab)
    if mask is not None:
        w.add_uint32("tokenizer.ggml.mask_token_id", mask)


def _write(path: Path, w, tensors, seed: int) -> None:  # noqa: ANN001
    """Tensor infos first, then every tensor's bytes streamed to the file (gguf-py's own padding)."""
    rng = np.random.default_rng(seed + 1)
    pool = _Pool(seed)
    for name, shape, kind, _scale in tensors:
        dt = np.float16 if kind == "f16" else np.float32
        w.add_tensor_info(name, shape, np.dtype(dt), int(np.prod(shape)) * np.dtype(dt).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    fout = w.fout[0]
    t0 = time.time()
    for k, (name, shape, kind, scale) in enumerate(tensors):
        ti = w.tensors[0].pop(name)
        w.write_padding(fout, fout.tell())
        if kind == "f16":
            n = 0
            for c in pool.chunks(int(np.prod(shape)), scale):
                c.tofile(fout)
                n += c.nbytes
        else:
            arr = _small(kind, shape, scale, rng)
            arr.tofile(fout)
            n = arr.nbytes
        assert n == ti.nbytes, (name, n, ti.nbytes)
        w.write_padding(fout, n)
        if k % 20 == 0:
            print(f"  {path.name}: {k + 1}/{len(tensors)} tensors, {time.time() - t0:.0f} s", file=sys.stderr)
    w.close()


def write_target_f16(path: Path, t: Qwen35_9B = T, seed: int = 0) -> Path:
    from gguf import GGUFWriter

    w = GGUFWriter(str(path), "qwen35")
    a = "qwen35"
    w.add_string("general.name", "standin-qwen3.5-9b (random weights)")
    w.add_uint32(f"{a}.context_length", t.n_ctx_train)
    w.add_uint32(f"{a}.embedding_length", t.n_embd)
    w.add_uint32(f"{a}.block_count", t.n_layer)
    w.add_uint32(f"{a}.feed_forward_length", t.n_ff)
    w.add_uint32(f"{a}.attention.head_count", t.n_head)
    w.add_uint32(f"{a}.attention.head_count_kv", t.n_head_kv)
    w.add_uint32(f"{a}.attention.key_length", t.head_dim)
    w.add_uint32(f"{a}.attention.value_length", t.head_dim)
    w.add_float32(f"{a}.attention.layer_norm_rms_epsilon", t.eps)
    w.add_uint32(f"{a}.rope.dimension_count", t.rope_dim)
    w.add_array(f"{a}.rope.dimension_sections", list(t.rope_sections))
    w.add_float32(f"{a}.rope.freq_base", t.rope_base)
    w.add_uint32(f"{a}.ssm.conv_kernel", t.ssm_conv_kernel)
    w.add_uint32(f"{a}.ssm.state_size", t.ssm_state)
    w.add_uint32(f"{a}.ssm.group_count", t.ssm_groups)
    w.add_uint32(f"{a}.ssm.time_step_rank", t.ssm_v_heads)
    w.add_uint32(f"{a}.ssm.inner_size", t.ssm_inner)
    w.add_uint32(f"{a}.full_attention_interval", t.full_attention_interval)
    w.add_uint32("general.file_type", 1)  # MOSTLY_F16
    _tokenizer(w, t.n_vocab)
    _write(path, w, target_tensors(t), seed)
    return path


def write_draft_f16(path: Path, d: DFlashDraft9B = DR, t: Qwen35_9B = T, seed: int = 100) -> Path:
    from gguf import GGUFWriter

    w = GGUFWriter(str(path), "dflash")
    D = d.head_dim
    w.add_string("general.name", "standin-qwen3.5-9b-dflash (random weights)")
    w.add_uint32("dflash.context_length", t.n_ctx_train)
    w.add_uint32("dflash.embedding_length", t.n_embd)
    w.add_uint32("dflash.block_count", d.n_layer)
    w.add_uint32("dflash.feed_forward_length", d.n_ff)
    w.add_uint32("dflash.attention.head_count", d.n_head)
    w.add_uint32("dflash.attention.head_count_kv", d.n_head_kv)
    w.add_uint32("dflash.attention.key_length", D)
    w.add_uint32("dflash.attention.value_length", D)
    w.add_float32("dflash.attention.layer_norm_rms_epsilon", t.eps)
    w.add_float32("dflash.rope.freq_base", t.rope_base)
    w.add_uint32("dflash.rope.dimension_count", D)
    w.add_array("dflash.rope.dimension_sections", [D // 2, 0, 0, 0])
    w.add_uint32("dflash.block_size", d.block_size)
    w.add_bool("dflash.attention.causal", False)
    w.add_array("dflash.target_layers", list(d.target_layers))
    w.add_uint32("dflash.attention.sliding_window", d.sliding_window)
    w.add_array("dflash.attention.sliding_window_pattern", [bool(x) for x in d.swa_pattern])
    w.add_uint32("general.file_type", 1)
    _tokenizer(w, t.n_vocab, d.mask_token_id)
    _write(path, w, draft_tensors(d, t.n_embd), seed)
    return path


def quantize(src: Path, dst: Path, ftype: int, threads: int) -> None:
    import llama_cpp

    p = llama_cpp.llama_model_quantize_default_params()
    p.nthread = threads
    p.ftype = ftype
    t0 = time.time()
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), p)
    if rc != 0:
        raise SystemExit(f"llama_model_quantize({src.name} -> {dst.name}) failed with {rc}")
    print(f"  quantized {src.name} -> {dst.name} in {time.time() - t0:.0f} s", file=sys.stderr)


def build(out_dir: Path, *, force: bool, threads: int, keep_f16: bool, which: str = "both") -> tuple[Path, Path]:
    out_dir = out_dir.expanduser().resolve()
    if out_dir == REPO_ROOT or REPO_ROOT in out_dir.parents:
        raise SystemExit(f"refusing to write models inside the repository ({out_dir})")
    out_dir.mkdir(parents=True, exist_ok=True)
    import llama_cpp

    jobs = []
    if which in ("both", "target"):
        jobs.append((out_dir / TARGET_NAME, write_target_f16, llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M))
    if which in ("both", "draft"):
        jobs.append((out_dir / DRAFT_NAME, write_draft_f16, llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0))
    for final, writer, ftype in jobs:
        if final.exists() and not force:
            print(f"{final} exists (use --force to rebuild)", file=sys.stderr)
            continue
        f16 = final.with_name(final.name.split(".")[0] + ".F16.gguf.partial")
        part = final.with_suffix(".partial")
        t0 = time.time()
        print(f"writing {f16} ...", file=sys.stderr)
        writer(f16)
        print(f"  F16 written in {time.time() - t0:.0f} s ({f16.stat().st_size:,} B)", file=sys.stderr)
        quantize(f16, part, ftype, threads)
        part.replace(final)
        if keep_f16:
            f16.replace(f16.with_suffix(""))
        else:
            f16.unlink()
        print(f"{final}: {final.stat().st_size:,} B", file=sys.stderr)
    return out_dir / TARGET_NAME, out_dir / DRAFT_NAME


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--force", action="store_true", help="rebuild files that exist")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="quantization threads")
    ap.add_argument("--keep-f16", action="store_true", help="keep the F16 intermediates (18 GB + 2.6 GB)")
    ap.add_argument("--only", choices=("both", "target", "draft"), default="both")
    ap.add_argument("--print-shapes", action="store_true", help="print the tensor list and exit")
    args = ap.parse_args(argv)
    if args.print_shapes:
        for title, ts in (("target", target_tensors()), ("draft", draft_tensors())):
            n = sum(int(np.prod(s)) for _, s, _, _ in ts)
            print(f"{title}: {len(ts)} tensors, {n:,} weights")
            for name, shape, kind, _ in ts:
                if not name.startswith("blk.") or name.startswith(("blk.0.", "blk.3.")):
                    print(f"  {name:32s} {tuple(reversed(shape))!s:20s} {kind}")
        return 0
    t, d = build(args.out_dir, force=args.force, threads=args.threads, keep_f16=args.keep_f16, which=args.only)
    print(t)
    print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
