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


def _open_store_or_recover():  # noqa: ANN202 - Store | None
    """The store, or after a damaged/unwritable one the user's choice: keep the file aside and start
    fresh (renamed, never deleted), or quit. ATOMICCHAT_STORE_ANSWER=fresh|quit answers for tests."""
    import os

    from atomicchat.store import StoreError, open_store, set_aside
    from atomicchat.store.db import default_db_path

    try:
        return open_store()
    except StoreError as exc:
        problem = str(exc)
    answer = os.environ.get("ATOMICCHAT_STORE_ANSWER")
    if answer is None:
        box = QMessageBox(QMessageBox.Icon.Critical, APP_NAME, problem)
        box.setInformativeText("Atomic Chat can keep the damaged file aside (renamed, nothing is deleted) and "
                               "start with an empty chat list, or quit so that you can look at it first.")
        fresh = box.addButton("Keep it aside and start fresh", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Quit", QMessageBox.ButtonRole.RejectRole)
        box.exec()
        answer = "fresh" if box.clickedButton() is fresh else "quit"
    if answer != "fresh":
        print(f"error: {problem}", file=sys.stderr)
        return None
    try:
        kept = set_aside(default_db_path())
        store = open_store()
    except (StoreError, OSError) as exc:
        QMessageBox.critical(None, APP_NAME, f"Starting fresh failed too: {exc}")
        return None
    print(f"The damaged chat database was kept as {kept}.", file=sys.stderr)
    return store


class SingleInstance:
    """One window per data folder: a second start asks the first (QLocalSocket) to come to the front."""

    def __init__(self) -> None:
        import hashlib

        from atomicchat.paths import data_dir

        digest = hashlib.sha256(str(data_dir()).encode()).hexdigest()[:16]
        self.name = f"{APP_ID}-{digest}"
        self.server = None
        self.window = None  # set once the main window exists

    def forward_to_running(self) -> bool:
        from PySide6.QtNetwork import QLocalSocket

        sock = QLocalSocket()
        sock.connectToServer(self.name)
        if not sock.waitForConnected(500):
            return False
        sock.write(b"activate\n")
        sock.waitForBytesWritten(1000)
        sock.disconnectFromServer()
        print("Atomic Chat is already running; its window was brought to the front.", file=sys.stderr)
        return True

    def listen(self) -> None:
        from PySide6.QtNetwork import QLocalServer

        QLocalServer.removeServer(self.name)  # a crashed instance's stale socket (nobody answered on it)
        self.server = QLocalServer()
        self.server.newConnection.connect(self._activate)
        self.server.listen(self.name)

    def _activate(self) -> None:
        conn = self.server.nextPendingConnection() if self.server is not None else None
        if conn is not None:
            conn.readyRead.connect(lambda: (conn.readAll(), None))
            conn.disconnected.connect(conn.deleteLater)
        window = self.window
        if window is None:
            return
        window.showNormal()
        window.raise_()
        window.activateWindow()
        print("Atomic Chat: another start asked for this window; it was brought to the front.", file=sys.stderr,
              flush=True)


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

    from atomicchat.ui.common import async_tasks
    from atomicchat.ui.main_window import MainWindow
    from atomicchat.models.service import ModelChoice
    from atomicchat.ui.common.theme import apply_theme
    from atomicchat.ui.engine.host import EngineHost

    from atomicchat.store.settings import AppSettings

    apply_theme(app, AppSettings().theme)  # type: ignore[arg-type]  # the saved mode is applied below
    _set_icon(app)  # type: ignore[arg-type]
    loop = async_tasks.install_loop(app)  # type: ignore[arg-type]
    instance = SingleInstance()
    if instance.forward_to_running():  # a second start raises the first window instead
        return 0
    instance.listen()  # at once: a start a moment later must find this one, not race it
    store = _open_store_or_recover()
    if store is None:
        return 1
    apply_theme(app, store.settings.load().theme)  # type: ignore[arg-type]
    host = EngineHost()
    window = MainWindow(store, host, auto_load=ns.model is None)
    instance.window = window
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
