"""Reading and pruning single files in the standard HF cache without breaking other users of it.

`huggingface_hub.scan_cache_dir().delete_revisions()` deletes whole snapshots; a model here is one
file of a repo (one quant), so removal is done file by file: drop the snapshot entries for that
file, then the blob only if no other snapshot entry still points at it (another revision, or a
second filename with identical bytes), then prune empty folders and dangling refs.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from atomicchat.models import hub


@dataclass(frozen=True)
class Removed:
    paths: tuple[str, ...]
    freed_bytes: int


def _snapshot_entries(folder: Path, filename: str) -> list[Path]:
    snapshots = folder / "snapshots"
    if not snapshots.is_dir():
        return []
    rel = Path(*filename.split("/"))
    return [snap / rel for snap in snapshots.iterdir() if os.path.lexists(snap / rel)]


def _linked_blobs(folder: Path) -> set[str]:
    """Real paths of every blob some snapshot entry still points to."""
    linked: set[str] = set()
    for root, _dirs, files in os.walk(folder / "snapshots"):
        for name in files:
            path = Path(root) / name
            if path.is_symlink():
                linked.add(os.path.realpath(path))
    return linked


def find_cached(repo_id: str, filename: str, revision: str, cache: Path | None = None) -> Path | None:
    """Path of the cached file for `revision` (branch, tag or commit), or None; never uses the network."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, filename, cache_dir=str(cache or hub.cache_dir()), revision=revision)
    return Path(found) if isinstance(found, str) and os.path.isfile(found) else None


def blob_path(repo_id: str, etag: str, cache: Path | None = None) -> Path:
    return hub.repo_folder(repo_id, cache) / "blobs" / etag


def remove_file(repo_id: str, filename: str, cache: Path | None = None) -> Removed:
    """Delete every cached copy of `filename` in `repo_id`; return what went and how many bytes it freed."""
    cache = cache or hub.cache_dir()
    folder = hub.repo_folder(repo_id, cache)
    removed: list[str] = []
    freed = 0
    candidates: set[str] = set()
    for entry in _snapshot_entries(folder, filename):
        if entry.is_symlink():
            candidates.add(os.path.realpath(entry))
        elif entry.is_file():  # no-symlink cache (Windows without developer mode): the entry is the file
            freed += entry.stat().st_size
        entry.unlink()
        removed.append(str(entry))
    still_linked = _linked_blobs(folder)
    for blob in sorted(candidates - still_linked):
        if os.path.isfile(blob):
            freed += os.path.getsize(blob)
            os.unlink(blob)
            removed.append(blob)
        partial = blob + ".incomplete"
        if os.path.isfile(partial):
            freed += os.path.getsize(partial)
            os.unlink(partial)
            removed.append(partial)
    _prune(folder, cache)
    return Removed(tuple(removed), freed)


def _prune(folder: Path, cache: Path) -> None:
    """Remove empty snapshot folders, refs to commits that no longer have a snapshot, and an empty repo."""
    snapshots = folder / "snapshots"
    if snapshots.is_dir():
        for root, _dirs, _files in os.walk(snapshots, topdown=False):
            if Path(root) != snapshots and not os.listdir(root):
                os.rmdir(root)
    refs = folder / "refs"
    if refs.is_dir():
        for ref in [p for p in refs.rglob("*") if p.is_file()]:
            commit = ref.read_text().strip()
            if not (snapshots / commit).is_dir():
                ref.unlink()
    blobs = folder / "blobs"
    has_blobs = blobs.is_dir() and any(blobs.iterdir())
    has_snapshots = snapshots.is_dir() and any(snapshots.iterdir())
    if not has_blobs and not has_snapshots and folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(cache / ".locks" / folder.name, ignore_errors=True)
