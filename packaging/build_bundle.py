"""Build the PyInstaller onedir bundle (every OS), optionally run its self-test.

    python packaging/build_bundle.py                      # -> dist/AtomicChat/ (+ AtomicChat.app on macOS)
    python packaging/build_bundle.py --dist D --work W    # other output folders (CI uses temp dirs)
    python packaging/build_bundle.py --self-test          # then run `AtomicChat --self-test` from it

Use the Python of the environment whose llama-cpp-python should be shipped: the variant (cpu, cuda,
metal) is whatever that llama-cpp-python was compiled with (see packaging/README.md).
Prints the bundle folder as the last line of stdout.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bundle_config as cfg  # noqa: E402


def executable(bundle: Path, cli: bool = True) -> Path:
    """The executable inside a onedir bundle (on Windows the console twin when `cli`)."""
    if sys.platform == "win32":
        return bundle / (f"{cfg.CLI_EXE_NAME}.exe" if cli else f"{cfg.EXE_NAME}.exe")
    return bundle / cfg.EXE_NAME


def clean_env(home: Path) -> dict[str, str]:
    """The environment an end user's desktop gives the app: no Python or venv variables."""
    keep = ("PATH", "SYSTEMROOT", "WINDIR", "TEMP", "TMP", "LANG", "LC_ALL", "DISPLAY", "WAYLAND_DISPLAY")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", os.defpath).split(os.pathsep) if p and ".venv" not in p and "pyenv" not in p
    ) or os.defpath
    env["HOME"] = str(home)
    env["USERPROFILE"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    env["HF_HUB_OFFLINE"] = "1"
    return env


def build(dist: Path, work: Path, variant: str | None = None, log=None) -> Path:
    env = dict(os.environ)
    if variant:
        env["ATOMICCHAT_VARIANT"] = variant
    env.pop("PYTHONPATH", None)
    cmd = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--log-level",
        os.environ.get("ATOMICCHAT_PYI_LOG", "WARN"),
        "--distpath",
        str(dist),
        "--workpath",
        str(work),
        str(HERE / "atomicchat.spec"),
    ]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=str(cfg.ROOT), env=env, stdout=log, stderr=subprocess.STDOUT if log else None)
    if proc.returncode != 0:
        raise SystemExit(f"PyInstaller failed (exit {proc.returncode})")
    bundle = dist / cfg.EXE_NAME
    if not executable(bundle, cli=False).exists():
        raise SystemExit(f"PyInstaller finished but {executable(bundle, cli=False)} is missing")
    print(f"built {bundle} in {time.monotonic() - t0:.0f}s", file=sys.stderr)
    return bundle


def self_test(bundle: Path, *extra: str) -> int:
    with tempfile.TemporaryDirectory(prefix="atomicchat-home-") as home:
        return subprocess.run(
            [str(executable(bundle)), "--self-test", *extra], cwd=home, env=clean_env(Path(home))
        ).returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", type=Path, default=cfg.ROOT / "dist", help="output folder (default dist/)")
    ap.add_argument("--work", type=Path, default=cfg.ROOT / "build" / "pyinstaller", help="PyInstaller work folder")
    ap.add_argument("--variant", help="name the build (default: detected from llama_cpp/lib)")
    ap.add_argument("--clean", action="store_true", help="delete the work folder first")
    ap.add_argument("--self-test", action="store_true", help="run the bundle's --self-test afterwards")
    args = ap.parse_args(argv)
    if args.clean and args.work.exists():
        shutil.rmtree(args.work)
    bundle = build(args.dist.resolve(), args.work.resolve(), args.variant)
    if args.self_test:
        rc = self_test(bundle)
        if rc != 0:
            return rc
    print(bundle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
