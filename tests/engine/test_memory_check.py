"""Memory preflight: a context that cannot fit is refused with what fits, before llama.cpp allocates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from atomicchat.engine.errors import ModelLoadError
from atomicchat.engine.memory_check import check_memory, need_bytes
from atomicchat.engine.validate import inspect_draft, inspect_target
from atomicchat.models.hardware import GpuInfo, Hardware


def _hw(free: int) -> Hardware:
    return Hardware(ram_total=free * 2, ram_available=free, disk_free=0, disk_path="/", gpu=GpuInfo(False, "CPU only", ()))


def test_refusal_names_a_context_that_fits(llama_pair):
    t, d = inspect_target(llama_pair.target), inspect_draft(llama_pair.draft)
    free = need_bytes(t, d, 100_000, 15)
    with pytest.raises(ModelLoadError, match=r"Context 1,000,000 needs .*; ([\d,]+) fits in the") as exc:
        check_memory(t, d, 1_000_000, 15, _hw(free))
    fits = int(str(exc.value).split("; ")[1].split(" fits")[0].replace(",", ""))
    assert 99_000 <= fits <= 100_000 and need_bytes(t, d, fits, 15) <= free
    check_memory(t, d, fits, 15, _hw(free))  # what it says fits, fits
    with pytest.raises(ModelLoadError, match="even a small context"):
        check_memory(t, d, 4096, 15, _hw(1 << 20))


def test_huge_ctx_is_a_one_line_refusal_not_an_oom_kill(llama_pair):
    r = subprocess.run(
        [sys.executable, "-m", "atomicchat", "generate", "--model", str(llama_pair.target), "--draft", str(llama_pair.draft),
         "--prompt-tokens", "1,2", "--ctx", "1000000000"],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2],
    )
    assert r.returncode == 1, r.stderr[-2000:]
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Context 1,000,000,000 needs" in lines[0] and "fits in the" in lines[0], r.stderr
