"""The speed/acceptance formulas, in one place for the engine's live stats and the saved ones."""

from __future__ import annotations


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
    def tokens_per_second(self) -> float:
        return self.n_generated / self.generate_seconds if self.generate_seconds > 0 else 0.0
