"""`atomicchat` with no command: start the desktop app.

One QApplication, a qasync asyncio loop on it, the store, the engine thread and the main window.
A store that cannot open is reported in a message box (there is no window to show it in yet).
"""

from __future__ import annotations

import argparse
import logging
import sys

from PySide6.QtWidgets import QApplication, QMessageBox

from atomicchat import APP_ID, APP_NAME, __version__


def _set_icon(app: QApplication) -> None:
    from PySide6.QtGui import QIcon

    from atomicchat.paths import resources_dir

    icon = QIcon()
    for size in (16, 24, 32, 48, 128, 256, 512):
        path = resources_dir() / "icons" / f"atomicchat-{size}.png"
        if path.is_file():
            icon.addFile(str(path))
    if not icon.isNull():
        app.setWindowIcon(icon)


def _screenshot_when_ready(window, host, path: str, timeout_s: float) -> None:  # noqa: ANN001
    """Grab the window from the screen (the X server's pixels under xcb) after the model is ready
    or `timeout_s` passed, save it as PNG and close: for the xcb start-up test and screenshots."""
    from PySide6.QtCore import QTimer

    done = []

    def shoot() -> None:
        if done:
            return
        done.append(True)
        screen = window.screen() or QApplication.primaryScreen()
        pixmap = screen.grabWindow(window.winId()) if screen is not None else window.grab()
        if pixmap.isNull():
            pixmap = window.grab()
        pixmap.save(path, "PNG")
        window.close()

    host.ready.connect(lambda _r: QTimer.singleShot(800, shoot))
    QTimer.singleShot(int(timeout_s * 1000), shoot)


def run_app(args: list[str] | argparse.Namespace | None = None) -> int:
    from atomicchat.cli import parse_gui_args

    ns = args if isinstance(args, argparse.Namespace) else parse_gui_args(list(args or []))
    logging.basicConfig(
        level=logging.INFO if ns.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName(APP_ID)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)  # Wayland matches the window to atomicchat.desktop by this

    from atomicchat.store import StoreError, open_store
    from atomicchat.ui import async_tasks
    from atomicchat.ui.main_window import MainWindow
    from atomicchat.ui.model_service import ModelChoice
    from atomicchat.ui.theme import apply_theme
    from atomicchat.ui.worker import EngineHost

    from atomicchat.store.settings import AppSettings

    apply_theme(app, AppSettings().theme)  # type: ignore[arg-type]  # the saved mode is applied below
    _set_icon(app)  # type: ignore[arg-type]
    loop = async_tasks.install_loop(app)  # type: ignore[arg-type]
    try:
        store = open_store()
    except StoreError as exc:
        QMessageBox.critical(None, APP_NAME, str(exc))
        return 1
    apply_theme(app, store.settings.load().theme)  # type: ignore[arg-type]
    host = EngineHost()
    window = MainWindow(store, host, auto_load=ns.model is None)
    if ns.model:
        from pathlib import Path

        window.load_model(ModelChoice(Path(ns.model), Path(ns.draft) if ns.draft else None, "chosen"))
    window.show()
    if ns.screenshot:
        _screenshot_when_ready(window, host, ns.screenshot, ns.quit_after or 120.0)
    elif ns.quit_after > 0:
        from PySide6.QtCore import QTimer

        QTimer.singleShot(int(ns.quit_after * 1000), window.close)
    with loop:
        app.aboutToQuit.connect(window.shutdown)
        loop.run_forever()
    store.close()
    return 0
