"""The one builder of engine requests: `EngineConfig` (what to load) and `GenParams` (how to generate).

Every caller (the window's settings, the local API, `atomicchat generate`, the self-test) goes through
these two functions, so a default lives in exactly one place: the field's default in
`atomicchat.engine.types`. A value of None means "the default"; a draft_max of 0 (as the settings
store it) means "the draft's own block size - 1", the same as None.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from atomicchat.engine.types import EngineConfig, GenParams

# `atomicchat generate --max-tokens`: shorter than a chat reply (GenParams' default), by design a quick check.
CLI_MAX_TOKENS = 256


def _given(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(unknown)}")
    out = {k: v for k, v in values.items() if v is not None}
    if out.get("draft_max") == 0:
        del out["draft_max"]
    return out


def gen_params(**values: Any) -> GenParams:
    """GenParams from loose values (settings, an API body, CLI flags); None or absent: the default."""
    return GenParams(**_given(GenParams, values))


def engine_config(target_path: Path | str, draft_path: Path | str | None = None, **values: Any) -> EngineConfig:
    """EngineConfig from loose values; None or absent: the default."""
    return EngineConfig(
        target_path=Path(target_path),
        draft_path=None if draft_path is None else Path(draft_path),
        **_given(EngineConfig, values),
    )
