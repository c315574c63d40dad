"""Qt-free inference engine: target-only and DFlash speculative decoding on llama-cpp-python.

Importing this package does not load llama.cpp; constructing an `Engine` does.
"""

from atomicchat.engine.errors import (
    ContextFullError,
    DecodeError,
    DraftMismatchError,
    EngineError,
    MissingSymbolError,
    ModelFileError,
    ModelLoadError,
    UnsupportedDraftError,
)
from atomicchat.engine.types import EngineConfig, EngineInfo, Finished, GenParams, GenStats, Step


def __getattr__(name: str):  # lazy: `Engine` pulls in llama_cpp
    if name == "Engine":
        from atomicchat.engine.engine import Engine

        return Engine
    raise AttributeError(name)


__all__ = [
    "ContextFullError",
    "DecodeError",
    "DraftMismatchError",
    "Engine",
    "EngineConfig",
    "EngineError",
    "EngineInfo",
    "Finished",
    "GenParams",
    "GenStats",
    "MissingSymbolError",
    "ModelFileError",
    "ModelLoadError",
    "Step",
    "UnsupportedDraftError",
]
