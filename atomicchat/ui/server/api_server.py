"""The local API inside the app: the same engine as the chat, through the same worker thread.

`HostBackend` turns API jobs into requests on the engine worker, so the worker's queue orders chat
replies and API requests alike: one at a time on one context, never two. `ApiServerController`
starts and stops the HTTP server from the settings and tells the status bar what it is doing.
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QObject, Signal

from atomicchat.server.app import ServerConfig, create_app
from atomicchat.server.backend import Delta, Done, Event, Failed, Job, model_id_for
from atomicchat.server.thread import Listening, ServerThread
from atomicchat.store.settings import AppSettings
from atomicchat.ui.engine.host import EngineHost
from atomicchat.ui.engine.worker_types import ModelReady

log = logging.getLogger(__name__)
LOCAL_HOSTS = ("127.0.0.1", "::1", "localhost")


class HostBackend(QObject):
    """The server's backend on the app's engine. Thread-safe: routes call it from the API thread."""

    activity = Signal()  # busy or queue length changed (emitted from any thread; delivered queued)

    def __init__(self, host: EngineHost) -> None:
        super().__init__()
        self._host = host
        self._lock = threading.Lock()
        self.model_id = ""
        self.n_ctx = 0
        self._queued = 0
        self._running = 0
        self.counts = {"completed": 0, "cancelled": 0, "failed": 0}

    @property
    def busy(self) -> bool:
        return self._running > 0

    @property
    def queued(self) -> int:
        return self._queued

    def model_ready(self, ready: ModelReady) -> None:
        with self._lock:
            self.model_id = model_id_for(ready.request.target_path)
            self.n_ctx = int(ready.info.n_ctx)

    def submit(self, job: Job) -> None:
        outer = job.emit
        state = {"started": False}

        def emit(ev: Event) -> None:
            with self._lock:
                if not state["started"]:
                    state["started"] = True
                    self._queued -= 1
                    self._running += 1
                if isinstance(ev, Done | Failed):
                    self._running -= 1
                    kind = "failed" if isinstance(ev, Failed) else "cancelled" if ev.reason == "cancelled" else "completed"
                    self.counts[kind] += 1
            if not isinstance(ev, Delta):
                self.activity.emit()
            outer(ev)

        job.emit = emit  # type: ignore[method-assign]
        with self._lock:
            self._queued += 1
        self.activity.emit()
        self._host.serve(job)


class ApiServerController(QObject):
    """Runs the server while Settings ▸ Local server is on; `status` is a line for the status bar."""

    status_changed = Signal(str)
    failed = Signal(str)

    def __init__(self, host: EngineHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.backend = HostBackend(host)
        self.backend.activity.connect(self._refresh)
        self._server: ServerThread | None = None
        self._where: Listening | None = None
        self._key: tuple[bool, str, int, str] | None = None

    @property
    def listening(self) -> Listening | None:
        return self._where

    def apply(self, settings: AppSettings) -> None:
        key = (settings.api_enabled, settings.api_host, settings.api_port, settings.api_key, settings.api_cors)
        if key == self._key:
            return
        self.stop()
        self._key = key
        if not settings.api_enabled:
            return
        app = create_app(self.backend, ServerConfig(api_key=settings.api_key or None,
                                                     cors_origins=("*",) if settings.api_cors else ()))
        server = ServerThread(app, settings.api_host, settings.api_port)
        try:
            self._where = server.start()
        except OSError as exc:
            self._key = None
            self.failed.emit(str(exc))
            self._refresh()
            return
        self._server = server
        self._refresh()

    def model_ready(self, ready: ModelReady) -> None:
        self.backend.model_ready(ready)

    def stop(self) -> None:
        server, self._server, self._where, self._key = self._server, None, None, None
        if server is not None:
            server.stop()
        self._refresh()

    def status(self) -> str:
        if self._where is None:
            return ""
        text = f"API {self._where.url}"
        if self._where.host not in LOCAL_HOSTS:
            text += " (other computers can connect)"
        if self.backend.busy:
            text += " · answering a request"
        if self.backend.queued:
            text += f" · {self.backend.queued} waiting"
        return text

    def _refresh(self) -> None:
        self.status_changed.emit(self.status())
