"""`atomicchat --self-test` from the source tree (the bundle runs the same code: test_bundle.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from atomicchat import demo
from atomicchat.cli import selftest
from tests.packaging._load import ROOT


def _run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "atomicchat", "--self-test", *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env,
    )


def test_self_test_json_generated_pair():
    proc = _run("--json", "--models", "generated")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True
    assert report["frozen"] is False
    assert report["models"] == "generated"
    assert report["device"].startswith(("CPU", "GPU"))
    assert "CPU" in report["backends"]
    checks = {c["name"]: c for c in report["checks"]}
    for name in ("llama.cpp", "dflash symbols", "models", "target-only", "dflash", "lossless", "qt", "imports"):
        assert checks[name]["status"] == "ok", checks[name]
    assert checks["target-only"]["data"]["tokens"] == checks["dflash"]["data"]["tokens"]
    assert len(checks["dflash"]["data"]["tokens"]) == 24
    assert checks["dflash"]["data"]["n_drafted"] > 0
    assert "offscreen" in checks["qt"]["data"]["platforms"]


def test_self_test_human_report():
    proc = _run("--no-qt", "--max-tokens", "8")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.splitlines()[-1] == "PASS"
    assert "self-test (source" in out
    assert "[ok  ] lossless" in out
    assert "device: " in out
    assert "qt" not in {line.split()[2] for line in out.splitlines() if line.startswith("  [")}


def test_self_test_demo_pair_or_clear_failure():
    proc = _run("--json", "--no-qt", "--models", "demo")
    report = json.loads(proc.stdout)
    if demo.demo_available():
        assert proc.returncode == 0, proc.stdout
        assert report["models"] == "demo"
    else:
        assert proc.returncode == 1
        models = next(c for c in report["checks"] if c["name"] == "models")
        assert models["status"] == "fail" and "demo" in models["detail"]


def test_bad_arguments_are_one_line():
    proc = _run("--max-tokens", "1")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--max-tokens" in proc.stderr


@pytest.mark.parametrize(
    "info, names",
    [
        ("CPU : SSE3 = 1 | AVX2 = 1 | OPENMP = 1 |", ["CPU"]),
        ("CUDA : ARCHS = 890 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | CPU : SSE3 = 1 | AVX = 1 |", ["CUDA", "CPU"]),
        ("Metal : EMBED_LIBRARY = 1 | CPU : NEON = 1 | ARM_FMA = 1 |", ["Metal", "CPU"]),
        ("", []),
    ],
)
def test_backend_names(info, names):
    assert selftest._backends(info) == names


def test_plugin_names():
    assert selftest._plugin_name("libqxcb.so") == "xcb"
    assert selftest._plugin_name("qwindows.dll") == "windows"
    assert selftest._plugin_name("libqcocoa.dylib") == "cocoa"
    assert selftest._plugin_name("libqwayland.so") == "wayland"
