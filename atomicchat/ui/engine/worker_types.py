"""Messages between the window and the engine worker thread: plain, immutable where possible.

They cross threads by queued signals, so each one is a snapshot that the sender never mutates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from atomicchat.engine.types import EngineConfig, GenParams
from atomicchat.stats import TargetSpeed
from atomicchat.store.records import ReplyStats


@dataclass(frozen=True)
class ModelReady:
    request: EngineConfig  # what was loaded (without the draft when it was left out)
    info: Any  # atomicchat.engine.EngineInfo
    warning: str = ""  # e.g. why the draft was left out and the target runs alone


@dataclass(frozen=True)
class GenRequest:
    req_id: int
    messages: list[dict[str, str]]
    enable_thinking: bool | None = None
    params: GenParams = field(default_factory=GenParams)
    # Continue: the reply so far, which the model goes on from (it is the last turn, not in `messages`)
    continue_text: str = ""


@dataclass(frozen=True)
class StreamChunk:
    """The steps decoded since the previous chunk (the worker batches them, ~60 per second at most)."""

    req_id: int
    text: str
    step_accepted: list[int]  # accepted draft tokens, one entry per step
    draft_spans: list[tuple[int, int]]  # [start, end) in characters, relative to the reply start
    stats: ReplyStats  # running totals


@dataclass(frozen=True)
class GenResult:
    req_id: int
    reason: str  # "eos" | "length" | "cancelled" | "context" | "repetition"
    stats: ReplyStats
    dropped_messages: int = 0  # oldest messages left out so the chat fits the context window


@dataclass(frozen=True)
class BaselineResult:
    req_id: int
    tokens_per_second: float  # after the short prompt
    device: str
    speed: TargetSpeed | None = None  # by context length (None: the short run only)


@dataclass(frozen=True)
class WorkerFailure:
    req_id: int  # 0 for a failed load
    kind: str  # "load" | "generate" | "baseline" | "crash" (the engine process died or hung: reload)
    message: str  # a sentence for the user (the traceback goes to the log where it happens)


@dataclass
class _Pending:
    """Worker-side accumulator between two emitted chunks."""

    text: list[str] = field(default_factory=list)
    step_accepted: list[int] = field(default_factory=list)
    draft_spans: list[tuple[int, int]] = field(default_factory=list)

    def empty(self) -> bool:
        return not self.text and not self.step_accepted
