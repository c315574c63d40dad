"""Start `atomicchat serve` as a child process and learn its URL (for tests and benchmarks).

The server is started on port 0 and prints the address it bound, so no free-port guess can race.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

READY = re.compile(r"Serving (\S+) .* at (http://127\.0\.0\.1:\d+/v1)")


class ServerProcess:
    """A running `atomicchat serve`; `base_url` ends in /v1. Use as a context manager."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None, timeout: float = 120.0) -> None:
        cmd = [sys.executable, "-m", "atomicchat", "serve", "--port", "0", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        self.log: list[str] = []
        self._ready = threading.Event()
        self.base_url = self.model_id = ""
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("the server did not start:\n" + "".join(self.log))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.append(line)
            m = READY.search(line)
            if m and not self._ready.is_set():
                self.model_id, self.base_url = m.group(1), m.group(2)
                self._ready.set()

    @property
    def health_url(self) -> str:
        return self.base_url.removesuffix("/v1") + "/health"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def isolated_env(root: Path) -> dict[str, str]:
    """XDG folders under `root`, so a test server never reads or writes the user's own data."""
    return {"XDG_DATA_HOME": str(root / "data"), "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_CONFIG_HOME": str(root / "config")}
