"""`EngineHost`: the UI thread's handle on the engine worker thread (atomicchat.ui.engine.worker).

Requests go to the worker as queued signals; the worker's signals are connected straight to this
object's signals with queued connections, so they are always delivered on the UI thread and UI code
may connect them to anything.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, Signal

from atomicchat.engine.types import EngineConfig
from atomicchat.ui.engine.worker import BASELINE_TOKENS, EngineFactory, EngineWorker
from atomicchat.ui.engine.worker_types import GenRequest

log = logging.getLogger(__name__)


class EngineHost(QObject):
    """UI-thread handle on the worker thread. Signals here are always delivered on the UI thread."""

    ready = Signal(object)
    loading = Signal(str, float)
    chunk = Signal(object)
    finished = Signal(object)
    baseline = Signal(object)
    failed = Signal(object)

    _load = Signal(object)
    _generate = Signal(object)
    _baseline = Signal(int, int)
    _serve = Signal(object)
    _shutdown = Signal()

    def __init__(self, engine_factory: EngineFactory | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._next_id = 0
        self._closed = False
        self.thread = QThread()
        self.thread.setObjectName("atomicchat-engine")
        self.worker = EngineWorker(engine_factory)
        self.worker.moveToThread(self.thread)
        q = Qt.ConnectionType.QueuedConnection
        self._load.connect(self.worker.load, q)
        self._generate.connect(self.worker.generate, q)
        self._baseline.connect(self.worker.measure_baseline, q)
        self._serve.connect(self.worker.serve, q)
        self._shutdown.connect(self.worker.shutdown, q)
        # the worker's results, re-emitted by Qt itself on this (the UI) thread
        self.worker.ready.connect(self.ready, q)
        self.worker.loading.connect(self.loading, q)
        self.worker.chunk.connect(self.chunk, q)
        self.worker.finished.connect(self.finished, q)
        self.worker.baseline.connect(self.baseline, q)
        self.worker.failed.connect(self.failed, q)
        self.thread.start()

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def load(self, req: EngineConfig) -> None:
        self._load.emit(req)

    def generate(self, req: GenRequest) -> None:
        self._generate.emit(req)

    def serve(self, job: Any) -> None:
        """Queue a local-API job behind whatever the worker is doing (callable from any thread)."""
        self._serve.emit(job)

    def next_request_id(self) -> int:
        return self._new_id()

    def measure_baseline(self, max_tokens: int = BASELINE_TOKENS) -> int:
        req_id = self._new_id()
        self._baseline.emit(req_id, max_tokens)
        return req_id

    def cancel(self, req_id: int) -> None:
        self.worker.cancel(req_id)

    def close(self, timeout_ms: int = 60000) -> bool:
        """Stop the running request, free the model on its own thread, and join the thread.

        A generation stops within one step. A load under way has its process ended at once (it
        cannot stop early, and waiting delayed the exit by 3 s); loads still queued are skipped. An
        engine that stopped answering gets 3 s; then its process is ended, which frees the thread
        (never a destroyed running QThread, which would abort the app)."""
        if self._closed:
            return True
        self._closed = True
        from atomicchat.engine.proc.client import kill_all

        for req_id in range(1, self._next_id + 1):
            self.worker.cancel(req_id)
        if self.worker.begin_close():  # a load cannot stop early: waiting would only delay the exit
            log.info("ending the model load under way: the app is closing")
            kill_all()
        self._shutdown.emit()
        done = self.thread.wait(min(timeout_ms, 3000))
        if not done:  # a hung call in the engine process: end the process, the thread follows
            log.warning("the engine did not stop within 3 s; ending its process")
            kill_all()
            done = self.thread.wait(max(0, timeout_ms - 3000))
        if not done:
            log.warning("the engine thread did not stop within %d ms", timeout_ms)
        return done
