"""The engine child: owns the real Engine, answers requests in order on its main thread, and has a
reader thread so that a Cancel arrives while a generation runs. Its stderr goes to a file that the
parent reads when the child dies, because llama.cpp's GGML_ASSERT writes its reason there and aborts.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from typing import Any

from atomicchat.engine.errors import wire_name
from atomicchat.engine.proc import protocol as p

FLUSH_S = 0.01  # batch steps for at most 10 ms: ~100 messages a second, whatever the token rate


def _redirect_stderr(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)


def run(argv: list[str]) -> int:
    """`atomicchat --engine-child REQ_FD EV_FD STDERR_PATH`: the child's entry point (no Qt imported)."""
    from multiprocessing.connection import Connection

    req_fd, ev_fd, stderr_path = int(argv[0]), int(argv[1]), argv[2]
    main(Connection(req_fd, writable=False), Connection(ev_fd, readable=False), stderr_path)
    return 0


def main(requests: Any, events: Any, stderr_path: str) -> None:
    """Serve requests until told to shut down (or until the app's end of the pipe closes)."""
    _redirect_stderr(stderr_path)
    inbox: queue.Queue[Any] = queue.Queue()
    cancelled: set[int] = set()
    lock = threading.Lock()

    def reader() -> None:
        while True:
            try:
                msg = requests.recv()
            except (EOFError, OSError):
                inbox.put(p.Shutdown())  # the app is gone: end too
                return
            if isinstance(msg, p.Cancel):
                with lock:
                    cancelled.add(msg.req_id)
            else:
                inbox.put(msg)
            if isinstance(msg, p.Shutdown):
                return

    threading.Thread(target=reader, name="engine-child-reader", daemon=True).start()
    engine = None
    while True:
        msg = inbox.get()
        if isinstance(msg, p.Shutdown):
            break
        try:
            if isinstance(msg, p.Load):
                engine = _load(engine, msg, events)
            elif isinstance(msg, p.Sleep):
                time.sleep(msg.seconds)
            elif engine is None:
                raise RuntimeError("no model is loaded in the engine process")
            elif isinstance(msg, p.Call):
                if msg.method not in p.CALLS:
                    raise RuntimeError(f"unknown engine call {msg.method}")
                events.send(p.Reply(msg.req_id, getattr(engine, msg.method)(*msg.args, **msg.kwargs)))
            elif isinstance(msg, p.Generate):
                _generate(engine, msg, events, lambda rid=msg.req_id: _is_cancelled(lock, cancelled, rid))
        except BaseException as exc:  # noqa: BLE001 - every failure goes back as a message
            rid = getattr(msg, "req_id", 0)
            events.send(p.Failed(rid, wire_name(exc), str(exc) or type(exc).__name__))
    if engine is not None:
        engine.close()


def _is_cancelled(lock: threading.Lock, cancelled: set[int], req_id: int) -> bool:
    with lock:
        return req_id in cancelled


def _load(old: Any, msg: p.Load, events: Any) -> Any:
    from atomicchat.engine import Engine

    if old is not None:
        old.close()
    last = [0.0]

    def progress(stage: str, value: float) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.05 or value >= 1.0:
            last[0] = now
            events.send(p.Progress(stage, float(value)))

    engine = Engine(msg.config, progress=progress)
    events.send(p.Loaded(engine.info, int(engine.n_ctx)))
    return engine


def _generate(engine: Any, msg: p.Generate, events: Any, should_stop: Any) -> None:
    from atomicchat.engine.types import Finished

    batch: list[Any] = []
    last = 0.0  # the first step goes out at once: time to first token is what a person notices
    for ev in engine.generate(msg.tokens, msg.params, should_stop=should_stop):
        if isinstance(ev, Finished):
            if batch:
                events.send(p.Steps(msg.req_id, batch))
            events.send(p.Done(msg.req_id, ev))
            return
        batch.append(ev)
        now = time.monotonic()
        if now - last >= FLUSH_S:
            events.send(p.Steps(msg.req_id, batch))
            batch, last = [], now
    raise RuntimeError("the engine ended a generation without a result")
