"""Pieces every benchmark script shares: one greedy run, a llama.cpp-converted copy of a model, the
load average. Scripts put the repository root on sys.path and import this as `benchmarks.common`."""

from __future__ import annotations

import os
from pathlib import Path

from atomicchat.engine import Engine, Finished, GenParams

FTYPES = {"F32": 0, "F16": 1, "Q8_0": 7}  # llama_ftype values of llama.h


def policy_state(pol) -> dict:  # noqa: ANN001 - DraftPolicy | None
    """The adaptive policy's prices (ms by size), acceptance profile and content shifts at the end of a
    run ({} without one): what its choices rested on, when a cell surprises."""
    if pol is None:
        return {}
    rate0 = pol.rate(0)
    return dict(plain_ms=round(1e3 / rate0, 3) if rate0 else None,
                verify_ms={k: round(v * 1e3, 3) for k, v in sorted(pol.verify.values.items())},
                draft_ms={k: round(v * 1e3, 3) for k, v in sorted(pol.draft.values.items())},
                p=[round(x, 3) for x in pol.profile.p()[1:]], shifts=pol.profile.shifts)


def run_once(eng: Engine, prompt: list[int], max_tokens: int, use_draft: bool, draft_max: int | None,
             p_min: float | None = None) -> Finished:
    """One greedy reply from an emptied cache, so every run pays the same prefill (what an engine has
    learned, e.g. the adaptive policy's costs, is kept)."""
    eng.reset()
    fin = None
    for ev in eng.generate(prompt, GenParams(max_tokens=max_tokens, temperature=0.0, use_draft=use_draft,
                                             draft_max=draft_max, draft_p_min=p_min)):
        if isinstance(ev, Finished):
            fin = ev
    assert fin is not None
    return fin


def converted(src: Path, ftype_name: str, cache: Path) -> Path:
    """src re-typed by llama.cpp (llama_model_quantize, allow_requantize): cached by name, size, mtime."""
    import ctypes

    from llama_cpp import llama_cpp as L

    st = src.stat()
    dst = cache / f"{src.stem}.{ftype_name}.{st.st_size}-{int(st.st_mtime)}.gguf"
    if dst.exists():
        return dst
    cache.mkdir(parents=True, exist_ok=True)
    p = L.llama_model_quantize_default_params()
    p.ftype = FTYPES[ftype_name]
    p.allow_requantize = True
    p.nthread = 1
    tmp = dst.with_suffix(".part")
    rc = L.llama_model_quantize(str(src).encode(), str(tmp).encode(), ctypes.byref(p))
    if rc != 0:
        raise SystemExit(f"llama_model_quantize -> {rc}")
    os.replace(tmp, dst)
    return dst


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"
