"""Search the Hugging Face Hub for GGUF models, group their files into quants, and read a remote
file's GGUF header with an HTTP Range request so the fit estimate needs no download.

Results are cached in the data folder: searching offline shows what the last search found, and
says so in one line. Every failure is a ModelsError with a sentence (hub.translate_error).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from atomicchat import paths
from atomicchat.models import hub
from atomicchat.models.catalog import quant_label
from atomicchat.models.errors import ModelsError, OfflineError

SEARCH_LIMIT = 20
SEARCH_TIMEOUT_S = 10.0
HEADER_FIRST_READ = 4 << 20  # most headers fit; a 248k-token vocabulary needs ~8 MiB
HEADER_MAX_READ = 64 << 20
_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_SPLIT_RE = re.compile(r"^(?P<stem>.+)-(?P<part>\d{5})-of-(?P<total>\d{5})\.gguf$", re.IGNORECASE)
_HUB_HOSTS = ("huggingface.co", "hf.co", "www.huggingface.co")


@dataclass(frozen=True)
class Query:
    """A repo id (from `owner/name` or a Hub URL) or free text."""

    repo: str | None = None
    text: str | None = None


def parse_query(raw: str, endpoint: str | None = None) -> Query:
    """`qwen3.5`, `unsloth/Qwen3.5-9B-GGUF` or `https://huggingface.co/unsloth/Qwen3.5-9B-GGUF/blob/main/x.gguf`."""
    text = raw.strip()
    if not text:
        return Query()
    if "://" in text:
        u = urlsplit(text)
        hosts = {*_HUB_HOSTS, urlsplit(endpoint or hub.endpoint()).netloc.lower()}
        parts = [p for p in u.path.split("/") if p]
        if u.netloc.lower() in hosts and len(parts) >= 2 and parts[0] not in ("datasets", "spaces"):
            return Query(repo=f"{parts[0]}/{parts[1]}")
        return Query(text=text)
    if _REPO_RE.match(text):
        return Query(repo=text)
    return Query(text=text)


@dataclass(frozen=True)
class QuantFile:
    """One downloadable quant: a single .gguf, or the parts of a split one (`-00001-of-00003`)."""

    quant: str
    files: tuple[str, ...]
    size: int | None
    sha256: tuple[str | None, ...] = ()

    @property
    def split(self) -> bool:
        return len(self.files) > 1


@dataclass(frozen=True)
class RepoHit:
    repo_id: str
    downloads: int = 0
    likes: int = 0
    license: str = ""
    gated: bool = False
    quants: tuple[QuantFile, ...] | None = None  # None until the repo's files are listed
    mmproj: tuple[str, ...] = ()  # vision projectors: not chat models, never offered as one
    drafts: tuple[QuantFile, ...] = ()  # DFlash drafts shipped in the same repo


@dataclass(frozen=True)
class SearchResult:
    hits: tuple[RepoHit, ...]
    fetched_at: float
    offline: bool = False
    note: str = ""  # one line for the user, e.g. why cached results are shown


def _is_draft_file(name: str) -> bool:
    low = name.lower()
    return "dflash" in low or "eagle" in low


def group_files(siblings: list[tuple[str, int | None, str | None]]) -> tuple[list[QuantFile], list[str], list[QuantFile]]:
    """(filename, size, sha256) rows -> (chat-model quants, mmproj files, draft quants), sorted by size."""
    singles: list[QuantFile] = []
    drafts: list[QuantFile] = []
    mmproj: list[str] = []
    parts: dict[str, list[tuple[int, str, int | None, str | None]]] = {}
    totals: dict[str, int] = {}
    for name, size, sha in siblings:
        base = name.rsplit("/", 1)[-1]
        if not base.lower().endswith(".gguf"):
            continue
        if base.lower().startswith("mmproj") or "-mmproj" in base.lower():
            mmproj.append(name)
            continue
        m = _SPLIT_RE.match(name)
        if m:
            parts.setdefault(m["stem"], []).append((int(m["part"]), name, size, sha))
            totals[m["stem"]] = int(m["total"])
            continue
        qf = QuantFile(quant_label(base) or base.removesuffix(".gguf"), (name,), size, (sha,))
        (drafts if _is_draft_file(base) else singles).append(qf)
    for stem, rows in parts.items():
        rows.sort()
        if [r[0] for r in rows] != list(range(1, totals[stem] + 1)):
            continue  # an incomplete split set cannot be loaded; do not offer it
        sizes = [r[2] for r in rows]
        size = sum(s for s in sizes if s) if all(s is not None for s in sizes) else None
        qf = QuantFile(quant_label(stem + ".gguf") or stem.rsplit("/", 1)[-1], tuple(r[1] for r in rows), size,
                       tuple(r[3] for r in rows))
        (drafts if _is_draft_file(stem) else singles).append(qf)
    key = lambda q: (q.size is None, q.size or 0, q.quant)  # noqa: E731
    return sorted(singles, key=key), sorted(mmproj), sorted(drafts, key=key)


def _license(tags: list[str] | None, card: Any) -> str:
    if isinstance(card, dict) and isinstance(card.get("license"), str):
        return card["license"]
    for t in tags or []:
        if t.startswith("license:"):
            return t.split(":", 1)[1]
    return ""


def _hit_from_row(row: dict[str, Any]) -> RepoHit:
    """A row of GET /api/models (the Hub's JSON as is)."""
    return RepoHit(
        repo_id=str(row["id"]),
        downloads=int(row.get("downloads") or 0),
        likes=int(row.get("likes") or 0),
        license=_license(row.get("tags"), row.get("cardData")),
        gated=bool(row.get("gated")),
    )


def _hit(info: Any, with_files: bool) -> RepoHit:
    card = getattr(info, "card_data", None) or getattr(info, "cardData", None)
    card = card.to_dict() if hasattr(card, "to_dict") else card
    quants = mmproj = drafts = None
    if with_files:
        rows = []
        for s in getattr(info, "siblings", None) or []:
            lfs = getattr(s, "lfs", None)
            sha = getattr(lfs, "sha256", None) if lfs is not None else None
            if isinstance(lfs, dict):
                sha = lfs.get("sha256")
            rows.append((s.rfilename, getattr(s, "size", None), sha))
        q, mm, dr = group_files(rows)
        quants, mmproj, drafts = tuple(q), tuple(mm), tuple(dr)
    return RepoHit(
        repo_id=info.id,
        downloads=int(getattr(info, "downloads", 0) or 0),
        likes=int(getattr(info, "likes", 0) or 0),
        license=_license(getattr(info, "tags", None), card),
        gated=bool(getattr(info, "gated", False)),
        quants=quants,
        mmproj=mmproj or (),
        drafts=drafts or (),
    )


# ------------------------------------------------------------------ cache


def _cache_file(kind: str, key: str) -> Path:
    digest = hashlib.sha256(key.lower().encode()).hexdigest()[:24]
    folder = paths.data_dir() / "hub-cache"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{kind}-{digest}.json"


def _save(kind: str, key: str, result: SearchResult) -> None:
    path = _cache_file(kind, key)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(result)), encoding="utf-8")
    tmp.replace(path)


def _load(kind: str, key: str) -> SearchResult | None:
    try:
        data = json.loads(_cache_file(kind, key).read_text(encoding="utf-8"))
        hits = []
        for h in data["hits"]:
            def qf(rows: list[dict[str, Any]] | None) -> tuple[QuantFile, ...] | None:
                if rows is None:
                    return None
                return tuple(QuantFile(r["quant"], tuple(r["files"]), r["size"], tuple(r["sha256"])) for r in rows)

            hits.append(RepoHit(h["repo_id"], h["downloads"], h["likes"], h["license"], h["gated"], qf(h["quants"]),
                                tuple(h["mmproj"]), qf(h["drafts"]) or ()))
        return SearchResult(tuple(hits), float(data["fetched_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _offline_result(kind: str, key: str, why: str) -> SearchResult:
    cached = _load(kind, key)
    if cached is None:
        what = f"The file list of {key} is" if kind == "repo" else "No earlier results for this search are"
        raise OfflineError(f"{why} {what} not saved on this computer." if kind == "repo" else
                           f"{why} {what} saved on this computer.")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(cached.fetched_at))
    return SearchResult(cached.hits, cached.fetched_at, offline=True, note=f"{why} Showing results saved {when}.")


def _api() -> Any:
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.endpoint())


def _offline_reason(exc: BaseException | None) -> str:
    if exc is None:
        return "Offline mode is on, so the Hub was not asked."
    host = urlsplit(hub.endpoint()).netloc
    return f"The Hugging Face Hub ({host}) cannot be reached."


def _fetch(kind: str, key: str, what: str, repo: str, call: Any) -> SearchResult:
    """Run `call()` online and cache it; offline or unreachable, fall back to the cache."""
    if hub.is_offline():
        return _offline_result(kind, key, _offline_reason(None))
    try:
        result = SearchResult(tuple(call()), time.time())
    except BaseException as exc:  # noqa: BLE001 - translated below
        err = hub.translate_error(exc, what, repo)
        if isinstance(err, OfflineError):
            return _offline_result(kind, key, _offline_reason(exc))
        raise err from exc
    _save(kind, key, result)
    return result


def search(raw: str, limit: int = SEARCH_LIMIT) -> SearchResult:
    """Free text -> GGUF repos by downloads; a repo id or URL -> that repo with its quant files."""
    q = parse_query(raw)
    if q.repo:
        return repo_details(q.repo)
    if not q.text:
        raise ModelsError("Type a model name (e.g. qwen3.5), an owner/name repo id, or a Hub link.")

    def call() -> list[RepoHit]:
        # One request with a timeout, not HfApi.list_models: its retries with backoff take 23 s to
        # report an unreachable Hub, and a search box must answer quickly.
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

        params = [("search", q.text), ("filter", "gguf"), ("sort", "downloads"), ("direction", "-1"),
                  ("limit", str(limit))] + [("expand", e) for e in ("downloads", "likes", "gated", "tags", "cardData")]
        r = get_session().get(f"{hub.endpoint()}/api/models", params=params, headers=build_hf_headers(),
                              timeout=SEARCH_TIMEOUT_S)
        hf_raise_for_status(r)
        return [_hit_from_row(row) for row in r.json() if isinstance(row, dict) and row.get("id")]

    return _fetch("search", q.text, f"search results for '{q.text}'", q.text, call)


def repo_details_online(repo_id: str) -> RepoHit:
    info = _api().model_info(repo_id, files_metadata=True, expand=None)
    return _hit(info, with_files=True)


def repo_details(repo_id: str) -> SearchResult:
    """One repo with its quants (cached for offline browsing)."""
    return _fetch("repo", repo_id, "the file list", repo_id, lambda: [repo_details_online(repo_id)])


# ------------------------------------------------------------------ remote header


def remote_header_bytes(repo_id: str, filename: str, revision: str = "main") -> tuple[bytes, int]:
    """The first bytes of a Hub file that hold its whole GGUF header, and the file's size.
    Range requests: 4 MiB first, doubling up to 64 MiB."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    from atomicchat.engine.gguf_header import HeaderTruncated, parse_header_bytes

    if hub.is_offline():
        raise OfflineError(f"Reading the header of {filename} needs the Hub, and offline mode is on.")
    url = hf_hub_url(repo_id, filename, revision=revision, endpoint=hub.endpoint())
    want = HEADER_FIRST_READ
    while True:
        try:
            r = get_session().get(url, headers={**build_hf_headers(), "Range": f"bytes=0-{want - 1}"},
                                  follow_redirects=True, timeout=30)
            hf_raise_for_status(r)
        except BaseException as exc:  # noqa: BLE001
            raise hub.translate_error(exc, f"the header of {filename}", repo_id) from exc
        data = r.content[:want]
        rng = r.headers.get("content-range", "")
        total = int(rng.rsplit("/", 1)[1]) if "/" in rng and rng.rsplit("/", 1)[1].isdigit() else len(r.content)
        try:
            parse_header_bytes(data, filename, total)
            return data, total
        except HeaderTruncated:
            if want >= HEADER_MAX_READ or want >= total:
                raise ModelsError(f"The header of {filename} is larger than {HEADER_MAX_READ >> 20} MiB; "
                                  "the fit is estimated from the file size instead.") from None
            want *= 2


def remote_header(repo_id: str, filename: str, revision: str = "main") -> Any:
    """The parsed GGUF header (atomicchat.engine.gguf_header.GGUFHeader) of a Hub file."""
    from atomicchat.engine.gguf_header import parse_header_bytes

    data, total = remote_header_bytes(repo_id, filename, revision)
    return parse_header_bytes(data, filename, total)


def file_refs(repo_id: str, quant: QuantFile, role: str = "target", revision: str = "main") -> list[Any]:
    """What the download job fetches for a searched quant: one FileRef per file (every part of a split)."""
    from atomicchat.models.catalog import FileRef

    return [
        FileRef(role=role, pair_id=f"hub:{repo_id}", quant=quant.quant, repo=repo_id, revision=revision, filename=name,
                size=None if quant.split else quant.size, sha256=sha, size_exact=not quant.split and quant.size is not None)
        for name, sha in zip(quant.files, quant.sha256 or (None,) * len(quant.files), strict=False)
    ]


# ------------------------------------------------------------------ fit and pairing from headers


def fit_for(repo_id: str, quant: QuantFile, n_ctx: int = 8192, draft: tuple[str, str, int | None] | None = None,
            hardware: Any = None) -> Any:
    """FitEstimate for a quant before download: the shapes from its remote header (first part of a
    split file), the weights from the Hub's file sizes; with `draft` = (repo, file, size) included."""
    from atomicchat.models.fit import estimate_files, facts_from_header

    facts = facts_from_header(remote_header(repo_id, quant.files[0]), quant.files[0])
    dfacts = None
    dsize = None
    extra = 0
    if draft is not None:
        try:
            dfacts = facts_from_header(remote_header(draft[0], draft[1]), draft[1])
            dsize = draft[2]
        except ModelsError:  # the draft's header is unreadable: count its weights by size only
            extra = draft[2] or 0
    size = (quant.size + extra) if quant.size is not None else None
    return estimate_files(facts, size, n_ctx, draft=dfacts, draft_size=dsize, hardware=hardware, approx=bool(extra),
                          quant=quant.quant, draft_quant="draft" if draft else None, pair_id=f"hub:{repo_id}")


class _SparseCopy:
    """A temporary file of the remote file's full size holding only its header bytes (sparse on
    disk), so the engine's own checks run on it exactly as on a downloaded file."""

    def __init__(self, data: bytes, total: int, name: str) -> None:
        import tempfile

        self._dir = tempfile.TemporaryDirectory(prefix="atomicchat-header-")
        self.path = Path(self._dir.name) / Path(name).name
        with open(self.path, "wb") as fh:
            fh.write(data)
            fh.truncate(max(total, len(data)))

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()


def pair_reason(target: tuple[str, str], draft: tuple[str, str]) -> str | None:
    """Why the engine would refuse this (repo, file) target + draft pair, read from both remote
    headers with its own checks; None when it would pair them."""
    from atomicchat.engine.errors import EngineError
    from atomicchat.engine.validate import check_pair, inspect_draft, inspect_target

    tdata, ttotal = remote_header_bytes(*target)
    ddata, dtotal = remote_header_bytes(*draft)
    with _SparseCopy(tdata, ttotal, target[1]) as tp, _SparseCopy(ddata, dtotal, draft[1]) as dp:
        try:
            check_pair(inspect_target(tp), inspect_draft(dp))
        except EngineError as exc:
            return str(exc)
    return None
