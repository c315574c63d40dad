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


def continued_counts(before: DecodeCounters, after: DecodeCounters) -> dict[str, int | float]:
    """The counters of a reply written in two parts (Continue): the first part's prompt, both parts'
    tokens, steps and times, so rates and the speedup's context positions cover the whole reply."""
    out = {name: getattr(before, name) + getattr(after, name) for name in COUNTER_NAMES}
    out["n_prompt"], out["n_prompt_cached"] = before.n_prompt, before.n_prompt_cached
    return out


@dataclass(frozen=True)
class TargetSpeed:
    """Target-only decode speed on this machine as a function of context length.

    A token costs more deep in a chat than just after a short prompt (attention reads the whole
    cache). Measured on SmolLM2-135M Q4_1 at 2 threads: 9.3 ms a token at ~70 context positions,
    12.6 ms at ~260. Against the short baseline alone, a DFlash reply that ran as fast as the target
    alone read "slower: 0.86x". So the baseline is measured at two context lengths and a reply is
    compared with the target-only speed over its own positions: a token at position d costs
    `1 / tokens_per_second + slope * (d - depth)` seconds (linear; the cost of attention is)."""

    tokens_per_second: float  # measured after a short prompt
    depth: float  # the mean context position of that measurement
    slope: float = 0.0  # seconds per token added by each further context position (0: not measured)
    far_depth: float = 0.0  # the mean context position of the deep measurement (0: none was made)

    def tokens_per_second_at(self, depth: float) -> float:
        base = 1.0 / self.tokens_per_second
        # never below half the measured cost: a slope fitted on noisy runs must not extrapolate to ~0
        return 1.0 / max(base + self.slope * (depth - self.depth), 0.5 * base)

    @staticmethod
    def positions(n_prompt: int, n_generated: int) -> tuple[int, int]:
        """The first and last context position of n_generated tokens decoded after n_prompt."""
        return n_prompt, n_prompt + max(n_generated - 1, 0)

    @staticmethod
    def mean_position(n_prompt: int, n_generated: int) -> float:
        first, last = TargetSpeed.positions(n_prompt, n_generated)
        return (first + last) / 2

    def for_reply(self, n_prompt: int, n_generated: int) -> float:
        """Target-only tok/s over the positions a reply of n_generated tokens after n_prompt used."""
        return self.tokens_per_second_at(self.mean_position(n_prompt, n_generated))

    @classmethod
    def fit(cls, near: DraftRates, n_near: int, far: DraftRates | None = None, n_far: int = 0) -> TargetSpeed:
        """From a run after a short prompt of n_near tokens and, if one was made, a run after a long
        prompt of n_far tokens (each with n_generated and generate_seconds)."""
        d0 = cls.mean_position(n_near, near.n_generated)
        if far is None or not far.has_rate or not near.has_rate:
            return cls(near.tokens_per_second, d0)
        d1 = cls.mean_position(n_far, far.n_generated)
        if d1 <= d0:
            return cls(near.tokens_per_second, d0)
        slope = max(0.0, (1.0 / far.tokens_per_second - 1.0 / near.tokens_per_second) / (d1 - d0))
        return cls(near.tokens_per_second, d0, slope, d1)
