"""Every benchmark script answers --help: argparse formats each help string with %, and one stray
'14%' in benchmarks/idle_draft_cost.py made its --help a TypeError traceback (2026-12-06)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py")
                 if "argparse" in p.read_text() and "__main__" in p.read_text())


def test_the_scripts_with_a_command_line_are_found():
    assert {"adaptive_bench.py", "idle_draft_cost.py", "smol_bench.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_help_prints_the_usage(script: Path):
    r = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("usage:") and "--help" in r.stdout and not r.stderr
