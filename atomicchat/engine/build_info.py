"""Which llama.cpp this app runs on: ggml version and commit, and its backends, for Help > About.

Read from the loaded libraries (ggml exports `ggml_version` / `ggml_commit`); every field falls back
to "unknown" so the About box opens even when a symbol is missing.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BuildInfo:
    llama_cpp_python: str
    ggml_version: str
    ggml_commit: str
    system_info: str


def _ggml_string(name: str) -> str:
    """A `const char *name(void)` from the ggml library next to llama-cpp-python's libllama."""
    try:
        import llama_cpp

        libdir = Path(llama_cpp.__file__).parent / "lib"
        for so in sorted(libdir.glob("*ggml-base*")) or sorted(libdir.glob("*ggml*")):
            fn = getattr(ctypes.CDLL(str(so)), name, None)
            if fn is not None:
                fn.restype, fn.argtypes = ctypes.c_char_p, []
                value = fn()
                if value:
                    return value.decode("utf-8", errors="replace")
    except Exception:  # noqa: BLE001 - informational only
        pass
    return "unknown"


def build_info() -> BuildInfo:
    try:
        import llama_cpp

        version = str(getattr(llama_cpp, "__version__", "unknown"))
    except Exception:  # noqa: BLE001
        version = "not installed"
    try:
        from atomicchat.engine.lib import system_info

        system = system_info().strip()
    except Exception:  # noqa: BLE001
        system = "unknown"
    return BuildInfo(version, _ggml_string("ggml_version"), _ggml_string("ggml_commit"), system)
