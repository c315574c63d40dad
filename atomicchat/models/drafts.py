"""Known DFlash drafts: which target each was made for, and the GGUF files of it we could pin.

`resources/dflash_drafts.json` is data with a source per entry. `known_draft(name)` matches a Hub repo
or file name of a target (e.g. `unsloth/Qwen3.5-9B-GGUF`, `Qwen_Qwen3.5-9B-Q4_K_M.gguf`) to its draft;
`draft_offer()` turns that into what the model card says. Whether a pair really works is decided by
the engine's own pairing checks (vocabulary, width, target layers, arch) on the files' headers.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from atomicchat.models.errors import CatalogError
from atomicchat.paths import resources_dir

DRAFTS_FILE = "dflash_drafts.json"


@dataclass(frozen=True)
class DraftFile:
    repo: str
    file: str | None  # None: the repo is known, its file names were not pinned
    quant: str | None
    size: int | None
    sha256: str | None
    arch: str
    loads_here: bool | None  # None: not known until its header is read


@dataclass(frozen=True)
class KnownDraft:
    target: str
    match: str
    base_repo: str
    source: str  # the draft as published by its authors (safetensors)
    block_size: int
    facts_from: str
    gguf: tuple[DraftFile, ...]
    # A speedup others reported (from `facts_from`), never measured on this app's machines, so it is said
    # as reported, with where: a card that said "about 2-3× faster" as a fact was read as this app's
    # promise on a CPU, where the policy often drafts nothing.
    reported_gain: str = ""

    @property
    def loadable(self) -> tuple[DraftFile, ...]:
        """Files this app can use: pinned names, made for upstream llama.cpp's `dflash` arch."""
        return tuple(f for f in self.gguf if f.file and f.loads_here)


@functools.lru_cache(maxsize=1)
def known_drafts() -> tuple[KnownDraft, ...]:
    path = resources_dir() / DRAFTS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return tuple(
            KnownDraft(
                target=d["target"], match=d["match"].lower(), base_repo=d["base_repo"], source=d["source"],
                block_size=int(d["block_size"]), facts_from=d["facts_from"],
                gguf=tuple(DraftFile(g["repo"], g.get("file"), g.get("quant"), g.get("size"), g.get("sha256"),
                                     g["arch"], g.get("loads_here")) for g in d["gguf"]),
                reported_gain=d.get("reported_gain", ""),
            )
            for d in data["drafts"]
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"The list of known DFlash drafts ({path.name}) is missing or damaged: {exc}.") from exc


def _norm(name: str) -> str:
    return name.lower().replace("_", "-")


def known_draft(name: str) -> KnownDraft | None:
    """The draft made for the target named by a repo id or file name; None for drafts themselves."""
    n = _norm(name)
    if "dflash" in n:
        return None
    best: KnownDraft | None = None
    for d in known_drafts():
        if re.search(rf"(?<![a-z0-9.]){re.escape(d.match)}(?![0-9])", n) and (best is None or len(d.match) > len(best.match)):
            best = d
    return best


@dataclass(frozen=True)
class DraftOffer:
    draft: KnownDraft | None
    file: DraftFile | None  # the recommended loadable file, if any
    text: str  # what the model card says about DFlash for this target


def draft_offer(target_name: str) -> DraftOffer:
    d = known_draft(target_name)
    if d is None:
        return DraftOffer(None, None, "No DFlash draft is known for this model: it runs without speculative decoding.")
    files = d.loadable
    if files:
        f = files[0]
        size = f" ({f.size / 1e9:.2f} GB)" if f.size else ""
        said = [f"With DFlash draft {f.repo}/{f.file}{size}: identical text, faster where the draft fits.",
                d.reported_gain, "This app measures the gain on yours after download."]
        return DraftOffer(d, f, " ".join(x for x in said if x))
    if d.gguf:
        forks = sorted({g.arch for g in d.gguf if g.loads_here is False})
        why = f" (made for llama.cpp forks: arch {', '.join(forks)})" if forks else ""
        return DraftOffer(d, None, f"A DFlash draft exists ({d.source}), but no GGUF of it that this app can load is "
                                   f"known{why}; it runs without a draft.")
    return DraftOffer(d, None, f"A DFlash draft exists ({d.source}) but only as safetensors; no GGUF of it is "
                               "published that we could check, so it runs without a draft.")


def quant_advice(quant: str | None, with_draft: bool) -> str:
    """Low-bit targets keep less of DFlash's gain: reported for Qwen3.5-9B with MLX as +67% at bf16,
    +39% at 8-bit and +12% at 6-bit."""
    if not with_draft or not quant:
        return ""
    q = quant.upper()
    if q in ("BF16", "F16", "F32"):
        return "Full precision keeps most of DFlash's gain (reported +67% at bf16 on Qwen3.5-9B)."
    if q.startswith(("Q8", "IQ8")):
        return "8-bit keeps much of DFlash's gain (reported +39% on Qwen3.5-9B)."
    if q.startswith(("Q6", "Q5", "IQ5", "IQ6")):
        return "At 5-6 bits DFlash gains less (reported +12% at 6-bit on Qwen3.5-9B)."
    return "At 4 bits and below DFlash gains little: the target verifies so fast that drafting barely pays."
