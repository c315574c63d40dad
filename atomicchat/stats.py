"""The decode counters and the speed/acceptance formulas, shared by the engine's live stats
(atomicchat.engine.types.GenStats) and the ones saved with each reply (atomicchat.store.records)."""

from __future__ import annotations

from dataclasses import dataclass, fields


# A rate needs a span: one token stopped after 27 µs is not "36697 tok/s". Below these, show counts.
MIN_RATE_TOKENS = 8
MIN_RATE_SECONDS = 0.005  # timer resolution is far finer; the token floor does the work


class DraftRates:
    """Mixin for records with n_generated, n_drafted, n_accepted, n_draft_steps, generate_seconds."""

    n_generated: int
    n_drafted: int
    n_accepted: int
    n_draft_steps: int
    generate_seconds: float

    @property
    def acceptance(self) -> float:
        """accepted / drafted, as llama.cpp's draft_n_accepted / draft_n."""
        return self.n_accepted / self.n_drafted if self.n_drafted else 0.0

    @property
    def tau(self) -> float:
        """Mean tokens emitted per draft step: accepted per step + the target's own token."""
        return self.n_accepted / self.n_draft_steps + 1.0 if self.n_draft_steps else 1.0

    @property
    def mean_draft_length(self) -> float:
        """Tokens drafted per drafting step: what the adaptive policy chose on average."""
        return self.n_drafted / self.n_draft_steps if self.n_draft_steps else 0.0

    @property
    def has_rate(self) -> bool:
        """Enough tokens over enough time for tokens_per_second to mean something."""
        return self.n_generated >= MIN_RATE_TOKENS and self.generate_seconds >= MIN_RATE_SECONDS

    @property
    def tokens_per_second(self) -> float:
        return self.n_generated / self.generate_seconds if self.generate_seconds > 0 else 0.0


@dataclass
class DecodeCounters(DraftRates):
    """What one generation counted and timed."""

    n_prompt: int = 0
    n_prompt_cached: int = 0
    n_generated: int = 0
    n_drafted: int = 0
    n_accepted: int = 0
    n_steps: int = 0
    n_draft_steps: int = 0
    prefill_seconds: float = 0.0
    generate_seconds: float = 0.0
    draft_seconds: float = 0.0
    verify_seconds: float = 0.0


COUNTER_NAMES: tuple[str, ...] = tuple(f.name for f in fields(DecodeCounters))
