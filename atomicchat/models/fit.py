"""Will this quant run here, and how well? Memory need versus the probed hardware, with the numbers.

Memory need = target weights + draft weights + target KV cache + draft KV cache + recurrent state
              + OVERHEAD (compute buffers and backend context; a ballpark for n_batch 512).

Weights are the GGUF file sizes (llama.cpp maps them whole). The KV cache formula, per model:

    KV bytes = sum over KV layers of  cells(layer) x n_head_kv x (key_length + value_length) x 2 B (f16)
    cells    = n_ctx on full-attention layers, min(n_ctx, swa_window) on sliding-window layers

Only layers with attention keep a KV cache. Qwen3.5-9B is hybrid: 8 of its 32 layers are full
attention (4 KV heads of dim 256), the 24 Gated DeltaNet layers keep a fixed recurrent state (~50 MiB)
instead. So its KV is 8 x n_ctx x 4 x (256 + 256) x 2 B = 32 KiB per token: 1 GiB at 32k tokens,
8 GiB at the full 262,144. The DFlash draft (6 layers, 5 with a 4096-token window) adds ~0.1 GiB at 32k.
The draft KV stays f16 on purpose: a quantized draft KV cache was reported to collapse acceptance.

Verdict: "fits in VRAM" when the need is below 95 % of free GPU memory; "fits in RAM, slower" when
what does not fit on the GPU fits in RAM (partial offload, or CPU only); otherwise "won't fit".

API:
    est = estimate(pair, "Q4_K_M", n_ctx=8192)              # FitEstimate; hardware=probe() by default
    est.verdict, est.label, est.message, est.total, est.kv_target, ...
    kv_cache_bytes(pair.target.facts, n_ctx)
    facts_from_gguf(path)                                    # ArchFacts read from a local file header
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from atomicchat.models.catalog import ArchFacts, ModelPair
from atomicchat.models.hardware import Hardware

MIB = 1024**2
GIB = 1024**3
OVERHEAD_BYTES = 768 * MIB
DEFAULT_DRAFT_MAX = 15  # the engine's default: block_size - 1 for z-lab DFlash drafts
VRAM_USABLE = 0.95
KV_BYTES_PER_ELEMENT = 2  # f16 K and V


class Verdict(str, Enum):
    FITS_VRAM = "fits_vram"
    FITS_RAM = "fits_ram"
    WONT_FIT = "wont_fit"


LABELS = {Verdict.FITS_VRAM: "fits in VRAM", Verdict.FITS_RAM: "fits in RAM, slower", Verdict.WONT_FIT: "won't fit"}


@dataclass(frozen=True)
class FitEstimate:
    pair_id: str
    quant: str
    draft_quant: str | None
    n_ctx: int
    weights_target: int
    weights_draft: int
    kv_target: int
    kv_draft: int
    recurrent_state: int
    overhead: int
    size_is_estimate: bool  # a weight size came from an estimate, not the exact file size
    vram_budget: int
    ram_budget: int
    gpu_fraction: float  # share of the need that would sit in GPU memory
    verdict: Verdict
    message: str

    @property
    def total(self) -> int:
        return self.weights_target + self.weights_draft + self.kv_target + self.kv_draft + self.recurrent_state + self.overhead

    @property
    def label(self) -> str:
        return LABELS[self.verdict]

    def breakdown(self) -> str:
        """The sum behind `total`, for display next to the verdict."""
        parts = [f"target {gib(self.weights_target)}"]
        if self.draft_quant:
            parts.append(f"draft {gib(self.weights_draft)}")
        parts.append(f"KV {gib(self.kv_target + self.kv_draft)} at {self.n_ctx} tokens")
        if self.recurrent_state:
            parts.append(f"recurrent state {gib(self.recurrent_state)}")
        parts.append(f"buffers {gib(self.overhead)}")
        return " + ".join(parts) + f" = {gib(self.total)}"


def gib(n: int) -> str:
    return f"{n / GIB:.2f} GiB" if 0 < n < GIB else f"{n / GIB:.1f} GiB"


def kv_cache_bytes(facts: ArchFacts, n_ctx: int, bytes_per_element: int = KV_BYTES_PER_ELEMENT) -> int:
    """KV cache size for `n_ctx` tokens, by the formula in the module docstring."""
    per_cell = facts.n_head_kv * (facts.key_length + facts.value_length) * bytes_per_element
    swa = min(facts.swa_layers, facts.kv_layers) if facts.swa_window > 0 else 0
    full = facts.kv_layers - swa
    cells = full * n_ctx + swa * min(n_ctx, facts.swa_window)
    return cells * per_cell


def ram_budget(hw: Hardware) -> int:
    """RAM a model may use: total minus what the OS and the app itself need."""
    return max(0, hw.ram_total - max(2 * GIB, hw.ram_total // 10))


def _verdict(need: int, hw: Hardware) -> tuple[Verdict, int, int, float]:
    vram = int(hw.vram_free * VRAM_USABLE) if hw.gpu_offload else 0
    ram = ram_budget(hw)
    if vram and need <= vram:
        return Verdict.FITS_VRAM, vram, ram, 1.0
    if need <= ram + vram:
        return Verdict.FITS_RAM, vram, ram, (vram / need) if need else 0.0
    return Verdict.WONT_FIT, vram, ram, (vram / need) if need else 0.0


def _message(v: Verdict, need: int, vram: int, ram: int, frac: float, hw: Hardware, approx: bool) -> str:
    need_s = ("about " if approx else "") + gib(need)
    gpu = ", ".join(d.description or d.name for d in hw.devices if not d.integrated) or "the GPU"
    if v is Verdict.FITS_VRAM:
        return f"Fits in VRAM: needs {need_s}, {gpu} has {gib(hw.vram_free)} free."
    if v is Verdict.FITS_RAM:
        if vram:
            return (
                f"Fits in RAM, slower: needs {need_s}; {gpu} has {gib(hw.vram_free)} free, so about "
                f"{round(frac * 100)}% runs on the GPU and the rest from RAM ({gib(ram)} usable)."
            )
        return f"Fits in RAM, slower: needs {need_s} of {gib(ram)} usable RAM; no GPU llama.cpp can use ({hw.backend})."
    room = gib(ram + vram)
    return f"Won't fit: needs {need_s}, but this machine has {room} of usable memory (RAM{' + VRAM' if vram else ''})."


def estimate(
    pair: ModelPair,
    quant: str | None = None,
    n_ctx: int = 8192,
    *,
    draft_quant: str | None = None,
    use_draft: bool = True,
    hardware: Hardware | None = None,
    draft_max: int = DEFAULT_DRAFT_MAX,
) -> FitEstimate:
    """Estimate memory for `pair` at `quant` and `n_ctx` (clamped to the trained context)."""
    target_file, draft_file = pair.files(quant, draft_quant)
    approx = not target_file.size_exact or target_file.size is None or (use_draft and not draft_file.size_exact)
    return estimate_files(
        pair.target.facts,
        target_file.size,
        n_ctx,
        draft=pair.draft.facts if use_draft else None,
        draft_size=draft_file.size if use_draft else None,
        hardware=hardware,
        draft_max=draft_max,
        approx=approx,
        pair_id=pair.id,
        quant=target_file.quant,
        draft_quant=draft_file.quant if use_draft else None,
    )


def estimate_files(
    target: ArchFacts,
    target_size: int | None,
    n_ctx: int = 8192,
    *,
    draft: ArchFacts | None = None,
    draft_size: int | None = None,
    hardware: Hardware | None = None,
    draft_max: int = DEFAULT_DRAFT_MAX,
    approx: bool = False,
    pair_id: str = "",
    quant: str = "",
    draft_quant: str | None = None,
) -> FitEstimate:
    """The estimate for any target (and optional draft) whose architecture facts are known: from the
    catalog, a local file, or a remote header read with a Range request.

    With a draft, a recurrent/hybrid target keeps 1 + draft_max copies of its recurrent state
    (llama.cpp's n_rs_seq rollback snapshots, one per draft token that may be rejected)."""
    if hardware is None:
        from atomicchat.models.hardware import probe

        hardware = probe()
    n_ctx = max(1, min(int(n_ctx), target.context_length))
    wt = target_size or 0
    wd = (draft_size or 0) if draft is not None else 0
    kv_t = kv_cache_bytes(target, n_ctx)
    kv_d = kv_cache_bytes(draft, n_ctx) if draft is not None else 0
    planes = 1 + max(0, draft_max) if draft is not None else 1
    state = target.recurrent_state_bytes * planes + (draft.recurrent_state_bytes if draft is not None else 0)
    approx = approx or target_size is None or (draft is not None and draft_size is None)
    need = wt + wd + kv_t + kv_d + state + OVERHEAD_BYTES
    verdict, vram, ram, frac = _verdict(need, hardware)
    return FitEstimate(
        pair_id=pair_id,
        quant=quant,
        draft_quant=draft_quant if draft is not None else None,
        n_ctx=n_ctx,
        weights_target=wt,
        weights_draft=wd,
        kv_target=kv_t,
        kv_draft=kv_d,
        recurrent_state=state,
        overhead=OVERHEAD_BYTES,
        size_is_estimate=approx,
        vram_budget=vram,
        ram_budget=ram,
        gpu_fraction=frac,
        verdict=verdict,
        message=_message(verdict, need, vram, ram, frac, hardware, approx),
    )


def facts_from_gguf(path: str | Path) -> ArchFacts:
    """Best-effort ArchFacts from a GGUF header, for imported files the catalog does not describe.

    Hybrid models list `attention.head_count_kv` per layer (0 on recurrent layers), or give a
    `full_attention_interval`; recurrent state follows llama.cpp: f32 conv + SSM state per layer.
    """
    from atomicchat.engine.gguf_header import read_header

    return facts_from_header(read_header(path), Path(path).name)


def facts_from_header(h: Any, name: str) -> ArchFacts:
    """ArchFacts from a parsed GGUF header (atomicchat.engine.gguf_header.GGUFHeader)."""

    def num(key: str, default: int = 0) -> int:
        v = h.arch_key(key, default)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default

    n_layer = num("block_count")
    n_embd = num("embedding_length")
    n_head = num("attention.head_count", 1) or 1
    kv_raw = h.arch_key("attention.head_count_kv", n_head)
    if isinstance(kv_raw, list):
        kv_layers = sum(1 for x in kv_raw if x)
        n_head_kv = max((int(x) for x in kv_raw), default=0)
    else:
        n_head_kv = int(kv_raw or n_head)
        interval = num("full_attention_interval")
        kv_layers = n_layer // interval if interval else n_layer
    key_len = num("attention.key_length", n_embd // n_head)
    val_len = num("attention.value_length", key_len)
    d_inner, d_state, groups, conv = (
        num("ssm.inner_size"),
        num("ssm.state_size"),
        num("ssm.group_count"),
        num("ssm.conv_kernel"),
    )
    rec_layers = n_layer - kv_layers
    per_layer = 4 * (d_state * d_inner + max(conv - 1, 0) * (d_inner + 2 * groups * d_state)) if d_inner else 0
    return ArchFacts(
        n_layer=n_layer,
        n_embd=n_embd,
        n_vocab=h.n_vocab,
        context_length=num("context_length", 4096) or 4096,
        kv_layers=kv_layers,
        n_head_kv=n_head_kv,
        key_length=key_len,
        value_length=val_len,
        swa_window=num("attention.sliding_window"),
        recurrent_state_bytes=rec_layers * per_layer,
        notes=f"read from {name}",
    )
