"""The one long-lived engine thread (the pattern of GPT4All's ChatLLM).

`EngineWorker` lives on a QThread and owns the Engine; every engine call happens there. The
window talks to it only through `EngineHost` (atomicchat.ui.engine.host): requests go in as queued
signals, results come back as queued signals delivered on the UI thread.
Stopping is the one exception: a generation loop does not return to the event loop, so cancel()
sets a thread-safe flag that the engine polls between steps.
Nothing raised inside the worker escapes it: every failure becomes a `WorkerFailure` signal and
the worker keeps serving the next request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from atomicchat.engine import target_speed
from atomicchat.engine.errors import DraftMismatchError, EngineError, MissingSymbolError, UnsupportedDraftError
from atomicchat.engine.types import EngineConfig, Finished
from atomicchat.stats import COUNTER_NAMES
from atomicchat.store.records import ReplyStats
from atomicchat.ui.engine.worker_types import (
    BaselineResult,
    GenRequest,
    GenResult,
    ModelReady,
    StreamChunk,
    WorkerFailure,
    _Pending,
)

log = logging.getLogger(__name__)

EngineFactory = Callable[[EngineConfig, Callable[[str, float], None]], Any]  # (config, progress) -> Engine
BASELINE_TOKENS = target_speed.NEAR_TOKENS
CHUNK_INTERVAL_S = 0.016  # batch steps into at most ~60 signals per second


def _default_factory(config: EngineConfig, progress: Callable[[str, float], None]) -> Any:
    """The engine in a supervised child process: a native abort, hang or out-of-memory kill there
    ends the child, never the window (atomicchat.engine.proc)."""
    from atomicchat.engine.proc import EngineProcess

    return EngineProcess(config, progress=progress)


def _log_failure(what: str, exc: BaseException, sentence_only: bool = False) -> None:
    """A failed request in the log, with its traceback unless `sentence_only` and the engine wrote a
    sentence for it. An engine process the app ended itself on exit (EngineStopped) is no failure:
    a line at info (a load cut short by quitting used to print the traceback of a "crash")."""
    from atomicchat.engine.proc import EngineStopped

    if isinstance(exc, EngineStopped):
        log.info("%s stopped: %s", what, exc)
    elif sentence_only and isinstance(exc, EngineError):
        log.warning("%s failed: %s", what, exc)
    else:
        log.warning("%s failed", what, exc_info=True)


def _is_crash(exc: BaseException) -> bool:
    from atomicchat.engine.proc import EngineCrashed

    return isinstance(exc, EngineCrashed)


def stats_from_engine(gs: Any) -> ReplyStats:
    """A snapshot of the engine's running GenStats (which it keeps mutating)."""
    return ReplyStats(**{name: getattr(gs, name) for name in COUNTER_NAMES})


def _user_message(exc: BaseException) -> str:
    if isinstance(exc, EngineError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "The computer ran out of memory. Try a smaller model or a smaller context size."
    return f"The engine stopped with an unexpected error ({type(exc).__name__}: {exc}). You can try again."


class EngineWorker(QObject):
    ready = Signal(object)  # ModelReady
    loading = Signal(str, float)  # stage, 0..1
    chunk = Signal(object)  # StreamChunk
    finished = Signal(object)  # GenResult
    baseline = Signal(object)  # BaselineResult
    failed = Signal(object)  # WorkerFailure

    def __init__(self, engine_factory: EngineFactory | None = None, chunk_interval: float = CHUNK_INTERVAL_S) -> None:
        super().__init__()
        self._factory = engine_factory or _default_factory
        self._interval = chunk_interval
        self._engine: Any = None
        self._request: EngineConfig | None = None
        self._lock = threading.Lock()
        self._cancelled: set[int] = set()
        self._closing = threading.Event()  # the app is closing: loads still queued do not start
        self._loading = threading.Event()  # a load is under way on the worker thread

    # called from the UI thread ---------------------------------------------------------------
    def cancel(self, req_id: int) -> None:
        with self._lock:
            self._cancelled.add(req_id)

    def begin_close(self) -> bool:
        """The app is closing: loads not yet started are skipped. Returns whether a load is under
        way now (it cannot stop early; the host ends its process instead of waiting)."""
        self._closing.set()
        return self._loading.is_set()

    def _is_cancelled(self, req_id: int) -> bool:
        with self._lock:
            return req_id in self._cancelled

    def _forget(self, req_id: int) -> None:
        with self._lock:
            self._cancelled.discard(req_id)

    # worker-thread slots ------------------------------------------------------------------
    @Slot(object)
    def load(self, req: EngineConfig) -> None:
        if self._closing.is_set():
            log.info("model load skipped: the app is closing")
            return
        if self._engine is not None and self._request == req:
            self.ready.emit(ModelReady(req, self._engine.info))
            return
        self._close_engine()
        self._loading.set()
        try:
            self._load(req)
        finally:
            self._loading.clear()

    def _load(self, req: EngineConfig) -> None:
        warning = ""
        try:
            try:
                engine = self._make(req)
            except (DraftMismatchError, UnsupportedDraftError, MissingSymbolError) as exc:
                if req.draft_path is None:
                    raise
                warning = f"The draft was not loaded: {exc} The target runs alone (no speedup)."
                req = replace(req, draft_path=None)
                engine = self._make(req)
        except BaseException as exc:  # noqa: BLE001 - the worker must survive anything
            # the engine's sentence says it all (a bad file, no memory, a crash and its signal); the
            # traceback is this process's side of the pipe, the same few lines every time
            _log_failure("model load", exc, sentence_only=True)
            self.failed.emit(WorkerFailure(0, "load", _user_message(exc)))
            return
        self._engine, self._request = engine, req
        self.ready.emit(ModelReady(req, engine.info, warning))

    def _make(self, config: EngineConfig) -> Any:
        last = [0.0]

        def progress(stage: str, value: float) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.05 or value >= 1.0:
                last[0] = now
                self.loading.emit(stage, float(value))

        return self._factory(config, progress)

    @Slot(object)
    def generate(self, req: GenRequest) -> None:
        try:
            if self._engine is None:
                raise EngineError("No model is loaded yet. Pick one in the model manager (Ctrl+M).")
            if self._is_cancelled(req.req_id):
                self.finished.emit(GenResult(req.req_id, "cancelled", ReplyStats()))
                return
            self._run_generation(req)
        except BaseException as exc:  # noqa: BLE001
            _log_failure("generation", exc)
            self.failed.emit(WorkerFailure(req.req_id, self._kind(exc, "generate"), _user_message(exc)))
        finally:
            self._forget(req.req_id)

    def _kind(self, exc: BaseException, kind: str) -> str:
        """"crash" when the engine process died or hung: it is gone, the model must be loaded again."""
        if _is_crash(exc):
            self._close_engine()
            return "crash"
        return kind

    def _run_generation(self, req: GenRequest) -> None:
        from atomicchat.engine.chat import THINK_OPEN, with_reply_start
        from atomicchat.engine.context_fit import fit_chat

        eng, params = self._engine, req.params
        reserve = min(params.max_tokens, max(16, eng.n_ctx // 4))
        so_far = eng.tokenize(req.continue_text, add_special=False) if req.continue_text else []
        tokens, dropped = fit_chat(eng, req.messages, reserve + len(so_far), enable_thinking=req.enable_thinking)
        pending, chars, last_emit, stats = _Pending(), 0, time.monotonic(), None
        # Continue: the model goes on from its own text, after the template's opening of the turn
        tokens, thinking = with_reply_start(eng, tokens, req.continue_text, so_far)
        if thinking and not req.continue_text:  # the reply starts inside <think>: say so, as the model did not
            pending.text.append(THINK_OPEN + "\n")
            chars = len(pending.text[0])
        try:
            for ev in eng.generate(tokens, params, should_stop=lambda: self._is_cancelled(req.req_id)):
                if isinstance(ev, Finished):
                    self._flush(req.req_id, pending, stats_from_engine(ev.stats))
                    self.finished.emit(GenResult(req.req_id, ev.reason, stats_from_engine(ev.stats), dropped))
                    return
                stats = ev.stats
                n = ev.draft_chars  # exact: the engine decodes the accepted prefix separately
                if n:
                    if pending.draft_spans and pending.draft_spans[-1][1] == chars:
                        pending.draft_spans[-1] = (pending.draft_spans[-1][0], chars + n)
                    else:
                        pending.draft_spans.append((chars, chars + n))
                chars += len(ev.text)
                pending.text.append(ev.text)
                pending.step_accepted.append(int(ev.n_accepted))
                now = time.monotonic()
                if now - last_emit >= self._interval:
                    self._flush(req.req_id, pending, stats_from_engine(ev.stats))
                    pending, last_emit = _Pending(), now
        except BaseException:
            if stats is not None:  # show what was decoded before the failure
                self._flush(req.req_id, pending, stats_from_engine(stats))
            raise
        final = stats_from_engine(stats) if stats is not None else ReplyStats()
        self._flush(req.req_id, pending, final)
        self.finished.emit(GenResult(req.req_id, "eos", final, dropped))

    def _flush(self, req_id: int, pending: _Pending, stats: ReplyStats) -> None:
        if pending.empty():
            return
        self.chunk.emit(StreamChunk(req_id, "".join(pending.text), pending.step_accepted, pending.draft_spans, stats))

    @Slot(int, int)
    def measure_baseline(self, req_id: int, max_tokens: int = BASELINE_TOKENS) -> None:
        """Target-only speed after a short and a long prompt: the denominator of the speedup figure."""
        try:
            if self._engine is None:
                raise EngineError("Load a model before measuring its baseline speed.")
            eng = self._engine
            speed = target_speed.measure(eng, lambda: self._is_cancelled(req_id), max_tokens)
            self.baseline.emit(BaselineResult(req_id, speed.tokens_per_second, str(eng.info.device), speed))
        except BaseException as exc:  # noqa: BLE001
            _log_failure("baseline", exc, sentence_only=True)
            self.failed.emit(WorkerFailure(req_id, self._kind(exc, "baseline"), _user_message(exc)))
        finally:
            self._forget(req_id)

    @Slot(object)
    def serve(self, job: Any) -> None:
        """A local-API job (atomicchat.server.backend.Job), in turn with chat replies on this thread."""
        from atomicchat.server.backend import Failed, run_job
        from atomicchat.server.protocol import ApiError

        if job.cancel.is_set():
            job.emit(Failed(ApiError(499, "The client closed the request.", code="cancelled")))
        elif self._engine is None:
            job.emit(Failed(ApiError(503, "No model is loaded in Atomic Chat yet.", "server_error", "model_not_loaded")))
        else:
            run_job(self._engine, job)

    @Slot()
    def shutdown(self) -> None:
        self._close_engine()
        thread = QThread.currentThread()
        if thread is not None:
            thread.quit()

    def _close_engine(self) -> None:
        eng, self._engine, self._request = self._engine, None, None
        if eng is not None:
            try:
                eng.close()
            except Exception:  # noqa: BLE001 - closing must never take the worker down
                log.warning("engine close failed", exc_info=True)
