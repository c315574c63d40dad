"""Installed models: what is on disk, whether it was verified, and which target/draft pairs can run.

Stored as JSON in `data_dir()/models.json`, rewritten atomically under a file lock so the GUI and a
CLI run can both use it. Hub files live in the shared HF cache and are keyed `hf:{repo}/{file}`;
imported files stay where the user keeps them and are keyed `local:{absolute path}`.

`verified` means: Hub file -> its sha256 matched (the catalog's or the Hub's LFS hash); imported
file -> its GGUF header passed atomicchat.engine.validate. A file whose size or mtime changed since
is reported as not intact (`is_intact`), so an edit or truncation is noticed without re-hashing.

API:
    reg = Registry()                           # Registry(path) for another file
    reg.files(), reg.get(key), reg.targets(), reg.drafts()
    reg.pairs()                                # runnable InstalledPair(target, draft, pair_id) list
    reg.import_gguf(path, pair_with=None)      # ImportResult: file, paired_with, not_paired reasons
    reg.remove(key)                            # Removed: frees the HF blob + snapshot link
    reg.resolve(name)                          # key, path or catalog pair id -> list of keys
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from atomicchat.models.atomic import write_json_atomic
from atomicchat.models.cachefs import Removed
from atomicchat.models.errors import RegistryError

log = logging.getLogger(__name__)

SCHEMA = 1
REGISTRY_FILE = "models.json"
Role = Literal["target", "draft"]
Source = Literal["hub", "import"]


@dataclass(frozen=True)
class InstalledFile:
    key: str
    role: Role
    name: str
    path: str
    size: int
    mtime_ns: int
    source: Source
    verified: bool
    sha256: str | None = None
    repo: str | None = None
    filename: str | None = None
    revision: str | None = None
    commit: str | None = None
    pair_id: str | None = None  # catalog pair this file belongs to
    quant: str | None = None
    added_at: float = 0.0
    note: str = ""
    last_used: float = 0.0  # when the app last loaded it (0: never)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InstalledFile:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class InstalledPair:
    target: InstalledFile
    draft: InstalledFile
    pair_id: str | None


@dataclass(frozen=True)
class ImportResult:
    file: InstalledFile
    paired_with: tuple[str, ...] = ()
    not_paired: tuple[tuple[str, str], ...] = ()  # (key, reason in words)


@dataclass
class _State:
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    pairs: list[dict[str, Any]] = field(default_factory=list)


def stat_of(path: str | Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


class Registry:
    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            from atomicchat.paths import data_dir

            path = data_dir() / REGISTRY_FILE
        self.path = Path(path)
        from filelock import FileLock

        self._lock = FileLock(str(self.path) + ".lock", timeout=30)

    # ------------------------------------------------------------ storage

    def _load(self) -> _State:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _State()
        except OSError as exc:
            raise RegistryError(f"Cannot read the list of installed models ({self.path}): {exc.strerror or exc}.") from exc
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise ValueError("unknown format")
            return _State(files=dict(data.get("files") or {}), pairs=list(data.get("pairs") or []))
        except ValueError as exc:
            # A damaged list must not lock the user out: keep it aside for inspection, start afresh.
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            os.replace(self.path, aside)
            log.warning("installed-model list %s was damaged (%s); moved to %s", self.path, exc, aside)
            return _State()

    def _update(self, change: Callable[[_State], Any]) -> Any:
        from filelock import Timeout

        try:
            with self._lock:
                state = self._load()
                result = change(state)
                write_json_atomic(self.path, {"schema": SCHEMA, "files": state.files, "pairs": state.pairs})
                return result
        except Timeout as exc:
            raise RegistryError("Another Atomic Chat process is updating the list of installed models; try again.") from exc
        except OSError as exc:
            raise RegistryError(f"Cannot save the list of installed models ({self.path}): {exc.strerror or exc}.") from exc

    # ------------------------------------------------------------ queries

    def files(self) -> list[InstalledFile]:
        return [InstalledFile.from_dict(v) for v in self._load().files.values()]

    def get(self, key: str) -> InstalledFile | None:
        data = self._load().files.get(key)
        return InstalledFile.from_dict(data) if data else None

    def targets(self) -> list[InstalledFile]:
        return [f for f in self.files() if f.role == "target"]

    def drafts(self) -> list[InstalledFile]:
        return [f for f in self.files() if f.role == "draft"]

    @staticmethod
    def is_intact(f: InstalledFile) -> bool:
        """Still there with the size and mtime it had when it was checked."""
        try:
            return stat_of(f.path) == (f.size, f.mtime_ns)
        except OSError:
            return False

    def pairs(self) -> list[InstalledPair]:
        """Pairs whose two files are both registered and intact on disk: what the app can run."""
        state = self._load()
        out: list[InstalledPair] = []
        for p in state.pairs:
            t, d = state.files.get(p["target"]), state.files.get(p["draft"])
            if not t or not d:
                continue
            tf, df = InstalledFile.from_dict(t), InstalledFile.from_dict(d)
            if self.is_intact(tf) and self.is_intact(df):
                out.append(InstalledPair(tf, df, p.get("pair_id")))
        return out

    def resolve(self, name: str) -> list[str]:
        """Keys matching a registry key, a file path, or a catalog pair id (all its files)."""
        state = self._load()
        if name in state.files:
            return [name]
        try:
            real = os.path.realpath(os.path.expanduser(name))
        except (OSError, ValueError):
            real = name
        by_path = [k for k, v in state.files.items() if os.path.realpath(v["path"]) == real]
        if by_path:
            return by_path
        return [k for k, v in state.files.items() if v.get("pair_id") == name]

    # ------------------------------------------------------------ changes

    def mark_used(self, path: str | Path, when: float | None = None) -> bool:
        """Stamp the entries of this file with the time it was loaded; False when it is not registered."""
        import time as _time

        target = str(Path(path))
        stamp = _time.time() if when is None else when

        def change(state: _State) -> bool:
            hit = False
            for data in state.files.values():
                if data.get("path") == target:
                    data["last_used"] = stamp
                    hit = True
            return hit

        return bool(self._update(change))

    def put(self, f: InstalledFile) -> InstalledFile:
        def change(state: _State) -> None:
            state.files[f.key] = asdict(f)

        self._update(change)
        return f

    def link(self, target_key: str, draft_key: str, pair_id: str | None) -> None:
        """Record that this target and draft were checked compatible."""

        def change(state: _State) -> None:
            for k in (target_key, draft_key):
                if k not in state.files:
                    raise RegistryError(f"No installed model '{k}'.")
            state.pairs[:] = [p for p in state.pairs if (p["target"], p["draft"]) != (target_key, draft_key)]
            state.pairs.append({"target": target_key, "draft": draft_key, "pair_id": pair_id, "checked_at": time.time()})

        self._update(change)

    def unlink_key(self, key: str) -> InstalledFile | None:
        """Forget a file and its pairings, without touching the disk."""

        def change(state: _State) -> dict[str, Any] | None:
            data = state.files.pop(key, None)
            state.pairs[:] = [p for p in state.pairs if key not in (p["target"], p["draft"])]
            return data

        data = self._update(change)
        return InstalledFile.from_dict(data) if data else None

    def remove(self, key: str, *, delete_imported: bool = False) -> Removed:
        """Forget `key` and free its disk space: Hub files leave the HF cache (blob + snapshot link,
        the blob only when nothing else links it); imported files stay unless `delete_imported`."""
        f = self.get(key)
        if f is None:
            raise RegistryError(f"No installed model '{key}'. Run `atomicchat models list` to see the keys.")
        removed = Removed((), 0)
        if f.source == "hub" and f.repo and f.filename:
            from atomicchat.models import cachefs

            removed = cachefs.remove_file(f.repo, f.filename, _cache_of(f))
        elif delete_imported and os.path.isfile(f.path):
            size = os.path.getsize(f.path)
            os.unlink(f.path)
            removed = Removed((f.path,), size)
        self.unlink_key(key)
        return removed

    def import_gguf(self, path: str | Path, *, pair_with: str | None = None) -> ImportResult:
        """Register a GGUF the user already has (validated by its header, never copied) and pair it
        with every installed file of the other role whose architecture and vocabulary match."""
        from atomicchat.engine.gguf_header import read_header
        from atomicchat.engine.validate import DFLASH_ARCH, inspect_draft, inspect_target

        p = Path(path).expanduser().resolve()
        header = read_header(p)  # ModelFileError with the reason if it is not a usable GGUF
        is_draft = header.architecture == DFLASH_ARCH
        info = inspect_draft(p) if is_draft else inspect_target(p)
        size, mtime = stat_of(p)
        entry = InstalledFile(
            key=f"local:{p}",
            role="draft" if is_draft else "target",
            name=info.name,
            path=str(p),
            size=size,
            mtime_ns=mtime,
            source="import",
            verified=True,
            added_at=time.time(),
            note="GGUF header validated; file kept in place",
        )
        self.put(entry)
        others = [self.get(pair_with)] if pair_with else (self.targets() if is_draft else self.drafts())
        if pair_with and others[0] is None:
            raise RegistryError(f"No installed model '{pair_with}' to pair {p.name} with.")
        paired, refused = self._pair_all(entry, [o for o in others if o is not None and o.key != entry.key])
        return ImportResult(entry, tuple(paired), tuple(refused))

    def _pair_all(self, entry: InstalledFile, others: Iterable[InstalledFile]) -> tuple[list[str], list[tuple[str, str]]]:
        paired: list[str] = []
        refused: list[tuple[str, str]] = []
        for other in others:
            if other.role == entry.role:
                refused.append((other.key, f"{Path(other.path).name} is also a {entry.role}; pair a target with a draft."))
                continue
            target, draft = (entry, other) if entry.role == "target" else (other, entry)
            reason = check_files(target.path, draft.path)
            if reason:
                refused.append((other.key, reason))
            else:
                self.link(target.key, draft.key, target.pair_id if target.pair_id == draft.pair_id else None)
                paired.append(other.key)
        return paired, refused


def check_files(target_path: str | Path, draft_path: str | Path) -> str | None:
    """None when the draft can serve this target, else the reason in words (from engine.validate)."""
    from atomicchat.engine.errors import EngineError
    from atomicchat.engine.validate import check_pair, inspect_draft, inspect_target

    try:
        check_pair(inspect_target(target_path), inspect_draft(draft_path))
    except EngineError as exc:
        return str(exc)
    return None


def _cache_of(f: InstalledFile) -> Path:
    """The HF cache folder that holds a Hub file: the parent of its `models--org--name` folder."""
    p = Path(f.path)
    for parent in p.parents:
        if parent.name.startswith("models--"):
            return parent.parent
    from atomicchat.models import hub

    return hub.cache_dir()
