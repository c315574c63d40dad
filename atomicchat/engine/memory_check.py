"""Memory preflight at load: refuse a context that cannot fit before llama.cpp allocates it.

llama.cpp allocates the KV cache for the whole context at context creation; a context of a billion
tokens gets the process OOM-killed instead of an error. The need is the fit estimate's formula
(atomicchat.models.fit: weights + KV cache + recurrent state + compute buffers) plus the DFlash
block buffers, against the RAM available now plus free VRAM when llama.cpp can offload.
"""

from __future__ import annotations

from atomicchat.engine.errors import ModelLoadError
from atomicchat.engine.validate import DraftInfo, TargetInfo
from atomicchat.models.fit import OVERHEAD_BYTES, VRAM_USABLE, facts_from_gguf, gib, kv_cache_bytes
from atomicchat.models.hardware import Hardware, probe


def need_bytes(target: TargetInfo, draft: DraftInfo | None, n_ctx: int, draft_max: int) -> int:
    ft = facts_from_gguf(target.path)
    need = target.file_size + kv_cache_bytes(ft, n_ctx) + OVERHEAD_BYTES
    if draft is None:
        return need + ft.recurrent_state_bytes
    fd = facts_from_gguf(draft.path)
    rows = draft_max + 1  # the block: logits and target features per row, in both contexts
    block = rows * (4 * target.n_vocab * 2 + 4 * target.n_embd * len(draft.target_layers))
    state = ft.recurrent_state_bytes * (1 + draft_max) + fd.recurrent_state_bytes
    return need + draft.file_size + kv_cache_bytes(fd, n_ctx) + state + block


def available_bytes(hw: Hardware) -> int:
    vram = int(hw.vram_free * VRAM_USABLE) if hw.gpu_offload else 0
    return hw.ram_available + vram


def check_memory(
    target: TargetInfo, draft: DraftInfo | None, n_ctx: int, draft_max: int, hardware: Hardware | None = None
) -> None:
    """Raise ModelLoadError saying what fits when `n_ctx` would not fit into free memory."""
    need = need_bytes(target, draft, n_ctx, draft_max)
    hw = hardware or probe(target.path.parent)
    free = available_bytes(hw)
    if need <= free:
        return
    lo, hi = 0, n_ctx  # the largest context that fits, to say so
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if need_bytes(target, draft, mid, draft_max) <= free:
            lo = mid
        else:
            hi = mid - 1
    where = "RAM + VRAM" if hw.gpu_offload else "RAM"
    if lo < 256:
        raise ModelLoadError(
            f"{target.path.name} needs {gib(need)} with a context of {n_ctx:,} tokens, and even a small context "
            f"does not fit in the {gib(free)} of {where} free. Close other programs or pick a smaller model."
        )
    fits = lo - lo % 256
    raise ModelLoadError(
        f"Context {n_ctx:,} needs {gib(need)}; {fits:,} fits in the {gib(free)} of {where} free. Lower the context size."
    )
