"""The xcb pre-start check: every missing library named, with apt and dnf commands, before Qt aborts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from atomicchat import platform_check as pc

LDD_OUT = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /opt/x/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms1.so.1 => /lib/libxcb-keysyms.so.1 (0x7f)
\tlibxcb-cursor.so.0 => not found
"""


def test_parse_ldd_and_message() -> None:
    missing = pc.parse_ldd(LDD_OUT)
    assert missing == ("libxcb-cursor.so.0", "libxcb-icccm.so.4")
    msg = pc.XcbCheck(missing).message()
    assert "libxcb-cursor.so.0, libxcb-icccm.so.4" in msg
    assert "sudo apt install libxcb-cursor0 libxcb-icccm4" in msg
    assert "sudo dnf install xcb-util-cursor xcb-util-wm" in msg
    assert "reinstall" in pc.XcbCheck(("libQt6XcbQpa.so.6",)).message()


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({"DISPLAY": ":0"}, "linux", True),
        ({}, "linux", False),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux", False),
        ({"QT_QPA_PLATFORM": "xcb"}, "linux", True),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux", False),
        ({"DISPLAY": ":0"}, "darwin", False),
    ],
)
def test_wants_xcb(env: dict[str, str], platform: str, expected: bool) -> None:
    assert pc.wants_xcb(env, platform) is expected


def test_real_plugin_here_has_its_libraries() -> None:
    plugin = pc.xcb_plugin()
    if plugin is None or not shutil.which("ldd"):
        pytest.skip("no xcb plugin or ldd on this platform")
    result = pc.check_xcb(plugin)
    assert result.ok, result.message()  # CI installs them (.ci/run); a desktop has them


@pytest.mark.skipif(sys.platform != "linux" or not shutil.which("ldd"), reason="ldd on Linux")
def test_app_start_with_a_broken_plugin_prints_the_fix_and_exits_1(tmp_path) -> None:
    plugin = pc.xcb_plugin()
    if plugin is None:
        pytest.skip("PySide6 has no xcb plugin here")
    lonely = tmp_path / "platforms" / "libqxcb.so"  # copied away from the Qt library it links to
    lonely.parent.mkdir()
    shutil.copy(plugin, lonely)
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.update(DISPLAY=":93", ATOMICCHAT_QXCB=str(lonely))
    r = subprocess.run([sys.executable, "-m", "atomicchat"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "libQt6XcbQpa.so.6" in r.stderr and "reinstall Atomic Chat" in r.stderr
    assert "qt.qpa" not in r.stderr  # Qt never started
