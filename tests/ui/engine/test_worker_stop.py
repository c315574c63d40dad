"""The worker's log when the app ends the engine process on exit: a line, not a crash's traceback."""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt

from atomicchat.engine import EngineConfig
from atomicchat.engine.proc import client as proc_client
from atomicchat.ui.engine.worker import EngineWorker


def test_a_load_ended_by_quitting_logs_no_traceback(qtbot, llama_pair, caplog):  # noqa: ARG001 - qtbot: a QApplication
    worker = EngineWorker()  # the real factory: the engine in its child process
    failures: list[object] = []
    worker.failed.connect(failures.append, Qt.ConnectionType.DirectConnection)
    # the first progress report: the load is under way, and the app quits (EngineHost.close -> kill_all)
    worker.loading.connect(lambda *_: proc_client.kill_all(), Qt.ConnectionType.DirectConnection)
    with caplog.at_level(logging.INFO, logger="atomicchat.ui.engine.worker"):
        worker.load(EngineConfig(llama_pair.target, llama_pair.draft, n_ctx=512, n_threads=1))
    records = [r for r in caplog.records if r.name == "atomicchat.ui.engine.worker"]
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.INFO, "model load stopped: The model was stopped while loading: the app is closing.")
    ]
    assert all(r.exc_info is None for r in records)
    assert len(failures) == 1 and "the app is closing" in failures[0].message  # type: ignore[attr-defined]
    assert worker._engine is None
