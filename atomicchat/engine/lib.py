"""One place that loads llama-cpp-python's low-level bindings, initialises the backend and routes
llama.cpp's global log into Python logging (kept quiet by default, last errors kept for messages)."""

from __future__ import annotations

import collections
import ctypes
import logging
import threading
from types import ModuleType

from atomicchat.engine.errors import ModelLoadError

log = logging.getLogger("atomicchat.llama")

_lock = threading.Lock()
_C: ModuleType | None = None
_recent: collections.deque[str] = collections.deque(maxlen=40)
_partial: list[str] = []
_callback = None  # keep the ctypes callback alive for the life of the process


def _on_log(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
    try:
        s = text.decode("utf-8", errors="replace")
    except Exception:  # never raise into C
        return
    _partial.append(s)
    if not s.endswith("\n"):
        return
    line = "".join(_partial).rstrip()
    _partial.clear()
    if not line:
        return
    _recent.append(line)
    # Quiet by default: load chatter is not for users; the last lines explain failures instead.
    log.debug("%s", line)


def C() -> ModuleType:
    """The `llama_cpp.llama_cpp` ctypes module, backend initialised once."""
    global _C, _callback
    if _C is not None:
        return _C
    with _lock:
        if _C is None:
            try:
                from llama_cpp import llama_cpp as mod
            except (ImportError, OSError) as exc:
                raise ModelLoadError(
                    f"The inference library (llama-cpp-python) could not be loaded: {exc}. Reinstall Atomic Chat."
                ) from exc
            _callback = mod.llama_log_callback(_on_log)
            mod.llama_log_set(_callback, ctypes.c_void_p(0))
            mod.llama_backend_init()
            _C = mod
    return _C


def recent_log(n: int = 8, errors_only: bool = False) -> list[str]:
    """The last llama.cpp log lines, used to explain a failed load or decode."""
    lines = list(_recent)
    if errors_only:
        lines = [ln for ln in lines if "error" in ln.lower() or "failed" in ln.lower()]
    return lines[-n:]


def clear_log() -> None:
    _recent.clear()


def system_info() -> str:
    return C().llama_print_system_info().decode("utf-8", errors="replace")
