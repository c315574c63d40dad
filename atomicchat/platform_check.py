"""Before Qt starts: are the system libraries of Qt's X11 (xcb) platform plugin installed?

Without them Qt prints one line naming only the first missing library and aborts the process (exit
134). We run `ldd` on the plugin instead, and name every missing library with the packages and the
command that install them on Debian/Ubuntu (apt) and Fedora (dnf). Qt-free; nothing here imports Qt.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# soname -> (Debian/Ubuntu package, Fedora package)
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
}


@dataclass(frozen=True)
class XcbCheck:
    missing: tuple[str, ...]  # sonames ldd reported as "not found"

    @property
    def ok(self) -> bool:
        return not self.missing

    def message(self) -> str:
        known = [s for s in self.missing if s in PACKAGES]
        ours = [s for s in self.missing if s.startswith("libQt6") or s.startswith("libpyside6")]
        other = [s for s in self.missing if s not in known and s not in ours]
        lines = [
            "Atomic Chat cannot open its window: these libraries that Qt's X11 support needs are not installed: "
            f"{', '.join(self.missing)}."
        ]
        if known:
            lines.append(f"  Debian/Ubuntu:  sudo apt install {' '.join(sorted({PACKAGES[s][0] for s in known}))}")
            lines.append(f"  Fedora:         sudo dnf install {' '.join(sorted({PACKAGES[s][1] for s in known}))}")
        if ours:
            lines.append(f"  {', '.join(ours)} belong to Atomic Chat's own Qt: reinstall Atomic Chat "
                         "(sudo apt install / sudo dnf install cannot provide them).")
        if other:
            lines.append(f"  Install the packages that provide {', '.join(other)} with your package manager.")
        lines.append("Then start Atomic Chat again. (The headless commands, e.g. `atomicchat generate`, work without them.)")
        return "\n".join(lines)


def wants_xcb(env: dict[str, str] | None = None, platform: str | None = None) -> bool:
    """Would Qt pick its xcb plugin here? Linux with an X display, unless another platform is chosen."""
    env = dict(os.environ) if env is None else env
    if (platform or sys.platform) != "linux":
        return False
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(":", 1)[0].split(";", 1)[0] == "xcb"
    return bool(env.get("DISPLAY")) and not env.get("WAYLAND_DISPLAY")


def parse_ldd(output: str) -> tuple[str, ...]:
    """Sonames that `ldd` lists as `libfoo.so.1 => not found`."""
    return tuple(dict.fromkeys(ln.split("=>")[0].strip() for ln in output.splitlines() if "=> not found" in ln))


def xcb_plugin() -> Path | None:
    """PySide6's libqxcb.so ($ATOMICCHAT_QXCB names another copy: for tests and diagnostics)."""
    override = os.environ.get("ATOMICCHAT_QXCB")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        p = Path(root) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if p.is_file():
            return p
    return None


def check_xcb(plugin: Path | None = None) -> XcbCheck:
    """`ldd` on the xcb plugin and the Qt library it wraps; no ldd or no plugin: nothing to report."""
    plugin = plugin or xcb_plugin()
    ldd = shutil.which("ldd")
    if plugin is None or ldd is None:
        return XcbCheck(())
    targets = [plugin, *sorted((plugin.parent.parent.parent / "lib").glob("libQt6XcbQpa.so*"))[:1]]
    missing: list[str] = []
    for t in targets:
        try:
            out = subprocess.run([ldd, str(t)], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        missing.extend(s for s in parse_ldd(out) if s not in missing)
    return XcbCheck(tuple(missing))


def preflight() -> str | None:
    """The message to print instead of starting Qt, or None when the window can open."""
    if not wants_xcb():
        return None
    result = check_xcb()
    return None if result.ok else result.message()
