"""User settings: a dataclass with sensible defaults, stored one JSON value per key.

Unknown keys are ignored and values of the wrong type fall back to the default, so a settings
row written by another version never stops the app from starting.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from atomicchat.engine.draft_confidence import DEFAULT_P_MIN
from atomicchat.engine.requests import engine_config, gen_params
from atomicchat.engine.types import EngineConfig, GenParams
from atomicchat.store.db import Database

MAX_P_MIN = 0.95  # a higher cut would hardly ever draft (the engine refuses 1 and above)
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant. Answer clearly and concisely."


@dataclass
class AppSettings:
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    # The engine's own defaults (atomicchat.engine.types), stored so the user can change them.
    temperature: float = GenParams.temperature  # greedy by default: stable answers and the best draft acceptance
    top_k: int = GenParams.top_k
    top_p: float = GenParams.top_p
    min_p: float = GenParams.min_p
    max_tokens: int = GenParams.max_tokens
    n_ctx: int = EngineConfig.n_ctx
    n_gpu_layers: int = EngineConfig.n_gpu_layers  # -1: as many as fit; 0: CPU only
    use_draft: bool = GenParams.use_draft  # DFlash on/off
    draft_max: int = 0  # 0: the draft's own block size - 1 (None in EngineConfig; a stored value is a number)
    # The draft's confidence cut per reply (engine/draft_confidence.py): a drafted block stops at its first
    # token below this probability; 0 drafts every position.
    draft_p_min: float = DEFAULT_P_MIN
    enable_thinking: bool = False  # DFlash drafts are trained on non-thinking output
    colour_draft_tokens: bool = False
    stop_loops: bool = True  # end a reply that keeps repeating one block (engine/repetition.py)
    target_path: str = ""  # the chosen model; "" means pick automatically
    draft_path: str = ""
    sampling_from_model: bool = True  # the publisher's recommended sampling when the model has one
    theme: str = "system"  # "system" (follow the desktop) | "light" | "dark"
    chat_zoom: int = 0  # chat font size steps (points) from the default, Ctrl+= / Ctrl+- / Ctrl+0
    draft_off_for: str = ""  # target paths (one a line) where DFlash was measured slower and the user turned it off
    api_enabled: bool = False  # the local OpenAI-compatible server (Settings > Local server)
    api_host: str = "127.0.0.1"  # this computer only unless the user chooses otherwise
    api_port: int = 8080
    api_key: str = ""
    api_cors: bool = False  # let web pages in a browser call the local API (any origin)

    def draft_off(self, target: str) -> bool:
        return target in self.draft_off_for.splitlines()

    def with_draft_off(self, target: str, off: bool) -> AppSettings:
        paths = [p for p in self.draft_off_for.splitlines() if p and p != target] + ([target] if off else [])
        return replace(self, draft_off_for="\n".join(paths))

    def engine_config(self, target: Path, draft: Path | None) -> EngineConfig:
        """What to load for `target`: the draft left out when DFlash is off, in general or for this model."""
        use = draft is not None and self.use_draft and not self.draft_off(str(target))
        return engine_config(target, draft if use else None, n_ctx=self.n_ctx, n_gpu_layers=self.n_gpu_layers,
                             draft_max=self.draft_max, draft_p_min=self.draft_p_min)  # the local API's cut

    def gen_params(self, *, use_draft: bool, temperature: float, top_k: int, top_p: float, min_p: float,
                   seed: int | None = None) -> GenParams:
        """One reply's parameters: the sampling chosen for it (settings or the model's recommendation)."""
        return gen_params(max_tokens=self.max_tokens, temperature=float(temperature), top_k=int(top_k),
                          top_p=float(top_p), min_p=float(min_p), seed=seed, use_draft=use_draft,
                          draft_max=self.draft_max, draft_p_min=self.draft_p_min, stop_loops=self.stop_loops)

    def clamped(self) -> AppSettings:
        """A copy with every number inside the range the engine accepts."""
        return AppSettings(
            system_prompt=self.system_prompt,
            temperature=min(max(float(self.temperature), 0.0), 2.0),
            top_k=min(max(int(self.top_k), 0), 1000),
            top_p=min(max(float(self.top_p), 0.0), 1.0),
            min_p=min(max(float(self.min_p), 0.0), 1.0),
            max_tokens=min(max(int(self.max_tokens), 1), 32768),
            n_ctx=min(max(int(self.n_ctx), 256), 262144),
            n_gpu_layers=max(int(self.n_gpu_layers), -1),
            use_draft=bool(self.use_draft),
            draft_max=min(max(int(self.draft_max), 0), 64),
            draft_p_min=DEFAULT_P_MIN if math.isnan(self.draft_p_min) else min(max(float(self.draft_p_min), 0.0), MAX_P_MIN),
            enable_thinking=bool(self.enable_thinking),
            colour_draft_tokens=bool(self.colour_draft_tokens),
            stop_loops=bool(self.stop_loops),
            target_path=self.target_path,
            draft_path=self.draft_path,
            draft_off_for=self.draft_off_for,
            sampling_from_model=bool(self.sampling_from_model),
            theme=self.theme if self.theme in ("system", "light", "dark") else "system",
            chat_zoom=min(max(int(self.chat_zoom), -4), 12),
            api_enabled=bool(self.api_enabled),
            api_host=self.api_host if self.api_host in ("127.0.0.1", "0.0.0.0", "::1", "::") else "127.0.0.1",
            api_port=min(max(int(self.api_port), 1024), 65535),
            api_key=self.api_key,
            api_cors=bool(self.api_cors),
        )


def _coerce(value: Any, default: Any) -> Any:
    if isinstance(default, bool):
        return value if isinstance(value, bool) else default
    if isinstance(default, int):
        return value if isinstance(value, int) and not isinstance(value, bool) else default
    if isinstance(default, float):
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
    if isinstance(default, str):
        return value if isinstance(value, str) else default
    return default


class SettingsStore:
    def __init__(self, db: Database) -> None:
        self.conn = db.conn

    def load(self) -> AppSettings:
        stored: dict[str, Any] = {}
        for row in self.conn.execute("SELECT key, value FROM settings"):
            try:
                stored[row["key"]] = json.loads(row["value"])
            except ValueError:
                continue
        defaults = AppSettings()
        values = {
            f.name: _coerce(stored.get(f.name, getattr(defaults, f.name)), getattr(defaults, f.name))
            for f in fields(AppSettings)
        }
        return AppSettings(**values).clamped()

    def save(self, settings: AppSettings) -> None:
        rows = [(f.name, json.dumps(getattr(settings, f.name))) for f in fields(AppSettings)]
        self.conn.executemany(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            rows,
        )
