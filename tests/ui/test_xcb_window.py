"""The real app on a real X server (Xvfb) with Qt's xcb platform: the window opens on the bundled
first-run model and its picture, taken from the X server, is a real window (not one colour)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or shutil.which("Xvfb") is None,
    reason="needs Xvfb (.ci/run installs it: apt-get install xvfb)",
)


def _start_xvfb() -> tuple[subprocess.Popen[bytes], str]:
    for n in range(91, 120):
        if Path(f"/tmp/.X11-unix/X{n}").exists() or Path(f"/tmp/.X{n}-lock").exists():
            continue
        proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if Path(f"/tmp/.X11-unix/X{n}").exists():
                return proc, f":{n}"
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        proc.kill()
        proc.wait()
    pytest.fail("Xvfb did not start on any display :91..:119")


def test_window_opens_under_xcb_and_screenshot_is_real(tmp_path):
    from PySide6.QtGui import QImage

    xvfb, display = _start_xvfb()
    shot = tmp_path / "first-window.png"
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "ATOMICCHAT_HOME")}
    env.update(DISPLAY=display, XDG_DATA_HOME=str(tmp_path / "d"), XDG_CONFIG_HOME=str(tmp_path / "c"),
               XDG_CACHE_HOME=str(tmp_path / "x"), QT_QPA_PLATFORM="xcb")
    try:
        r = subprocess.run([sys.executable, "-m", "atomicchat", "--screenshot", str(shot), "--quit-after", "90"],
                           capture_output=True, text=True, env=env, timeout=180)
    finally:
        xvfb.terminate()
        xvfb.wait(10)
    assert r.returncode == 0, r.stderr[-2000:]
    assert shot.is_file() and shot.stat().st_size > 10_000, r.stderr[-2000:]
    img = QImage(str(shot))
    assert img.width() >= 600 and img.height() >= 400
    colours = {img.pixel(x, y) for x in range(0, img.width(), 23) for y in range(0, img.height(), 17)}
    assert len(colours) > 20  # text, widgets and a status bar, not a blank or one-colour frame


def test_self_test_checks_the_real_display(tmp_path):
    import json

    xvfb, display = _start_xvfb()
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    try:
        ok = subprocess.run([sys.executable, "-m", "atomicchat", "--self-test", "--json"], capture_output=True,
                            text=True, env={**env, "DISPLAY": display}, timeout=300)
    finally:
        xvfb.terminate()
        xvfb.wait(10)
    bad = subprocess.run([sys.executable, "-m", "atomicchat", "--self-test", "--json"], capture_output=True,
                         text=True, env={**env, "DISPLAY": ":118"}, timeout=300)  # no X server there
    checks = {c["name"]: c for c in json.loads(ok.stdout)["checks"]}
    assert ok.returncode == 0 and checks["display"]["status"] == "ok" and "xcb" in checks["display"]["detail"]
    checks = {c["name"]: c for c in json.loads(bad.stdout)["checks"]}
    assert bad.returncode == 1 and checks["display"]["status"] == "fail"
    assert ":118" in checks["display"]["detail"]
