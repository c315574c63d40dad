"""Atomic Chat's icon: one geometry, written as SVG and drawn with QPainter into PNGs; .ico/.icns packers.

    python packaging/make_icons.py                 # (re)writes resources/icons/atomicchat.svg + PNGs
    python packaging/make_icons.py --ico X.ico     # packs the committed PNGs into a Windows icon
    python packaging/make_icons.py --icns X.icns   # packs them into a macOS icon

PNG drawing needs PySide6 (QtGui only, offscreen; no QtSvg). Packing .ico/.icns is plain Python
(both formats may embed PNG data), so the spec can call it on any build machine without Pillow.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICON_DIR = ROOT / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

# The design on a 512 x 512 canvas: a rounded square with a diagonal gradient, three electron
# orbits (ellipses turned by 0/60/120 degrees) and an amber nucleus.
CANVAS = 512
BG_RECT = (32, 32, 448, 448)
BG_RADIUS = 100
BG_COLORS = ("#4F46E5", "#9333EA")  # top-left -> bottom-right
ORBIT_RX, ORBIT_RY = 168, 62
ORBIT_ANGLES = (0, 60, 120)
ORBIT_WIDTH = 22
ORBIT_COLOR = "#FFFFFF"
NUCLEUS_R = 44
NUCLEUS_COLOR = "#FBBF24"
ELECTRON_R = 20  # one electron on each orbit's right end


def svg() -> str:
    x, y, w, h = BG_RECT
    c = CANVAS / 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{CANVAS}" height="{CANVAS}" viewBox="0 0 {CANVAS} {CANVAS}">',
        "  <title>Atomic Chat</title>",
        "  <defs>",
        f'    <linearGradient id="bg" x1="{x}" y1="{y}" x2="{x + w}" y2="{y + h}" gradientUnits="userSpaceOnUse">',
        f'      <stop offset="0" stop-color="{BG_COLORS[0]}"/>',
        f'      <stop offset="1" stop-color="{BG_COLORS[1]}"/>',
        "    </linearGradient>",
        "  </defs>",
        f'  <rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{BG_RADIUS}" fill="url(#bg)"/>',
    ]
    for a in ORBIT_ANGLES:
        parts.append(
            f'  <ellipse cx="{c:g}" cy="{c:g}" rx="{ORBIT_RX}" ry="{ORBIT_RY}" fill="none" stroke="{ORBIT_COLOR}" '
            f'stroke-width="{ORBIT_WIDTH}" transform="rotate({a} {c:g} {c:g})"/>'
        )
    for a in ORBIT_ANGLES:
        parts.append(
            f'  <circle cx="{c + ORBIT_RX:g}" cy="{c:g}" r="{ELECTRON_R}" fill="{ORBIT_COLOR}" '
            f'transform="rotate({a} {c:g} {c:g})"/>'
        )
    parts.append(f'  <circle cx="{c:g}" cy="{c:g}" r="{NUCLEUS_R}" fill="{NUCLEUS_COLOR}"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def draw_png(size: int, path: Path) -> None:
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QBrush, QColor, QImage, QLinearGradient, QPainter, QPainterPath, QPen

    img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    s = size / CANVAS
    p.scale(s, s)
    x, y, w, h = BG_RECT
    grad = QLinearGradient(QPointF(x, y), QPointF(x + w, y + h))
    grad.setColorAt(0.0, QColor(BG_COLORS[0]))
    grad.setColorAt(1.0, QColor(BG_COLORS[1]))
    path_bg = QPainterPath()
    path_bg.addRoundedRect(QRectF(x, y, w, h), BG_RADIUS, BG_RADIUS)
    p.fillPath(path_bg, QBrush(grad))
    # Small sizes: keep strokes at least ~1.1 device pixels so the orbits stay visible.
    width = max(ORBIT_WIDTH, 1.1 / s)
    c = CANVAS / 2
    for a in ORBIT_ANGLES:
        p.save()
        p.translate(c, c)
        p.rotate(a)
        p.setPen(QPen(QColor(ORBIT_COLOR), width))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawEllipse(QPointF(0, 0), ORBIT_RX, ORBIT_RY)
        if size >= 32:  # electrons only where they read as dots, not noise
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(ORBIT_COLOR))
            p.drawEllipse(QPointF(ORBIT_RX, 0), ELECTRON_R, ELECTRON_R)
        p.restore()
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor(NUCLEUS_COLOR))
    p.drawEllipse(QPointF(c, c), max(NUCLEUS_R, 1.6 / s), max(NUCLEUS_R, 1.6 / s))
    p.end()
    if not img.save(str(path), "PNG"):
        raise OSError(f"could not write {path}")


def png_path(size: int, folder: Path = ICON_DIR) -> Path:
    return folder / f"atomicchat-{size}.png"


def generate(folder: Path = ICON_DIR) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication(["make_icons"])  # noqa: F841 (kept alive)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "atomicchat.svg").write_text(svg(), encoding="utf-8")
    out = [folder / "atomicchat.svg"]
    for size in SIZES:
        draw_png(size, png_path(size, folder))
        out.append(png_path(size, folder))
    return out


def _png(size: int, folder: Path) -> bytes:
    data = png_path(size, folder).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{png_path(size, folder)} is not a PNG file")
    return data


def write_ico(out: Path, folder: Path = ICON_DIR) -> Path:
    """A Windows .ico holding PNG images 16..256 (PNG-in-ICO: Windows Vista and later)."""
    sizes = [s for s in SIZES if s <= 256]
    blobs = [_png(s, folder) for s in sizes]
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries = b""
    for s, blob in zip(sizes, blobs):
        dim = 0 if s == 256 else s  # 0 means 256
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset)
        offset += len(blob)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(header + entries + b"".join(blobs))
    return out


# icns element types that take PNG data, and the pixel size each holds.
_ICNS_TYPES = (
    (b"icp4", 16),
    (b"ic11", 32),  # 16@2x
    (b"icp5", 32),
    (b"ic12", 64),  # 32@2x
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic13", 256),  # 128@2x
    (b"ic08", 256),
    (b"ic14", 512),  # 256@2x
    (b"ic09", 512),
)


def write_icns(out: Path, folder: Path = ICON_DIR) -> Path:
    """A macOS .icns made of PNG elements (no iconutil needed, so it also builds off macOS)."""
    body = b""
    for kind, size in _ICNS_TYPES:
        blob = _png(size, folder)
        body += kind + struct.pack(">I", 8 + len(blob)) + blob
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"icns" + struct.pack(">I", 8 + len(body)) + body)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ico", type=Path, help="write a Windows .ico from the PNGs")
    ap.add_argument("--icns", type=Path, help="write a macOS .icns from the PNGs")
    ap.add_argument("--folder", type=Path, default=ICON_DIR, help="icon folder (default resources/icons)")
    args = ap.parse_args(argv)
    if args.ico or args.icns:
        if args.ico:
            print(write_ico(args.ico, args.folder))
        if args.icns:
            print(write_icns(args.icns, args.folder))
        return 0
    for path in generate(args.folder):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
