"""`atomicchat --self-test`: a headless check that this installation can run models.

It is what CI runs inside the built bundle and what support asks a user to run. Steps:
- load llama.cpp (from the bundle when frozen) and bind the DFlash symbols;
- take the bundled demo pair when there is one, else write a tiny random llama target and DFlash
  draft into a temporary folder (atomicchat.engine.tiny_models);
- generate a few greedy tokens target-only, then with the draft, and require identical tokens;
- start Qt on the offscreen platform, render a widget, list the platform plugins; import the UI.
It prints a short report (or one JSON object with --json) and exits 0 when every check passed, 1
otherwise. Nothing is written outside a temporary folder and nothing touches the network.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from atomicchat import APP_NAME, __version__

OK, FAIL, SKIP = "ok", "fail", "skip"
# Prompt ids for the generated pair (its `test` vocabulary has 512 ids and no tokenizer to speak of).
_TINY_PROMPT = [1, 17, 42, 7, 100, 3, 250, 9]
_DEMO_PROMPT = "Write one short sentence about the sea."


@dataclass
class Check:
    name: str
    status: str
    detail: str = ""
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    version: str = __version__
    frozen: bool = False
    executable: str = ""
    python: str = ""
    platform: str = ""
    models: str = ""  # "demo" | "generated" | ""
    backends: list[str] = field(default_factory=list)
    gpu_offload: bool = False
    device: str = ""
    build: dict[str, Any] = field(default_factory=dict)  # atomicchat_build.json of a packaged app
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks) and any(c.name == "lossless" for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "self-test",
        help="check this installation: generate with and without DFlash on a tiny model pair and compare",
        description="Headless installation check. Exit code 0 means every check passed.",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    p.add_argument(
        "--models",
        choices=("auto", "demo", "generated"),
        default="auto",
        help="model pair to use: the bundled demo pair (auto: when present) or a generated tiny pair",
    )
    p.add_argument("--max-tokens", type=int, default=24, help="tokens to generate per run (default 24)")
    p.add_argument("--gpu-layers", type=int, default=-1, help="-1 = all (default), 0 = CPU only")
    p.add_argument("--threads", type=int, help="CPU threads (default: physical cores)")
    p.add_argument("--no-qt", action="store_true", help="skip the Qt and UI checks")
    p.add_argument("--verbose", action="store_true", help="print tracebacks of failed checks")
    p.set_defaults(func=run)


# ---------------------------------------------------------------------------- helpers
def _timed(report: Report, name: str, fn: Callable[[Check], None], verbose: bool) -> Check:
    check = Check(name, OK)
    t0 = time.perf_counter()
    try:
        fn(check)
    except Exception as exc:  # every failure becomes a line of the report, never a traceback
        check.status = FAIL
        check.detail = f"{type(exc).__name__}: {exc}"
        if verbose:
            check.data["traceback"] = traceback.format_exc()
    check.seconds = round(time.perf_counter() - t0, 3)
    report.checks.append(check)
    return check


def _backends(info: str) -> list[str]:
    """Backend names from llama_print_system_info(): 'CUDA : ARCHS = 890 | ... | CPU : SSE3 = 1 | ...'."""
    names: list[str] = []
    for part in info.split("|"):
        if " : " in part:
            name = part.split(" : ", 1)[0].strip()
            if name and name not in names:
                names.append(name)
    return names


def _demo_pair() -> tuple[Path, Path] | None:
    """The bundled demo pair, when this build ships one (atomicchat.demo or resources/demo)."""
    try:
        from atomicchat import demo  # type: ignore[attr-defined]

        t, d = demo.demo_target_path(), demo.demo_draft_path()
        if t and d and Path(t).is_file() and Path(d).is_file():
            return Path(t), Path(d)
    except ImportError:
        pass
    from atomicchat.paths import resources_dir

    folder = resources_dir() / "demo"
    ggufs = sorted(folder.glob("*.gguf")) if folder.is_dir() else []
    drafts = [p for p in ggufs if "draft" in p.name.lower() or "dflash" in p.name.lower()]
    targets = [p for p in ggufs if p not in drafts]
    if len(targets) == 1 and len(drafts) == 1:
        return targets[0], drafts[0]
    return None


# The DFlash check pins a draft length and turns the confidence cut off: it checks that drafting is
# lossless here, and the adaptive policy may rightly choose plain steps on a machine where drafting does
# not pay, as the cut may drop every token of a generated pair's random draft.
_CHECK_DRAFT_MAX = 4


def _generate(eng: Any, prompt: list[int], max_tokens: int, use_draft: bool) -> Any:
    from atomicchat.engine import Finished
    from atomicchat.engine.requests import gen_params

    final = None
    params = gen_params(max_tokens=max_tokens, temperature=0.0, seed=0, use_draft=use_draft,
                        draft_max=_CHECK_DRAFT_MAX if use_draft else None, draft_p_min=0.0)
    for ev in eng.generate(prompt, params):
        if isinstance(ev, Finished):
            final = ev
    assert final is not None
    return final


def _build_info() -> dict[str, Any]:
    """What packaging/atomicchat.spec recorded about this build (variant, time); {} from source."""
    bundle = getattr(sys, "_MEIPASS", None)
    if not bundle:
        return {}
    try:
        return dict(json.loads((Path(bundle) / "atomicchat_build.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def _plugin_name(filename: str) -> str:
    """libqxcb.so / qxcb.dll / libqcocoa.dylib -> xcb / cocoa (debug 'd' suffixes are kept)."""
    stem = filename.split(".")[0]
    if stem.startswith("lib"):
        stem = stem[3:]
    return stem[1:] if stem.startswith("q") else stem


def _first_difference(a: list[int], b: list[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


# ---------------------------------------------------------------------------- checks
def _check_engine(report: Report, args: argparse.Namespace, workdir: Path) -> None:
    state: dict[str, Any] = {}

    def library(check: Check) -> None:
        from atomicchat.engine.lib import C, system_info

        c = C()
        info = system_info().strip()
        report.backends = _backends(info)
        report.gpu_offload = bool(c.llama_supports_gpu_offload())
        check.detail = str(getattr(c._lib, "_name", "?"))
        check.data = {"path": check.detail, "system_info": info}

    if _timed(report, "llama.cpp", library, args.verbose).status != OK:
        return

    def symbols(check: Check) -> None:
        from atomicchat.engine.ext import load_ext

        ext = load_ext()
        bound = [k for k, v in vars(ext).items() if v is not None]
        check.detail = f"{len(bound)} DFlash entry points bound"

    if _timed(report, "dflash symbols", symbols, args.verbose).status != OK:
        return

    def models(check: Check) -> None:
        pair = None if args.models == "generated" else _demo_pair()
        if pair is None and args.models == "demo":
            raise FileNotFoundError("this build has no bundled demo model pair")
        if pair is None:
            from atomicchat.engine.tiny_models import write_pair

            pair = write_pair(workdir, "selftest")
            report.models = "generated"
            check.detail = "generated tiny llama target + DFlash draft"
        else:
            report.models = "demo"
            check.detail = f"bundled demo pair {pair[0].name} + {pair[1].name}"
        state["pair"] = pair
        check.data = {"target": str(pair[0]), "draft": str(pair[1])}

    if _timed(report, "models", models, args.verbose).status != OK:
        return

    def config(draft: Path | None) -> Any:
        from atomicchat.engine.requests import engine_config

        return engine_config(state["pair"][0], draft, n_ctx=512, n_gpu_layers=args.gpu_layers, n_threads=args.threads)

    def prompt_for(eng: Any) -> list[int]:
        if report.models == "generated":
            return list(_TINY_PROMPT)
        if eng.info.has_chat_template:
            return eng.chat_prompt([{"role": "user", "content": _DEMO_PROMPT}])
        return eng.tokenize(_DEMO_PROMPT, add_special=True)

    def target_only(check: Check) -> None:
        from atomicchat.engine import Engine

        with Engine(config(None)) as eng:
            prompt = prompt_for(eng)
            fin = _generate(eng, prompt, args.max_tokens, use_draft=False)
            state["prompt"] = prompt
            state["ref"] = fin.tokens
            report.device = eng.info.device
            s = fin.stats
            check.detail = f"{s.n_generated} tokens, {s.tokens_per_second:.1f} tok/s on {eng.info.device}"
            check.data = {"tokens": fin.tokens, "stop": fin.reason, "tokens_per_second": round(s.tokens_per_second, 2)}

    if _timed(report, "target-only", target_only, args.verbose).status != OK:
        return

    def dflash(check: Check) -> None:
        from atomicchat.engine import Engine

        with Engine(config(state["pair"][1])) as eng:
            fin = _generate(eng, state["prompt"], args.max_tokens, use_draft=True)
            state["got"] = fin.tokens
            report.device = eng.info.device
            s = fin.stats
            if s.n_drafted == 0:
                raise RuntimeError("the draft never ran (0 tokens drafted)")
            check.detail = (
                f"{s.n_generated} tokens, {s.n_drafted} drafted, {s.n_accepted} accepted, "
                f"{s.tokens_per_second:.1f} tok/s (block {eng.info.block_size})"
            )
            check.data = {
                "tokens": fin.tokens,
                "stop": fin.reason,
                "n_drafted": s.n_drafted,
                "n_accepted": s.n_accepted,
                "tokens_per_second": round(s.tokens_per_second, 2),
            }

    if _timed(report, "dflash", dflash, args.verbose).status != OK:
        return

    def lossless(check: Check) -> None:
        ref, got = state["ref"], state["got"]
        if got != ref:
            i = _first_difference(ref, got)
            raise AssertionError(f"DFlash output differs from target-only at token {i} ({len(got)} vs {len(ref)} tokens)")
        if not ref:
            raise AssertionError("no tokens were generated")
        check.detail = f"DFlash tokens == target-only tokens ({len(ref)}, greedy)"

    _timed(report, "lossless", lossless, args.verbose)


def _check_display(report: Report, args: argparse.Namespace) -> None:
    """The platform a user's window really uses: with an X display, the xcb plugin's libraries (ldd)
    and a real connection to the display, in a child process so a Qt abort cannot end the self-test."""
    from atomicchat import platform_check

    env = dict(os.environ)

    def display(check: Check) -> None:
        if sys.platform != "linux":
            check.status, check.detail = SKIP, "only Linux uses the xcb platform"
            return
        libs = platform_check.check_xcb()
        if not platform_check.wants_xcb(env):
            check.status = SKIP
            check.detail = "no X display here; xcb libraries: " + ("all present" if libs.ok else
                                                                  "missing " + ", ".join(libs.missing))
            return
        if not libs.ok:
            raise RuntimeError(libs.message())
        if getattr(sys, "frozen", False):
            check.detail = f"xcb libraries present for display {env.get('DISPLAY')}"
            return
        code = "from PySide6.QtGui import QGuiApplication; a = QGuiApplication(['t']); print(a.platformName())"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                           env={**env, "QT_QPA_PLATFORM": "xcb"})
        if r.returncode != 0 or r.stdout.strip() != "xcb":
            raise RuntimeError(f"Qt could not open display {env.get('DISPLAY')} with xcb (exit {r.returncode}): "
                               + (r.stderr.strip().splitlines() or ["no message"])[-1])
        check.detail = f"Qt opened display {env.get('DISPLAY')} with the xcb platform"

    _timed(report, "display", display, args.verbose)


def _check_qt(report: Report, args: argparse.Namespace) -> None:
    def qt(check: Check) -> None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # headless on purpose: this check needs no display
        import PySide6
        from PySide6.QtCore import QCoreApplication, QLibraryInfo
        from PySide6.QtGui import QImageReader
        from PySide6.QtWidgets import QApplication, QLabel

        app = QApplication.instance() or QApplication(["atomicchat-self-test"])
        label = QLabel("Atomic Chat")
        label.resize(160, 40)
        image = label.grab().toImage()
        if image.isNull() or image.width() < 1:
            raise RuntimeError("could not render a widget offscreen")
        folders = [Path(p) for p in QCoreApplication.libraryPaths()]
        folders.append(Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)))
        platforms: set[str] = set()
        for folder in folders:
            for f in (folder / "platforms").iterdir() if (folder / "platforms").is_dir() else []:
                if f.suffix.lower() in (".so", ".dll", ".dylib"):
                    platforms.add(_plugin_name(f.name))
        formats = sorted(bytes(f.data()).decode() for f in QImageReader.supportedImageFormats())
        label.deleteLater()
        del app
        check.detail = f"Qt {PySide6.__version__} offscreen; platform plugins: {', '.join(sorted(platforms)) or 'none'}"
        check.data = {"qt": PySide6.__version__, "platforms": sorted(platforms), "image_formats": formats}

    if _timed(report, "qt", qt, args.verbose).status != OK:
        return

    def ui(check: Check) -> None:
        import importlib

        try:
            importlib.import_module("atomicchat.ui.app")
        except ModuleNotFoundError as exc:
            if exc.name in ("atomicchat.ui.app", "atomicchat.ui"):
                check.status = SKIP
                check.detail = "atomicchat.ui.app is not part of this build"
                return
            raise
        check.detail = "atomicchat.ui.app imports"

    _timed(report, "ui", ui, args.verbose)
    _timed(report, "imports", lambda check: _check_imports(check, with_ui=True), args.verbose)


# Names other code resolves lazily (huggingface_hub's lazy loader, pygments' lexer registry): a
# frozen build that missed them fails only when a user downloads a model or renders code.
_LAZY_NAMES = (
    ("huggingface_hub", "hf_hub_download"),
    ("huggingface_hub", "get_hf_file_metadata"),
    ("huggingface_hub", "hf_hub_url"),
    ("huggingface_hub.utils", "build_hf_headers"),
    ("huggingface_hub.file_download", "http_get"),
    ("jinja2.sandbox", "ImmutableSandboxedEnvironment"),
    ("markdown_it", "MarkdownIt"),
    ("gguf", "GGUFWriter"),
)


def _check_imports(check: Check, with_ui: bool) -> None:
    """Import every atomicchat module and the lazily resolved third-party names it uses."""
    import importlib
    import pkgutil

    import atomicchat

    failed: list[str] = []
    names = sorted(m.name for m in pkgutil.walk_packages(atomicchat.__path__, "atomicchat."))
    if not with_ui:
        names = [n for n in names if not n.startswith("atomicchat.ui")]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            failed.append(f"{name} ({type(exc).__name__}: {exc})")
    for module, attr in _LAZY_NAMES:
        try:
            getattr(importlib.import_module(module), attr)
        except Exception as exc:
            failed.append(f"{module}.{attr} ({type(exc).__name__}: {exc})")
    try:
        from pygments.lexers import get_lexer_by_name

        for lexer in ("python", "bash", "json", "cpp", "javascript"):
            get_lexer_by_name(lexer)
    except Exception as exc:
        failed.append(f"pygments lexers ({type(exc).__name__}: {exc})")
    if failed:
        raise ImportError("; ".join(failed))
    check.detail = f"{len(names)} atomicchat modules and {len(_LAZY_NAMES) + 5} lazy names import"


# ---------------------------------------------------------------------------- output
def _print_report(report: Report) -> None:
    where = f"app {report.executable}" if report.frozen else f"source, Python {report.python}"
    print(f"{APP_NAME} {report.version} self-test ({where}; {report.platform})")
    width = max(len(c.name) for c in report.checks) if report.checks else 8
    for c in report.checks:
        print(f"  [{c.status:<4}] {c.name:<{width}}  {c.detail}  ({c.seconds:.2f}s)")
        tb = c.data.get("traceback")
        if tb:
            print("         " + tb.rstrip().replace("\n", "\n         "))
    if report.build:
        b = report.build
        print(f"build: {b.get('variant', '?')} variant, {b.get('platform', '?')}, built {b.get('built', '?')}")
    backends = ", ".join(report.backends) or "unknown"
    print(f"backend: {backends} | GPU offload: {'yes' if report.gpu_offload else 'no'} | device: {report.device or 'n/a'}")
    print("PASS" if report.ok else "FAIL")


def run(args: argparse.Namespace) -> int:
    from atomicchat.cli.errors import CliError

    if args.max_tokens < 3:  # fewer leave no room for a draft block after the first token
        raise CliError("--max-tokens must be at least 3")
    report = Report(
        frozen=bool(getattr(sys, "frozen", False)),
        executable=sys.executable,
        python=platform.python_version(),
        platform=f"{platform.system()} {platform.machine()}",
        build=_build_info(),
    )
    with tempfile.TemporaryDirectory(prefix="atomicchat-selftest-") as tmp:
        _check_engine(report, args, Path(tmp))
    if args.no_qt:
        _timed(report, "imports", lambda check: _check_imports(check, with_ui=False), args.verbose)
    else:
        _check_display(report, args)
        _check_qt(report, args)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        _print_report(report)
    sys.stdout.flush()
    return 0 if report.ok else 1
