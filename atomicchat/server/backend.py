"""One engine, one request at a time, the others queued in order.

A `Job` carries a validated request and a thread-safe event sink. `EngineBackend` owns the engine on
one thread and runs jobs in arrival order; `cancel` on a job is honoured between two decode steps.
The engine itself is never touched from another thread (llama contexts are not thread-safe).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atomicchat.engine.chat import with_reply_start
from atomicchat.engine.errors import ContextFullError, EngineError, PromptRefused
from atomicchat.engine.types import Finished, GenStats, Step
from atomicchat.server.protocol import ApiError, ApiRequest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Started:
    n_prompt: int
    thinking: bool = False  # the chat template opened a <think> block: the reply starts with reasoning


@dataclass(frozen=True)
class Delta:
    text: str
    tokens: tuple[int, ...]


@dataclass(frozen=True)
class Done:
    reason: str  # the engine's: "eos" | "length" | "context" | "cancelled" | "repetition"
    stats: GenStats
    tokens: tuple[int, ...]


@dataclass(frozen=True)
class Failed:
    error: ApiError


Event = Started | Delta | Done | Failed


@dataclass
class Job:
    request: ApiRequest
    emit: Callable[[Event], None]  # called on the engine thread; must be thread-safe and quick
    cancel: threading.Event = field(default_factory=threading.Event)


def model_id_for(target: Path) -> str:
    """The id clients send as `model`: the target file's name without `.gguf`."""
    return target.name.removesuffix(".gguf")


def prompt_tokens(engine: Any, req: ApiRequest) -> tuple[list[int], bool]:
    """The prompt the engine decodes, and whether the reply starts inside a <think> block: the GGUF's
    chat template for chat (then the prefill's text, if any), plain text for completions. Thinking
    stays off while a DFlash draft is loaded unless the client asks for it."""
    if req.messages is None:
        return engine.tokenize(req.prompt or "", add_special=True), False
    tokens = engine.chat_prompt(list(req.messages), enable_thinking=req.enable_thinking,
                                tools=list(req.tools) if req.tools else None)
    return with_reply_start(engine, tokens, req.prefill)


def run_job(engine: Any, job: Job) -> str | None:
    """Run one job on the calling (engine) thread; every outcome becomes exactly one final event.
    Returns the engine's stop reason, or None when the job failed."""
    req = job.request
    try:
        tokens, thinking = prompt_tokens(engine, req)
        n_ctx = int(engine.n_ctx)
        if len(tokens) >= n_ctx:
            raise ApiError(400, f"The prompt is {len(tokens)} tokens long; the context holds {n_ctx} tokens, "
                                "including the reply.", code="context_length_exceeded", param="messages")
        job.emit(Started(len(tokens), thinking))
        params = req.sampling.gen_params()
        for ev in engine.generate(tokens, params, should_stop=job.cancel.is_set):
            if isinstance(ev, Step):
                if ev.text or ev.tokens:
                    job.emit(Delta(ev.text, tuple(ev.tokens)))
            elif isinstance(ev, Finished):
                job.emit(Done(ev.reason, ev.stats, tuple(ev.tokens)))
                return ev.reason
        raise EngineError("The engine ended the reply without a final result.")
    except ApiError as exc:
        job.emit(Failed(exc))
    except ContextFullError as exc:
        job.emit(Failed(ApiError(400, str(exc), code="context_length_exceeded")))
    except PromptRefused as exc:  # the template refused the conversation, or has no place for tools
        job.emit(Failed(ApiError(400, str(exc), param="tools" if req.tools else "messages")))
    except EngineError as exc:
        job.emit(Failed(ApiError(500, str(exc), type_="server_error", code="engine_error")))
    except Exception as exc:  # noqa: BLE001 - the server thread must survive anything a request does
        log.exception("request failed")
        job.emit(Failed(ApiError(500, f"The engine failed: {type(exc).__name__}: {exc}", type_="server_error")))
    return None


class EngineBackend:
    """Owns an engine on a dedicated thread; `submit` queues a job (FIFO) from any thread."""

    def __init__(self, engine: Any, model_id: str) -> None:
        self.engine = engine
        self.model_id = model_id
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._busy = threading.Event()
        self._current: Job | None = None
        self.counts = {"completed": 0, "cancelled": 0, "failed": 0}  # for /health
        self._thread = threading.Thread(target=self._serve, name="atomicchat-server-engine", daemon=True)
        self._thread.start()

    @property
    def n_ctx(self) -> int:
        return int(self.engine.n_ctx)

    @property
    def busy(self) -> bool:
        return self._busy.is_set()

    @property
    def queued(self) -> int:
        return self._jobs.qsize()

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if job.cancel.is_set():  # the client left while it waited its turn
                job.emit(Failed(ApiError(499, "The client closed the request.", code="cancelled")))
                continue
            self._busy.set()
            self._current = job
            try:
                reason = run_job(self.engine, job)
                self.counts["failed" if reason is None else "cancelled" if reason == "cancelled" else "completed"] += 1
            finally:
                self._current = None
                self._busy.clear()

    def close(self, timeout: float = 10.0) -> None:
        """Stop after the job in progress (cancelled); queued jobs are refused."""
        pending: list[Job] = []
        while True:
            try:
                j = self._jobs.get_nowait()
            except queue.Empty:
                break
            if j is not None:
                pending.append(j)
        for j in pending:
            j.cancel.set()
            j.emit(Failed(ApiError(503, "The server is shutting down.", type_="server_error")))
        current = self._current
        if current is not None:
            current.cancel.set()
        self._jobs.put(None)
        self._thread.join(timeout)
