"""Plain records read from and written to the store. No Qt, no engine imports (only atomicchat.stats)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from atomicchat.stats import DecodeCounters

# Message.status values
DONE = "done"
STREAMING = "streaming"  # being generated; left behind by a crash, it is shown as "interrupted"
STOPPED = "stopped"
ERROR = "error"
INTERRUPTED = "interrupted"

MAX_SAVED_STEPS = 4096  # per-step chart data kept per reply; older steps are dropped


@dataclass
class ReplyStats(DecodeCounters):
    """What the live indicator showed for one reply, kept with it so the numbers stay after a restart."""

    used_draft: bool = False
    finish_reason: str = ""
    error: str = ""  # the engine's message when the reply failed
    target_name: str = ""
    draft_name: str = ""
    device: str = ""
    model_key: str = ""  # baseline key: which target on which device
    step_accepted: list[int] = field(default_factory=list)  # accepted draft tokens per step
    draft_spans: list[list[int]] = field(default_factory=list)  # [start, end) chars from accepted drafts

    def to_json(self) -> str:
        data = asdict(self)
        data["step_accepted"] = data["step_accepted"][-MAX_SAVED_STEPS:]
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> ReplyStats | None:
        """Unknown keys are ignored and bad JSON gives None, so old or odd rows never break loading."""
        if not text:
            return None
        try:
            data: Any = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        known = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in data.items() if k in known})
        except TypeError:
            return None


@dataclass
class Conversation:
    id: int
    title: str
    created_at: float
    updated_at: float


@dataclass
class Message:
    id: int
    conversation_id: int
    position: int
    role: str  # "system" | "user" | "assistant"
    content: str
    status: str = DONE
    created_at: float = 0.0
    stats: ReplyStats | None = None

    def can_continue(self) -> bool:
        """A reply that ended before the model did (the length limit, Stop, a crash) can be written on."""
        if self.role != "assistant" or not self.content.strip():
            return False
        reason = self.stats.finish_reason if self.stats else ""
        return self.status in (STOPPED, INTERRUPTED) or (self.status == DONE and reason == "length")
