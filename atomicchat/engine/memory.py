"""Memory preflight at load: refuse a model + context that this computer cannot hold, with what fits,
instead of letting the system's out-of-memory killer end the process halfway through the load.

Need = weight files + KV cache for the context (both models) + recurrent-state planes + compute
buffers, the same estimate as the model manager's fit (atomicchat.models.fit).
"""

from __future__ import annotations

from atomicchat.engine.errors import EngineError
from atomicchat.engine.validate import DraftInfo, TargetInfo

GIB = 1024**3


class NotEnoughMemoryError(EngineError):
    """The model and context do not fit in this computer's free memory."""


def need_bytes(target: TargetInfo, draft: DraftInfo | None, n_ctx: int, draft_max: int) -> tuple[int, int]:
    """(bytes needed at n_ctx, bytes each further context token adds)."""
    from atomicchat.models.fit import OVERHEAD_BYTES, facts_from_header, kv_cache_bytes

    tf = facts_from_header(target.header, target.path.name)
    df = facts_from_header(draft.header, draft.path.name) if draft is not None else None
    planes = 1 + max(0, draft_max) if draft is not None else 1
    fixed = target.file_size + (draft.file_size if draft else 0) + tf.recurrent_state_bytes * planes + OVERHEAD_BYTES
    per_token = kv_cache_bytes(tf, 1) + (kv_cache_bytes(df, 1) if df else 0)
    return fixed + per_token * n_ctx, per_token


def check_memory(target: TargetInfo, draft: DraftInfo | None, n_ctx: int, draft_max: int,
                 available: int | None = None) -> None:
    """Raise NotEnoughMemoryError when the need is above the free RAM (CPU builds of llama.cpp)."""
    if available is None:
        import psutil

        available = int(psutil.virtual_memory().available)
    need, per_token = need_bytes(target, draft, n_ctx, draft_max)
    if need <= available:
        return
    fixed = need - per_token * n_ctx
    room = available - fixed
    if room < per_token * 256:
        raise NotEnoughMemoryError(
            f"{target.path.name} needs {need / GIB:.1f} GiB with a context of {n_ctx:,} tokens, and even its weights "
            f"({fixed / GIB:.1f} GiB) do not fit in the {available / GIB:.1f} GiB free; choose a smaller model or quant."
        )
    fits = 1 << (int(room // max(per_token, 1)).bit_length() - 1)  # a power of two, as contexts usually are
    raise NotEnoughMemoryError(
        f"Context {n_ctx:,} needs {need / GIB:.1f} GiB; {fits:,} fits in the {available / GIB:.1f} GiB free. "
        "Lower the context size in Settings (or with --ctx)."
    )
