"""Model catalog: pairs of a target GGUF and the DFlash draft trained for it, with their quants.

The catalog is data, not code: `resources/catalog.json` ships pinned facts (repo, file, size, sha256
when known, architecture numbers the fit estimate needs) so the app works offline; a new pair is a
new JSON entry. `refresh()` asks the Hub (`HfApi().model_info(..., files_metadata=True)`) for exact
sizes and sha256 and for GGUF quants the pinned file does not list, and stores them as an overlay in
`data_dir()/catalog-refresh.json`; the overlay only adds facts, so a newer bundled catalog (an app
update with more pairs) is never hidden by an old refresh.

API:
    cat = load_catalog()                      # Catalog; raises CatalogError with the reason
    pair = cat.pair("qwen3.5-9b-dflash")      # ModelPair (cat.pairs: all of them, catalog order)
    pair.target.quants, pair.draft.quants     # tuple[Quant], each .name .file .size .sha256
    t, d = pair.files("Q4_K_M", "Q8_0")       # FileRef for the target and the draft (None = defaults)
    cat = refresh(cat)                        # network; returns the updated catalog and saves the overlay
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from atomicchat.models.errors import CatalogError

SCHEMA = 1
CATALOG_FILE = "catalog.json"
OVERLAY_FILE = "catalog-refresh.json"
Role = Literal["target", "draft"]

# Quant label inside a GGUF file name: Q4_K_M, UD-Q4_K_XL, IQ4_XS, Q8_0, BF16, F16 ...
_QUANT_RE = re.compile(r"(?:^|[-_.])((?:UD-)?(?:I?Q\d(?:_[A-Z0-9]+)*|BF16|F16|F32))\.gguf$", re.IGNORECASE)


@dataclass(frozen=True)
class ArchFacts:
    """Architecture numbers for the memory estimate (see atomicchat.models.fit for the formula)."""

    n_layer: int
    n_embd: int
    n_vocab: int
    context_length: int
    kv_layers: int  # layers that keep a KV cache (hybrid models: the full-attention ones only)
    n_head_kv: int
    key_length: int
    value_length: int
    swa_layers: int = 0  # how many of kv_layers use a sliding window
    swa_window: int = 0
    recurrent_state_bytes: int = 0  # fixed per-sequence state of recurrent (DeltaNet/SSM) layers
    notes: str = ""


@dataclass(frozen=True)
class Quant:
    name: str
    file: str
    size: int | None  # bytes; exact when size_exact, else an estimate for the fit check
    sha256: str | None = None
    size_exact: bool = True
    repo: str | None = None  # overrides the model's repo for this quant
    revision: str | None = None
    notes: str = ""


@dataclass(frozen=True)
class FileRef:
    """One concrete file to fetch or find: what a download job and the registry work with."""

    role: Role
    pair_id: str
    quant: str
    repo: str
    revision: str
    filename: str
    size: int | None
    sha256: str | None
    size_exact: bool

    @property
    def key(self) -> str:
        """Registry key of a Hub file: one installed copy per repo file."""
        return f"hf:{self.repo}/{self.filename}"


@dataclass(frozen=True)
class ModelSpec:
    role: Role
    name: str
    repo: str
    revision: str
    arch: str
    facts: ArchFacts
    quants: tuple[Quant, ...]
    default_quant: str
    sampling: dict[str, float] | None = None  # the publisher's recommended values (temperature, top_p, ...)

    def quant(self, name: str | None = None) -> Quant:
        wanted = (name or self.default_quant).lower()
        for q in self.quants:
            if q.name.lower() == wanted:
                return q
        names = ", ".join(q.name for q in self.quants)
        raise CatalogError(f"{self.name} has no quant '{name}'. Available: {names}.")


@dataclass(frozen=True)
class ModelPair:
    id: str
    name: str
    summary: str
    license: str
    target: ModelSpec
    draft: ModelSpec

    def files(self, quant: str | None = None, draft_quant: str | None = None) -> tuple[FileRef, FileRef]:
        return self._ref(self.target, quant), self._ref(self.draft, draft_quant)

    def _ref(self, spec: ModelSpec, quant: str | None) -> FileRef:
        q = spec.quant(quant)
        return FileRef(
            role=spec.role,
            pair_id=self.id,
            quant=q.name,
            repo=q.repo or spec.repo,
            revision=q.revision or spec.revision,
            filename=q.file,
            size=q.size,
            sha256=q.sha256,
            size_exact=q.size_exact,
        )


@dataclass(frozen=True)
class Catalog:
    schema: int
    updated: str
    pairs: tuple[ModelPair, ...]
    source: str = ""
    refreshed_at: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def pair(self, pair_id: str) -> ModelPair:
        for p in self.pairs:
            if p.id == pair_id:
                return p
        ids = ", ".join(p.id for p in self.pairs) or "none"
        raise CatalogError(f"The catalog has no model pair '{pair_id}'. Known pairs: {ids}.")


# ---------------------------------------------------------------- parsing


def _need(obj: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    value = obj.get(key)
    if value is None or not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise CatalogError(f"The model catalog is damaged: {where} needs '{key}'.")
    return value


def _facts(obj: dict[str, Any], where: str) -> ArchFacts:
    ints = ("n_layer", "n_embd", "n_vocab", "context_length", "kv_layers", "n_head_kv", "key_length", "value_length")
    values = {k: int(_need(obj, k, where, int)) for k in ints}
    return ArchFacts(
        **values,
        swa_layers=int(obj.get("swa_layers", 0)),
        swa_window=int(obj.get("swa_window", 0)),
        recurrent_state_bytes=int(obj.get("recurrent_state_bytes", 0)),
        notes=str(obj.get("notes", "")),
    )


def _quant(obj: dict[str, Any], where: str) -> Quant:
    size = obj.get("size")
    sha = obj.get("sha256")
    return Quant(
        name=_need(obj, "name", where),
        file=_need(obj, "file", where),
        size=int(size) if isinstance(size, int) and size > 0 else None,
        sha256=sha.lower() if isinstance(sha, str) and sha else None,
        size_exact=bool(obj.get("size_exact", True)),
        repo=obj.get("repo"),
        revision=obj.get("revision"),
        notes=str(obj.get("notes", "")),
    )


SAMPLING_KEYS = ("temperature", "top_p", "top_k", "min_p")


def _sampling(obj: Any, where: str) -> dict[str, float] | None:
    if obj is None:
        return None
    if not isinstance(obj, dict) or not all(isinstance(obj.get(k), int | float) for k in SAMPLING_KEYS):
        raise CatalogError(f"The model catalog is damaged: {where} needs numbers for {', '.join(SAMPLING_KEYS)}.")
    return {k: float(obj[k]) for k in SAMPLING_KEYS}


def _spec(obj: Any, role: Role, where: str) -> ModelSpec:
    if not isinstance(obj, dict):
        raise CatalogError(f"The model catalog is damaged: {where} has no '{role}' section.")
    quants = tuple(_quant(q, f"{where} {role} quant") for q in obj.get("quants") or [])
    if not quants:
        raise CatalogError(f"The model catalog is damaged: {where} {role} lists no quants.")
    default = str(obj.get("default_quant") or quants[0].name)
    spec = ModelSpec(
        role=role,
        name=_need(obj, "name", f"{where} {role}"),
        repo=_need(obj, "repo", f"{where} {role}"),
        revision=str(obj.get("revision") or "main"),
        arch=_need(obj, "arch", f"{where} {role}"),
        facts=_facts(_need(obj, "facts", f"{where} {role}", dict), f"{where} {role} facts"),
        quants=quants,
        default_quant=default,
        sampling=_sampling(obj.get("sampling"), f"{where} {role} sampling"),
    )
    spec.quant(default)  # the default must exist
    return spec


def parse(data: Any, source: str = "") -> Catalog:
    """Build a Catalog from decoded JSON; raise CatalogError naming the first problem."""
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise CatalogError(f"The model catalog {source or ''} is damaged: it has no 'pairs' list.".replace("  ", " "))
    if int(data.get("schema", 0)) != SCHEMA:
        raise CatalogError(f"The model catalog uses format {data.get('schema')}; this version reads format {SCHEMA}.")
    pairs: list[ModelPair] = []
    for i, obj in enumerate(data["pairs"]):
        where = f"pair #{i + 1}"
        if not isinstance(obj, dict):
            raise CatalogError(f"The model catalog is damaged: {where} is not an object.")
        pid = _need(obj, "id", where)
        where = f"pair '{pid}'"
        pairs.append(
            ModelPair(
                id=pid,
                name=_need(obj, "name", where),
                summary=str(obj.get("summary", "")),
                license=str(obj.get("license", "")),
                target=_spec(obj.get("target"), "target", where),
                draft=_spec(obj.get("draft"), "draft", where),
            )
        )
    ids = [p.id for p in pairs]
    if len(set(ids)) != len(ids):
        raise CatalogError("The model catalog is damaged: two pairs share the same id.")
    return Catalog(schema=SCHEMA, updated=str(data.get("updated", "")), pairs=tuple(pairs), source=source)


def bundled_path() -> Path:
    from atomicchat.paths import resources_dir

    return resources_dir() / CATALOG_FILE


def overlay_path() -> Path:
    from atomicchat.paths import data_dir

    return data_dir() / OVERLAY_FILE


def load_catalog(path: str | Path | None = None, *, use_overlay: bool = True) -> Catalog:
    """Read the pinned catalog (or `path`) and apply the last refresh, if any. Never uses the network."""
    p = Path(path) if path else bundled_path()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CatalogError(f"The model catalog is missing ({p}); reinstall Atomic Chat.") from exc
    except (OSError, ValueError) as exc:
        raise CatalogError(f"The model catalog {p} cannot be read: {exc}.") from exc
    catalog = parse(data, str(p))
    if use_overlay:
        overlay = _read_overlay()
        if overlay:
            catalog = apply_overlay(catalog, overlay)
    return catalog


# ---------------------------------------------------------------- refresh overlay


def quant_label(filename: str) -> str | None:
    """'Qwen_Qwen3.5-9B-Q4_K_M.gguf' -> 'Q4_K_M'; None for files that carry no quant label."""
    m = _QUANT_RE.search(filename.rsplit("/", 1)[-1])
    return m.group(1).upper() if m else None


def _file_key(repo: str, filename: str) -> str:
    return f"{repo}/{filename}"


def apply_overlay(catalog: Catalog, overlay: dict[str, Any]) -> Catalog:
    """Fill sizes/sha256 from a refresh and append discovered quants; pinned sha256 values win."""
    facts: dict[str, dict[str, Any]] = overlay.get("files") or {}
    extra: dict[str, list[dict[str, Any]]] = overlay.get("extra_quants") or {}

    def fix(spec: ModelSpec, where: str) -> ModelSpec:
        quants = []
        for q in spec.quants:
            f = facts.get(_file_key(q.repo or spec.repo, q.file))
            if f:
                q = replace(
                    q,
                    size=int(f["size"]) if f.get("size") else q.size,
                    size_exact=bool(f.get("size")) or q.size_exact,
                    sha256=q.sha256 or f.get("sha256"),
                )
            quants.append(q)
        known = {q.name.lower() for q in quants}
        for obj in extra.get(spec.repo, []):
            if str(obj.get("name", "")).lower() not in known:
                quants.append(_quant(obj, where))
                known.add(str(obj["name"]).lower())
        return replace(spec, quants=tuple(quants))

    pairs = tuple(replace(p, target=fix(p.target, p.id), draft=fix(p.draft, p.id)) for p in catalog.pairs)
    return replace(catalog, pairs=pairs, refreshed_at=overlay.get("refreshed_at"))


def _read_overlay() -> dict[str, Any] | None:
    try:
        data = json.loads(overlay_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no refresh yet, or a damaged one: the pinned facts still work
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def refresh(
    catalog: Catalog | None = None,
    *,
    token: str | bool | None = None,
    save: bool = True,
    discover: bool = True,
) -> Catalog:
    """Ask the Hub for exact sizes, sha256 and extra GGUF quants of every repo in the catalog.

    Raises a ModelsError subclass (OfflineError, NotFoundError, GatedError ...) when the Hub cannot answer.
    """
    from huggingface_hub import HfApi

    from atomicchat.models import hub
    from atomicchat.models.atomic import write_json_atomic

    if hub.is_offline():
        from atomicchat.models.errors import OfflineError

        raise OfflineError("Cannot refresh the model catalog: Atomic Chat is in offline mode (HF_HUB_OFFLINE is set).")
    base = catalog or load_catalog(use_overlay=False)
    api = HfApi(endpoint=hub.endpoint(), library_name="atomicchat")
    repos: dict[tuple[str, str], ModelSpec] = {}
    for p in base.pairs:
        for spec in (p.target, p.draft):
            repos.setdefault((spec.repo, spec.revision), spec)
            for q in spec.quants:
                if q.repo:
                    repos.setdefault((q.repo, q.revision or spec.revision), spec)
    files: dict[str, dict[str, Any]] = {}
    extra: dict[str, list[dict[str, Any]]] = {}
    for (repo, revision), spec in repos.items():
        try:
            info = api.model_info(repo, revision=revision, files_metadata=True, token=token)
        except Exception as exc:
            raise hub.translate_error(exc, f"the file list of {repo}", repo) from exc
        for s in info.siblings or []:
            if not s.rfilename.endswith(".gguf"):
                continue
            sha = s.lfs.sha256 if s.lfs else None
            size = s.lfs.size if s.lfs else s.size
            files[_file_key(repo, s.rfilename)] = {"size": size, "sha256": sha, "commit": info.sha}
            label = quant_label(s.rfilename)
            if discover and repo == spec.repo and label and "mmproj" not in s.rfilename.lower():
                extra.setdefault(repo, []).append({"name": label, "file": s.rfilename, "size": size, "sha256": sha})
    overlay = {"schema": SCHEMA, "refreshed_at": time.time(), "files": files, "extra_quants": extra}
    if save:
        write_json_atomic(overlay_path(), overlay)
    return apply_overlay(base, overlay)
