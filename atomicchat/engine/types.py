"""Plain data passed between the engine and its consumers (GUI worker, CLI, benchmarks)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from atomicchat.engine.draft_confidence import check_p_min
from atomicchat.engine.errors import EngineError

from atomicchat.stats import DecodeCounters


@dataclass(frozen=True)
class EngineConfig:
    target_path: Path
    draft_path: Path | None = None
    n_ctx: int = 4096
    n_batch: int = 512
    n_gpu_layers: int = -1  # -1: all layers that the backend can take; 0: CPU only
    n_threads: int | None = None  # None: physical cores
    draft_max: int | None = None  # None: block_size - 1
    # Tests and experts only: recurrent rollback depth of a hybrid target (None: draft_max).
    # A smaller value forces the checkpoint/re-decode fallback.
    n_rs_seq: int | None = None
    # Sample on the device (no logits rows to the host): None = $ATOMICCHAT_DEVICE_SAMPLING, else
    # off (measured slower than the host path on the CPU and on an H200: engine/device_sampling.py).
    device_sampling: bool | None = None
    # The draft's confidence cut (engine/draft_confidence.py, llama.cpp's --spec-draft-p-min): None is
    # the engine's default, 0 drafts every position the length asks for.
    draft_p_min: float | None = None


@dataclass(frozen=True)
class GenParams:
    max_tokens: int = 1024  # a reply in the app and from the local API (the CLI: requests.CLI_MAX_TOKENS)
    temperature: float = 0.0  # 0: greedy
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    seed: int | None = None  # None: a fresh random seed per generation
    use_draft: bool = True  # False: target-only even when a draft is loaded (baselines)
    draft_max: int | None = None  # per-call override, clamped to the loaded maximum
    draft_p_min: float | None = None  # per-call override of EngineConfig.draft_p_min
    # End the reply once it has become a loop (engine/repetition.py; reason "repetition"). Off by
    # default so the engine matches llama.cpp token for token; the app's chats turn it on.
    stop_loops: bool = False

    def __post_init__(self) -> None:
        """NaN or infinite sampling values reach llama.cpp's samplers as garbage; refuse them here."""
        for name in ("temperature", "top_p", "min_p"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise EngineError(f"The sampling setting {name} must be a finite number, not {value!r}.")
        if self.temperature < 0:
            raise EngineError("The temperature cannot be negative.")
        for name in ("top_p", "min_p"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise EngineError(f"The sampling setting {name} must be between 0 and 1, not {getattr(self, name)}.")
        check_p_min(self.draft_p_min)

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0


@dataclass
class GenStats(DecodeCounters):
    n_fallbacks: int = 0  # hybrid targets: checkpoint restores + re-decodes

    def to_dict(self) -> dict[str, float | int]:
        d: dict[str, float | int] = dict(self.__dict__)
        d.update(acceptance=self.acceptance, tau=self.tau, tokens_per_second=self.tokens_per_second)
        return d


@dataclass(frozen=True)
class Step:
    """One decode step: a single token target-only, or the accepted prefix plus one with DFlash."""

    tokens: list[int]
    text: str
    from_draft: list[bool]
    n_drafted: int
    n_accepted: int
    stats: GenStats
    draft_chars: int = 0  # leading characters of `text` decoded from accepted draft tokens


@dataclass(frozen=True)
class Finished:
    reason: str  # "eos" | "length" | "cancelled" | "context" | "repetition"
    stats: GenStats
    tokens: list[int] = field(default_factory=list)  # everything generated
    text: str = ""


@dataclass(frozen=True)
class EngineInfo:
    target_name: str
    target_path: Path
    draft_name: str | None
    draft_path: Path | None
    block_size: int
    draft_max: int
    n_ctx: int
    device: str
    gpu_layers_used: int
    has_chat_template: bool
    is_hybrid: bool
    n_vocab: int
    notes: tuple[str, ...] = ()
    flash_attn: str = "auto"  # llama.cpp's flash attention for both contexts: auto | off | on (engine/attention.py)
    # No chat template in the file: usually a base model, which continues text instead of chatting.
    looks_like_base_model: bool = False
