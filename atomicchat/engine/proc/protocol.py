"""Messages over the two pipes between the app and the engine child (pickled dataclasses).

parent -> child: Load, Call (a quick engine method: chat_prompt, tokenize, detokenize, reset),
                 Generate, Cancel, Shutdown (and Sleep, for tests of a child that stops answering)
child -> parent: Progress, Loaded, Reply (the answer to a Call), Steps (a batch), Done, Failed
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Load:
    config: Any  # atomicchat.engine.EngineConfig


@dataclass(frozen=True)
class Call:
    req_id: int
    method: str  # one of CALLS
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


CALLS = ("chat_prompt", "tokenize", "detokenize", "render_chat", "reset")


@dataclass(frozen=True)
class Generate:
    req_id: int
    tokens: list[int]
    params: Any  # atomicchat.engine.GenParams


@dataclass(frozen=True)
class Cancel:
    req_id: int


@dataclass(frozen=True)
class Shutdown:
    pass


@dataclass(frozen=True)
class Sleep:
    """Test only: the child sleeps `seconds` without answering (a stand-in for a native hang)."""

    seconds: float


@dataclass(frozen=True)
class Progress:
    stage: str
    value: float


@dataclass(frozen=True)
class Loaded:
    info: Any  # EngineInfo
    n_ctx: int


@dataclass(frozen=True)
class Reply:
    req_id: int
    value: Any


@dataclass(frozen=True)
class Steps:
    req_id: int
    steps: list[Any]  # Step objects, batched: one pickle per flush instead of one per token


@dataclass(frozen=True)
class Done:
    req_id: int
    finished: Any  # Finished


@dataclass(frozen=True)
class Failed:
    req_id: int  # 0: the load
    error_type: str  # the EngineError subclass name, or the Python exception's
    message: str
