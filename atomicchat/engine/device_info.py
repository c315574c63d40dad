"""Where the target runs, in words: parsed from llama.cpp's load log, kept pure so it is testable."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_OFFLOAD_RE = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")


@dataclass(frozen=True)
class DeviceInfo:
    text: str  # shown in the UI, e.g. "GPU (33/33 layers)"
    gpu_layers_used: int
    notes: tuple[str, ...] = ()


def offloaded_layers(log_lines: Iterable[str]) -> int:
    """Layers llama.cpp reported offloading to a GPU in these log lines (the last report wins)."""
    used = 0
    for line in log_lines:
        m = _OFFLOAD_RE.search(line)
        if m:
            used = int(m.group(1))
    return used


def describe(log_lines: Iterable[str], supports_gpu: bool, gpu_layers_asked: int, n_layer: int) -> DeviceInfo:
    """The device text and notes for a target of n_layer layers loaded with gpu_layers_asked."""
    used = offloaded_layers(log_lines)
    if not supports_gpu:
        notes = ("This build of llama.cpp has no GPU backend, so everything runs on the CPU.",) if gpu_layers_asked else ()
        return DeviceInfo("CPU", 0, notes)
    if gpu_layers_asked == 0:
        return DeviceInfo("CPU (GPU layers set to 0)", 0)
    if not used:
        return DeviceInfo("CPU (no GPU layers were offloaded)", 0)
    return DeviceInfo(f"GPU ({used}/{n_layer + 1} layers)", used)
