"""benchmarks/ui_lag.py streams through the real window and fails when it streamed nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATOMICCHAT_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_streams_every_token_and_prints_figures(tmp_path):
    r = _run(tmp_path, "import sys; sys.path.insert(0, 'benchmarks'); import ui_lag; "
                       "sys.exit(ui_lag.main(['--tokens', '200', '--rate', '4000', '--idle-s', '0.2']))")
    assert r.returncode == 0, r.stderr[-2000:]
    reply = next(line for line in r.stdout.splitlines() if line.startswith("reply:"))
    assert int(reply.split()[1]) >= 200
    assert "streaming  ticks=" in r.stdout


def test_an_engine_that_streams_nothing_fails_without_figures(tmp_path):
    code = (
        "import sys; sys.path.insert(0, 'benchmarks'); import ui_lag\n"
        "class Broken(ui_lag.PacedEngine):\n"
        "    def generate(self, tokens, params, should_stop=lambda: False):\n"
        "        raise RuntimeError('stub engine broke')\n"
        "        yield\n"
        "sys.exit(ui_lag.main(['--tokens', '200', '--idle-s', '0.1'], engine_factory=Broken))\n"
    )
    r = _run(tmp_path, code)
    assert r.returncode == 1, (r.stdout[-1000:], r.stderr[-2000:])
    assert "streamed 0 of 200 tokens" in r.stderr
    assert "p50=" not in r.stdout
