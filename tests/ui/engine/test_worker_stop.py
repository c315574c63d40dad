"""Closing the app while a model loads: the load's process is ended at once, queued loads are
skipped, and the log has a line for it, not a crash's traceback."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace

from PySide6.QtCore import Qt

from atomicchat.engine import EngineConfig
from atomicchat.engine.proc import client as proc_client
from atomicchat.ui.engine.host import EngineHost
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


def _slow_loading_factory(started: threading.Event, made: list[int]):  # noqa: ANN202
    """The real engine process, whose first progress report marks the load as under way and then
    lingers a moment, so the test can close the host while the load runs."""
    from atomicchat.engine.proc import EngineProcess

    def factory(config, progress):  # noqa: ANN001, ANN202
        made.append(1)

        def report(stage: str, value: float) -> None:
            if not started.is_set():
                started.set()
                time.sleep(0.3)
            progress(stage, value)

        return EngineProcess(config, progress=report)

    return factory


def test_closing_during_a_load_ends_it_at_once_and_skips_queued_loads(qtbot, llama_pair, caplog):
    started, made = threading.Event(), []
    host = EngineHost(_slow_loading_factory(started, made))
    cfg = EngineConfig(llama_pair.target, llama_pair.draft, n_ctx=512, n_threads=1)
    host.load(cfg)
    host.load(replace(cfg, n_ctx=1024))  # queued behind the first: it must not start on the way out
    qtbot.waitUntil(started.is_set, timeout=30_000)
    with caplog.at_level(logging.INFO):
        assert host.close()
    messages = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert ("atomicchat.ui.engine.host", logging.INFO, "ending the model load under way: the app is closing") in messages
    assert not any("did not stop within 3 s" in m for _, _, m in messages)  # no 3 s wait for a load
    assert ("atomicchat.ui.engine.worker", logging.INFO, "model load skipped: the app is closing") in messages
    assert made == [1] and host.worker._engine is None and not host.thread.isRunning()
    assert not list(proc_client._LIVE) or not any(c.alive() for c in proc_client._LIVE)
    assert all(r.exc_info is None for r in caplog.records if r.name.startswith("atomicchat"))


def test_a_file_that_is_no_model_logs_its_sentence_without_a_traceback(qtbot, tmp_path, caplog):  # noqa: ARG001
    """A refused file is the user's to fix, and the engine says why in a sentence, which is all the
    log needs (it used to print the client side of the pipe's traceback after it)."""
    worker = EngineWorker()
    failures: list[object] = []
    worker.failed.connect(failures.append, Qt.ConnectionType.DirectConnection)
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\3\0\0\0" + b"\0" * 64)
    with caplog.at_level(logging.INFO, logger="atomicchat.ui.engine.worker"):
        worker.load(EngineConfig(broken, None, n_ctx=512, n_threads=1))
    records = [r for r in caplog.records if r.name == "atomicchat.ui.engine.worker"]
    assert [r.levelno for r in records] == [logging.WARNING] and records[0].exc_info is None
    assert "model load failed: broken.gguf has no 'general.architecture'" in records[0].getMessage()
    assert len(failures) == 1 and "not a usable model file" in failures[0].message  # type: ignore[attr-defined]
