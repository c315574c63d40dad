"""Run the API server on a background thread of a process that has its own main loop (the app).

uvicorn gets its own asyncio loop on that thread; `stop()` asks it to finish open responses and
returns within a few seconds. The engine is not touched here: jobs go to whatever backend the app
passed in, which runs them on the engine's own thread.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Listening:
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"


class ServerThread:
    """`start()` binds and returns the address, or raises OSError with a sentence (port in use...)."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        import uvicorn

        self._server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                                     access_log=False, lifespan="off",
                                                     timeout_graceful_shutdown=2))
        self._server.install_signal_handlers = lambda: None  # type: ignore[method-assign] # the app owns signals
        self._host = host
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="atomicchat-api", daemon=True)

    def _run(self) -> None:
        try:
            self._server.run()
        except BaseException as exc:  # noqa: BLE001 - uvicorn exits via SystemExit when it cannot bind
            self._failed = exc

    def start(self, timeout: float = 10.0) -> Listening:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise OSError(f"The local server could not listen on {self._host}:{self._server.config.port}; "
                              "the port may be in use. Pick another port in Settings.")
            time.sleep(0.02)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return Listening(self._host, int(port))

    def stop(self, timeout: float = 5.0) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(2.0)
