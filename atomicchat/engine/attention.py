"""Flash attention on or off for a context: chosen from the llama.cpp build and where the layers run.

llama.cpp's default (auto) turns flash attention on for the CPU backend too, and its CPU kernel gets
dearer with every cached position and every row of a batch: on SmolLM2-135M Q4_1, 1 thread, a
decode 1,024 positions deep cost 44 ms with it against 23 ms without, a verify of 4 rows there 130
against 55 ms (benchmarks/attn_bench.py, docs/dflash.md). It was kept on because, with the
llamafile matrix kernels (`GGML_USE_LLAMAFILE`, on in a default build), attention without it sums a
multi-row batch in another order than a one-row decode, and a DFlash verify then breaks near-ties of
the target's logits the other way than target-only would. (Flash attention on did not keep it
exact either: in ggml-cpu/ops.cpp a one-row decode over 512 or more cached positions takes a
split-KV path (`use_split_kv_path`), a batch of rows the tiled or row-wise one, and an adaptive
DFlash reply ~980 positions deep parted from target-only at token 70,
tests/engine/test_attention.py.) Built without them (`-DGGML_LLAMAFILE=OFF`, as
scripts/bootstrap.sh and the installers build llama-cpp-python), every
row of the CPU's matrix products is summed alike however many rows a batch has, and DFlash stays
identical to the target alone with flash attention off (the lossless tests pass there; the same
tests fail with llamafile kernels and flash attention off). So: off on the CPU when the build has no
llamafile kernels, llama.cpp's auto everywhere else (GPU layers, or a build that has them).
"""

from __future__ import annotations

import os

from atomicchat.engine.errors import EngineError

AUTO, OFF, ON = -1, 0, 1  # llama_flash_attn_type
_NAMES = {"auto": AUTO, "off": OFF, "on": ON, "-1": AUTO, "0": OFF, "1": ON}
ENV = "ATOMICCHAT_FLASH_ATTN"  # auto | on | off: overrides the choice (benchmarks, experts)


def has_llamafile(system_info: str) -> bool:
    """Whether the loaded ggml CPU backend has the llamafile matrix kernels
    (`llama_print_system_info` lists `LLAMAFILE = 1` then)."""
    return "LLAMAFILE = 1" in system_info


def choose(system_info: str, on_gpu: bool, forced: str | None = None) -> int:
    """The `flash_attn_type` for a context: `forced` (or $ATOMICCHAT_FLASH_ATTN) when set, else off
    for layers on the CPU of a build without llamafile kernels, else auto."""
    forced = os.environ.get(ENV) if forced is None else forced
    if forced:
        value = _NAMES.get(forced.strip().lower())
        if value is None:
            raise EngineError(f"{ENV} must be auto, on or off, not {forced!r}.")
        return value
    if on_gpu or has_llamafile(system_info):
        return AUTO
    return OFF


def describe(value: int) -> str:
    return {AUTO: "auto", OFF: "off", ON: "on"}[value]
