"""Fast checks of the packaging rules, icons and metadata (no PyInstaller run)."""

from __future__ import annotations

import configparser
import re
import shutil
import struct
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import atomicchat
from tests.packaging._load import PACKAGING, ROOT, load

cfg = load("bundle_config")
icons = load("make_icons")


# ---------------------------------------------------------------- version, one place
def test_version_has_one_source():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "atomicchat.__version__"}
    assert cfg.version() == atomicchat.__version__
    assert "pyinstaller" in " ".join(project["project"]["optional-dependencies"]["package"]).lower()


def test_artifact_names():
    stem = cfg.artifact_stem("cuda")
    assert stem.startswith(f"AtomicChat-{atomicchat.__version__}-")
    assert stem.endswith("-cuda")
    iss = (PACKAGING / "windows" / "atomicchat.iss").read_text()
    assert "OutputBaseFilename=AtomicChat-{#AppVersion}-windows-x86_64-{#Variant}-setup" in iss


# ---------------------------------------------------------------- icons
def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


def test_icons_exist_in_every_size():
    for size in icons.SIZES:
        assert _png_size(icons.png_path(size)) == (size, size)
    assert set(icons.SIZES) >= {16, 32, 48, 64, 128, 256, 512}


def test_svg_matches_generator():
    svg = icons.ICON_DIR / "atomicchat.svg"
    assert svg.read_text(encoding="utf-8") == icons.svg(), "run: python packaging/make_icons.py"
    root = ET.fromstring(svg.read_text(encoding="utf-8"))
    assert root.get("viewBox") == "0 0 512 512"


def test_png_generation_is_runnable(tmp_path, qapp):
    icons.draw_png(48, tmp_path / "x.png")
    assert _png_size(tmp_path / "x.png") == (48, 48)


def test_ico_and_icns_structure(tmp_path):
    ico = icons.write_ico(tmp_path / "a.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind) == (0, 1) and count == len([s for s in icons.SIZES if s <= 256])
    sizes = []
    for i in range(count):
        w, h, _c, _r, _planes, bpp, length, offset = struct.unpack("<BBBBHHII", ico[6 + 16 * i : 22 + 16 * i])
        assert bpp == 32 and ico[offset : offset + 8] == b"\x89PNG\r\n\x1a\n"
        assert offset + length <= len(ico)
        sizes.append(w or 256)
    assert 256 in sizes and 16 in sizes

    icns = icons.write_icns(tmp_path / "a.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    pos, kinds = 8, []
    while pos < len(icns):
        kind, length = icns[pos : pos + 4], struct.unpack(">I", icns[pos + 4 : pos + 8])[0]
        assert icns[pos + 8 : pos + 16] == b"\x89PNG\r\n\x1a\n"
        kinds.append(kind)
        pos += length
    assert pos == len(icns)
    assert {b"ic07", b"ic08", b"ic09", b"icp4"} <= set(kinds)


# ---------------------------------------------------------------- llama.cpp library selection
def _fake_libs(tmp_path: Path, names: list[str]) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir()
    for n in names:
        (lib / n).write_bytes(b"x")
    return lib


def test_llama_libraries_linux_follows_needed_entries(tmp_path):
    lib = _fake_libs(
        tmp_path,
        [
            "libllama.so", "libllama.so.0", "libllama.so.0.5.0",
            "libggml.so", "libggml.so.0", "libggml.so.0.25.3",
            "libggml-base.so", "libggml-base.so.0",
            "libggml-cpu.so", "libggml-cpu.so.0",
            "libggml-cuda.so", "libggml-cuda.so.0",
            "libmtmd.so", "libmtmd.so.0",
        ],
    )
    needed = {
        "libllama.so": ["libggml.so.0", "libggml-base.so.0", "libstdc++.so.6"],
        "libggml.so.0": ["libggml-cpu.so.0", "libggml-cuda.so.0", "libggml-base.so.0"],
        "libggml-cpu.so.0": ["libggml-base.so.0", "libgomp.so.1"],
        "libggml-cuda.so.0": ["libggml-base.so.0", "libcudart.so.12"],
    }
    got = cfg.llama_libraries(lib, lambda f: needed.get(Path(f).name, []), plat="linux")
    assert sorted(p.name for p in got) == [
        "libggml-base.so.0", "libggml-cpu.so.0", "libggml-cuda.so.0", "libggml.so.0", "libllama.so",
    ]
    assert cfg.detect_variant(p.name for p in got) == "cuda"


def test_llama_libraries_backend_dl_build_keeps_all_backends(tmp_path):
    lib = _fake_libs(
        tmp_path,
        ["libllama.so", "libggml.so.0", "libggml-base.so.0", "libggml-cpu-haswell.so", "libggml-cpu-sandybridge.so",
         "libggml-cuda.so", "ggml-metal.metal"],
    )
    needed = {"libllama.so": ["libggml.so.0", "libggml-base.so.0"], "libggml.so.0": ["libggml-base.so.0"]}
    names = {p.name for p in cfg.llama_libraries(lib, lambda f: needed.get(Path(f).name, []), plat="linux")}
    assert {"libggml-cpu-haswell.so", "libggml-cpu-sandybridge.so", "libggml-cuda.so", "ggml-metal.metal"} <= names


def test_llama_libraries_windows_and_macos_names(tmp_path):
    lib = _fake_libs(tmp_path, ["llama.dll", "ggml.dll", "ggml-base.dll", "ggml-cpu.dll", "mtmd.dll"])
    needed = {"llama.dll": ["ggml.dll", "ggml-base.dll", "KERNEL32.dll"], "ggml.dll": ["ggml-cpu.dll"],
              "ggml-cpu.dll": ["VCOMP140.DLL"]}
    names = sorted(p.name for p in cfg.llama_libraries(lib, lambda f: needed.get(Path(f).name, []), plat="win32"))
    assert names == ["ggml-base.dll", "ggml-cpu.dll", "ggml.dll", "llama.dll"]

    mac = tmp_path / "mac"
    mac.mkdir()
    for n in ["libllama.dylib", "libggml.dylib", "libggml-base.dylib", "libggml-cpu.dylib", "libggml-metal.dylib",
              "libggml-blas.dylib"]:
        (mac / n).write_bytes(b"x")
    needed = {"libllama.dylib": ["@rpath/libggml.dylib", "@rpath/libggml-base.dylib"],
              "libggml.dylib": ["@rpath/libggml-cpu.dylib", "@rpath/libggml-metal.dylib", "@rpath/libggml-blas.dylib"]}
    got = cfg.llama_libraries(mac, lambda f: needed.get(Path(f).name, []), plat="darwin")
    assert len(got) == 6 and cfg.detect_variant(p.name for p in got) == "metal"


def test_llama_libraries_of_this_environment():
    pytest.importorskip("PyInstaller", reason="needs the [package] extra")
    from PyInstaller.depend.bindepend import get_imports
    got = cfg.llama_libraries(cfg.llama_lib_dir(), lambda f: [n for n, _ in get_imports(f)])
    names = {p.name for p in got}
    assert any(n.startswith(("libllama", "llama")) for n in names)
    assert not any("mtmd" in n for n in names)


# ---------------------------------------------------------------- Qt selection
@pytest.mark.parametrize(
    "dest, keep",
    [
        ("PySide6/Qt/plugins/platforms/libqxcb.so", True),
        ("PySide6/Qt/plugins/platforms/libqwayland.so", True),
        ("PySide6/Qt/plugins/platforms/libqoffscreen.so", True),
        ("PySide6/plugins/platforms/qwindows.dll", True),
        ("PySide6/Qt/plugins/platforms/libqcocoa.dylib", True),
        ("PySide6/Qt/plugins/platforms/libqvnc.so", False),
        ("PySide6/Qt/plugins/platforms/libqeglfs.so", False),
        ("PySide6/Qt/plugins/imageformats/libqjpeg.so", True),
        ("PySide6/Qt/plugins/imageformats/libqpdf.so", False),
        ("PySide6/Qt/plugins/styles/qmodernwindowsstyle.dll", True),
        ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", False),
        ("PySide6/Qt/plugins/platforminputcontexts/libqtvirtualkeyboardplugin.so", False),
        ("PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so", True),
        ("PySide6/Qt/plugins/tls/libqopensslbackend.so", False),
        ("PySide6/Qt/plugins/wayland-shell-integration/libxdg-shell.so", True),
        ("PySide6/Qt/plugins/wayland-shell-integration/libwl-shell-plugin.so", False),
        ("PySide6/Qt/translations/qtbase_de.qm", False),
        ("PySide6/Qt/lib/libQt6Core.so.6", True),
        ("PySide6/Qt/lib/libQt6DBus.so.6", True),
        ("PySide6/Qt/lib/libQt6Quick.so.6", False),
        ("PySide6/Qt/lib/libQt6Pdf.so.6", False),
        ("PySide6/Qt6Qml.dll", False),
        ("PySide6/Qt/lib/QtQuick.framework/Versions/A/QtQuick", False),
        ("PySide6/Qt/lib/QtWidgets.framework/Versions/A/QtWidgets", True),
        ("llama_cpp/lib/libllama.so", True),
        ("libgomp.so.1", True),
    ],
)
def test_qt_file_rules(dest, keep):
    assert cfg.keep_qt_file(dest, {"Core", "Gui", "Widgets"}) is keep


def test_qt_libraries_kept_when_their_binding_is_used():
    assert cfg.keep_qt_file("PySide6/Qt/lib/libQt6Network.so.6", {"Core", "Network"})
    assert cfg.used_qt_modules(["PySide6/QtCore.abi3.so", "PySide6\\QtGui.pyd", "x/QtFoo.so"]) == {"Core", "Gui"}


def test_resource_selection(tmp_path):
    res = tmp_path / "resources"
    (res / "demo").mkdir(parents=True)
    (res / "catalog.json").write_text("{}")
    (res / "demo" / "a.gguf").write_bytes(b"x" * 10)
    (res / "demo" / "b.gguf.partial").write_bytes(b"x")
    (res / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024))
    got = {(f.name, dest) for f, dest in cfg.resource_files(res, max_mb=1)}
    assert got == {("catalog.json", "resources"), ("a.gguf", str(Path("resources") / "demo"))}


def test_spec_and_scripts_parse():
    compile((PACKAGING / "atomicchat.spec").read_text(), "atomicchat.spec", "exec")
    for script in ["linux/common.sh", "linux/build_tarball.sh", "linux/build_appimage.sh", "macos/build_dmg.sh", "make_build_venv.sh"]:
        subprocess.run(["bash", "-n", str(PACKAGING / script)], check=True)
    subprocess.run(["sh", "-n", str(PACKAGING / "linux" / "install.sh")], check=True)
    assert not (PACKAGING / "__init__.py").exists(), "packaging/ must not shadow the PyPI 'packaging' module"


def test_desktop_file():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(PACKAGING / "linux" / "atomicchat.desktop")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Atomic Chat"
    assert entry["Icon"] == "atomicchat"
    assert entry["Exec"].split()[0] == "atomicchat"
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";") and entry["Keywords"].endswith(";")
    validator = shutil.which("desktop-file-validate")
    if validator:
        subprocess.run([validator, str(PACKAGING / "linux" / "atomicchat.desktop")], check=True)


def test_readme_has_installers_section():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^## Installers$", readme, re.M)
