"""asyncio on the Qt event loop (qasync): blocking model-manager work runs in a thread pool, and its
outcome comes back on the UI thread, so the UI never blocks.

The one pattern for background work in the UI (as Anki's aqt.operations): `run_op(runner, fn, *args,
success=..., failure=...)` runs `fn` on the runner's pool, then calls `success(result)` or
`failure(error)` on the UI thread. `failure` gets only the errors the callee promises to raise
(`atomicchat.models.errors.ModelsError` by default, which is all `atomicchat.models.service` raises);
anything else is a bug, logged by `start`, never lost. The engine is the exception: it has its own
long-lived thread (atomicchat.ui.engine.worker).

`install_loop(app)` makes a qasync loop the current asyncio loop; run_app and the tests call it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import qasync
from PySide6.QtWidgets import QApplication

from atomicchat.models.errors import ModelsError

log = logging.getLogger(__name__)
T = TypeVar("T")
E = TypeVar("E", bound=BaseException)


def install_loop(app: QApplication) -> qasync.QEventLoop:
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    return loop


def loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_event_loop()


def start(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Schedule a coroutine on the Qt loop; an exception it lets escape is logged, never lost."""
    task = asyncio.ensure_future(coro)

    def done(t: asyncio.Task[Any]) -> None:
        if not t.cancelled() and t.exception() is not None:
            log.error("background task failed", exc_info=t.exception())

    task.add_done_callback(done)
    return task


class BlockingRunner:
    """A small thread pool owned by one dialog; `close()` waits for nothing and drops queued work."""

    def __init__(self, workers: int = 2) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="atomicchat-models")

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def run_op(
    runner: BlockingRunner,
    fn: Callable[..., T],
    *args: Any,
    success: Callable[[T], None],
    failure: Callable[[Any], None],
    errors: type[BaseException] | tuple[type[BaseException], ...] = ModelsError,
) -> asyncio.Task[Any]:
    """`fn(*args)` on the runner's pool; then `success(result)`, or `failure(error)` for `errors`."""

    async def op() -> None:
        try:
            result = await runner.run(fn, *args)
        except errors as exc:
            failure(exc)
            return
        success(result)

    return start(op())
