"""The sampling a model's publisher recommends: from the GGUF (`general.sampling.*`, written by
llama.cpp's converter when the model ships a generation config) or from our catalog entry.

The user's own values win when they turn "use the model's recommended sampling" off.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

GGUF_KEYS = {"temperature": "general.sampling.temp", "top_p": "general.sampling.top_p",
             "top_k": "general.sampling.top_k", "min_p": "general.sampling.min_p"}
FALLBACK_TEMPERATURE = 0.7  # what Regenerate samples with when the model gives none and the user chose 0


@dataclass(frozen=True)
class Sampling:
    temperature: float | None
    top_p: float | None
    top_k: int | None
    min_p: float | None
    source: str  # "the GGUF file" / "the catalog (…)"

    def describe(self) -> str:
        parts = [f"{k} {v:g}" for k, v in (("temperature", self.temperature), ("top_p", self.top_p),
                                            ("top_k", self.top_k), ("min_p", self.min_p)) if v is not None]
        return ", ".join(parts)


def from_gguf(path: str | Path) -> Sampling | None:
    from atomicchat.engine.errors import EngineError
    from atomicchat.engine.gguf_header import read_header

    try:
        h = read_header(path)
    except EngineError:
        return None
    vals = {k: h.get(key) for k, key in GGUF_KEYS.items()}
    vals = {k: v for k, v in vals.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    if not vals:
        return None
    return Sampling(
        temperature=float(vals["temperature"]) if "temperature" in vals else None,
        top_p=float(vals["top_p"]) if "top_p" in vals else None,
        top_k=int(vals["top_k"]) if "top_k" in vals else None,
        min_p=float(vals["min_p"]) if "min_p" in vals else None,
        source=f"{Path(path).name} (general.sampling)",
    )


def from_catalog(path: str | Path) -> Sampling | None:
    """The catalog's values for a target whose file name is one of its quants."""
    from atomicchat.models.catalog import load_catalog
    from atomicchat.models.errors import CatalogError

    name = Path(path).name
    try:
        catalog = load_catalog()
    except CatalogError:
        return None
    for pair in catalog.pairs:
        s = pair.target.sampling
        if s and any(q.file == name for q in pair.target.quants):
            return Sampling(s["temperature"], s["top_p"], int(s["top_k"]), s["min_p"], f"the catalog ({pair.name})")
    return None


def recommended(path: str | Path) -> Sampling | None:
    """GGUF first (it travels with the file), then the catalog; None when neither says."""
    return from_gguf(path) or from_catalog(path)
