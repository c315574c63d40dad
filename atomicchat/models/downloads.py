"""One-click download of a model pair (target + draft as one job) into the standard HF cache.

Why not just `hf_hub_download`: recent huggingface_hub (2.x, installed here; 1.0 still resumed) writes
each attempt to a uniquely named temp file and deletes it on any failure, so a cancelled, crashed or
killed download restarts from zero; a 6 GB model must not. The job therefore uses huggingface_hub's own pieces around a *stable*
partial file: `get_hf_file_metadata` (HEAD: etag, commit, size, auth/redirect handling), a streamed GET
(its HTTP client, retries, and Range resume from `resume_size`) writing to
`blobs/{etag}.incomplete` (the name older huggingface_hub resumed from), then `hf_hub_download` pinned to the commit to create the snapshot link
and bookkeeping the same way every other tool reading that cache expects. No HTTP is written here.

Per file: found in the registry or the cache and verified -> no network at all; else HEAD, free-disk
check for the whole job, transfer (resuming any partial), sha256 check against the catalog or the
Hub's LFS hash (a mismatch deletes the file and says so), move into place, register. Then the pair
is validated (engine.validate.check_pair) and linked in the registry.

Progress: `progress_cb(Progress)` is called on the downloading thread, at most ~10 times a second
and on every phase change. Cancel: set `cancel_event` from any thread; the job stops at the next
chunk (CHUNK_SIZE bytes, or a stalled read timing out) and raises DownloadCancelled; the partial
file is kept, so the next run resumes it.

API:
    job = DownloadJob(pair, quant="Q4_K_M", draft_quant="Q8_0")   # registry=Registry() by default
    job.files                                                      # (FileRef target, FileRef draft)
    result = job.run(progress_cb=print, cancel_event=threading.Event())   # JobResult
    result.target_path, result.draft_path, result.paired, result.pair_problem
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal, cast

from atomicchat.models import cachefs, hardware, hub
from atomicchat.models.catalog import FileRef, ModelPair
from atomicchat.models.errors import (
    BusyError,
    CatalogOutdatedError,
    ChecksumMismatchError,
    DownloadCancelled,
    HubError,
    ModelsError,
    NotEnoughDiskError,
    OfflineError,
)
from atomicchat.models.registry import InstalledFile, Registry, check_files, stat_of
from atomicchat.models.transfer import HashingSink, Meter, chunk_size, hash_prefix, quiet_bar, sha256_file, stream_get

CHUNK_SIZE = 1024 * 1024  # huggingface_hub reads 10 MiB per chunk by default; 1 MiB keeps cancel prompt
DISK_MARGIN = 256 * 1024 * 1024  # keep this much free after the download
PROGRESS_INTERVAL = 0.1
MAX_RESUMES = 5  # reconnects after a broken transfer, each one only if the last made progress
RESUME_PAUSE = 0.5
Phase = Literal["checking", "downloading", "verifying", "done"]
ProgressCallback = Callable[["Progress"], None]


@dataclass(frozen=True)
class Progress:
    phase: Phase
    filename: str
    file_index: int  # 0-based position in job.files
    file_count: int
    file_done: int
    file_total: int
    done: int  # bytes of the whole job on disk now
    total: int
    speed: float  # bytes per second, smoothed
    eta: float | None  # seconds left at the current speed
    resumed_from: int = 0  # bytes of this file that were already on disk when it started

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


@dataclass(frozen=True)
class FileResult:
    ref: FileRef
    path: Path
    sha256: str | None
    size: int
    fetched: int  # bytes transferred by this run
    resumed_from: int
    already_present: bool


@dataclass(frozen=True)
class JobResult:
    pair_id: str
    files: tuple[FileResult, ...]
    paired: bool
    pair_problem: str | None

    def path(self, role: str) -> Path | None:
        return next((f.path for f in self.files if f.ref.role == role), None)

    @property
    def target_path(self) -> Path | None:
        return self.path("target")

    @property
    def draft_path(self) -> Path | None:
        return self.path("draft")


@dataclass(frozen=True)
class _Remote:
    url: str
    etag: str
    commit: str
    size: int
    expected_sha: str | None
    headers: dict[str, str]


_SAFE_ETAG = re.compile(r"[A-Za-z0-9._-]{1,128}")


def _refuse_link_local(url: str, filename: str) -> None:
    """A redirect to 169.254.0.0/16 or fe80::/10 (cloud metadata services live there) is refused
    before any connection is made to it."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").strip("[]")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return  # a name: the Hub's CDN; names are not resolved here
    if ip.is_link_local:
        raise HubError(f"The download of {filename} was redirected to {host}, a link-local address; Atomic Chat "
                       "refuses to fetch from there.")


class DownloadJob:
    def __init__(
        self,
        pair: ModelPair | None = None,
        quant: str | None = None,
        draft_quant: str | None = None,
        *,
        files: Sequence[FileRef] | None = None,
        include_draft: bool = True,
        token: str | bool | None = None,
        registry: Registry | None = None,
        chunk_size: int = CHUNK_SIZE,
    ) -> None:
        if files is None:
            if pair is None:
                raise ValueError("DownloadJob needs a pair or a list of files")
            target, draft = pair.files(quant, draft_quant)
            files = (target, draft) if include_draft else (target,)
        self.files: tuple[FileRef, ...] = tuple(files)
        self.pair_id = pair.id if pair else (self.files[0].pair_id if self.files else "")
        self.token = token
        self.registry = registry if registry is not None else Registry()
        self.chunk_size = chunk_size
        self._cb: ProgressCallback | None = None
        self._cancel = threading.Event()
        self._sizes: list[int] = [f.size or 0 for f in self.files]
        self._done: list[int] = [0 for _ in self.files]
        self._meter = Meter()
        self._last_emit = 0.0
        self._resumed: list[int] = [0 for _ in self.files]

    # ------------------------------------------------------------ progress

    def _emit(self, phase: Phase, i: int, force: bool = False) -> None:
        if self._cb is None:
            return
        now = time.monotonic()
        if not force and now - self._last_emit < PROGRESS_INTERVAL:
            return
        self._last_emit = now
        total = sum(self._sizes)
        done = sum(self._done)
        self._cb(
            Progress(
                phase=phase,
                filename=self.files[i].filename,
                file_index=i,
                file_count=len(self.files),
                file_done=self._done[i],
                file_total=self._sizes[i],
                done=done,
                total=total,
                speed=self._meter.speed,
                eta=self._meter.eta(max(total - done, 0)) if phase == "downloading" else None,
                resumed_from=self._resumed[i],
            )
        )

    # ------------------------------------------------------------ run

    def run(self, progress_cb: ProgressCallback | None = None, cancel_event: threading.Event | None = None) -> JobResult:
        """Fetch what is missing, verify everything, register and pair. Blocking; call from a worker."""
        self._cb = progress_cb
        self._cancel = cancel_event or threading.Event()
        results: list[FileResult | None] = [self._local(i) for i in range(len(self.files))]
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:
            if hub.is_offline():
                names = ", ".join(self.files[i].filename for i in missing)
                raise OfflineError(f"{names} is not downloaded yet and Atomic Chat is in offline mode (HF_HUB_OFFLINE is set).")
            remotes = {i: self._resolve(self.files[i]) for i in missing}
            for i, r in remotes.items():
                self._sizes[i] = r.size
            self._check_disk(remotes)
            with chunk_size(self.chunk_size):
                for i in missing:
                    results[i] = self._fetch(i, remotes[i])
        final = [r for r in results if r is not None]
        paired, problem = self._pair(final)
        last = len(self.files) - 1
        self._emit("done", last, force=True)
        return JobResult(self.pair_id, tuple(final), paired, problem)

    # ------------------------------------------------------------ local (no network)

    def _local(self, i: int) -> FileResult | None:
        ref = self.files[i]
        known = self.registry.get(ref.key)
        if known and known.verified and Registry.is_intact(known) and (not ref.sha256 or known.sha256 == ref.sha256):
            self._sizes[i] = self._done[i] = known.size
            return FileResult(ref, Path(known.path), known.sha256, known.size, 0, 0, True)
        cache = hub.cache_dir()
        path = cachefs.find_cached(ref.repo, ref.filename, ref.revision, cache)
        if path is None:
            return None
        blob_name = os.path.basename(os.path.realpath(path))
        expected = ref.sha256 or (blob_name if hub.is_sha256(blob_name) else None)
        self._sizes[i] = os.path.getsize(path)
        self._emit("verifying", i, force=True)
        digest = sha256_file(str(path), self._progress_bytes(i, "verifying"), self._cancel)
        if expected and digest != expected:
            if hub.is_sha256(blob_name) and digest != blob_name:  # bytes differ from their own name: damaged
                cachefs.remove_file(ref.repo, ref.filename, cache)
                self._done[i] = 0
                return None
            raise CatalogOutdatedError(
                f"The cached {ref.filename} is a different version than the catalog names; refresh the catalog."
            )
        self._register(ref, path, digest, verified=bool(expected), commit=_snapshot_commit(path))
        return FileResult(ref, path, digest, self._sizes[i], 0, 0, True)

    def _progress_bytes(self, i: int, phase: Phase) -> Callable[[int], None]:
        self._done[i] = 0

        def on_bytes(n: int) -> None:
            self._done[i] += n
            self._emit(phase, i)

        return on_bytes

    # ------------------------------------------------------------ network

    def _resolve(self, ref: FileRef) -> _Remote:
        """HEAD the file: where to GET it, its etag (sha256 for LFS), commit and size."""
        from huggingface_hub import get_hf_file_metadata, hf_hub_url
        from huggingface_hub.utils import build_hf_headers

        from atomicchat import __version__

        base = hub.endpoint()
        url = hf_hub_url(ref.repo, ref.filename, revision=ref.revision, endpoint=base)
        headers = build_hf_headers(token=self.token, library_name="atomicchat", library_version=__version__)
        try:
            meta = get_hf_file_metadata(url, token=self.token, headers=dict(headers), endpoint=base)
        except Exception as exc:
            raise hub.translate_error(exc, ref.filename, ref.repo) from exc
        if not meta.etag or not meta.commit_hash:
            raise hub.translate_error(RuntimeError("no ETag / X-Repo-Commit in the answer"), ref.filename, ref.repo)
        if not _SAFE_ETAG.fullmatch(meta.etag) or ".." in meta.etag:  # it becomes a file name in the cache
            raise HubError(f"The server answered with an unusable file id (ETag) for {ref.filename}; nothing was "
                           "downloaded. If this is not the Hugging Face Hub, check HF_ENDPOINT.")
        size = meta.size if meta.size is not None else (ref.size or 0)
        etag_sha = meta.etag if hub.is_sha256(meta.etag) else None
        if ref.sha256 and etag_sha and ref.sha256 != etag_sha:
            raise CatalogOutdatedError(
                f"{ref.filename} in {ref.repo} has changed on the Hub since this catalog was made "
                "(its sha256 differs); refresh the catalog, then pull again."
            )
        location = meta.location or url
        _refuse_link_local(location, ref.filename)
        if not hub.same_host(location, url):
            headers.pop("authorization", None)  # signed CDN URL: never send the token off the Hub
        return _Remote(location, meta.etag, meta.commit_hash, int(size), ref.sha256 or etag_sha, dict(headers))

    def _partial(self, ref: FileRef, remote: _Remote) -> Path:
        return cachefs.blob_path(ref.repo, remote.etag, hub.cache_dir()).with_name(remote.etag + ".incomplete")

    def _check_disk(self, remotes: dict[int, _Remote]) -> None:
        need = 0
        for i, r in remotes.items():
            part = self._partial(self.files[i], r)
            have = part.stat().st_size if part.exists() else 0
            need += max(r.size - have, 0)
        cache = hub.cache_dir()
        free = hardware.free_disk_bytes(cache)
        if free < need + DISK_MARGIN:
            gb = 1024**3
            raise NotEnoughDiskError(
                f"Not enough free disk space: the download needs {need / gb:.2f} GiB (plus {DISK_MARGIN / gb:.2f} GiB "
                f"to spare), but only {free / gb:.2f} GiB is free at {cache}. Free up space or pick a smaller quant."
            )

    def _fetch(self, i: int, remote: _Remote) -> FileResult:
        from filelock import FileLock, Timeout

        ref = self.files[i]
        cache = hub.cache_dir()
        blob = cachefs.blob_path(ref.repo, remote.etag, cache)
        partial = self._partial(ref, remote)
        blob.parent.mkdir(parents=True, exist_ok=True)
        lock_path = cache / ".locks" / hub.repo_folder(ref.repo, cache).name / f"{remote.etag}.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        digest, fetched, resumed = self._reuse_blob(i, blob, remote), 0, 0
        if digest is None:
            try:
                with FileLock(str(lock_path), timeout=2):  # the lock huggingface_hub takes for this blob
                    digest, fetched, resumed = self._transfer(i, remote, partial)
                    os.replace(partial, blob)
            except Timeout as exc:
                raise BusyError(
                    f"{ref.filename} is being downloaded by another program right now; wait for it to finish."
                ) from exc
        path = self._finalize(ref, remote, cache)
        self._register(ref, path, digest, verified=bool(remote.expected_sha), commit=remote.commit)
        return FileResult(ref, path, digest, remote.size, fetched, resumed, fetched == 0 and resumed == 0)

    def _reuse_blob(self, i: int, blob: Path, remote: _Remote) -> str | None:
        """The same bytes may already be cached under another revision or by another tool."""
        if not blob.is_file():
            return None
        self._emit("verifying", i, force=True)
        digest = sha256_file(str(blob), self._progress_bytes(i, "verifying"), self._cancel)
        if remote.expected_sha and digest != remote.expected_sha:
            blob.unlink()  # damaged: fetch it again
            self._done[i] = 0
            return None
        return digest

    def _transfer(self, i: int, remote: _Remote, partial: Path) -> tuple[str, int, int]:
        ref = self.files[i]
        with open(partial, "r+b" if partial.exists() else "w+b") as raw:
            fh = cast(BinaryIO, raw)
            have = fh.seek(0, os.SEEK_END)
            if have > remote.size:  # not ours or damaged: start over
                fh.truncate(0)
                have = fh.seek(0)
            self._resumed[i] = have
            self._done[i] = 0
            if have:
                self._emit("checking", i, force=True)
            hasher = hash_prefix(fh, have, self._progress_bytes(i, "checking") if have else None)
            self._done[i] = have
            fetched = 0

            def on_write(n: int) -> None:
                nonlocal fetched
                fetched += n
                self._done[i] += n
                self._meter.add(n)
                self._emit("downloading", i)

            def on_rewind(pos: int) -> None:
                self._done[i] = pos

            sink = HashingSink(fh, hasher, on_write, on_rewind, self._cancel, ref.filename)
            self._meter.restart()
            self._emit("downloading", i, force=True)
            if self._cancel.is_set():
                raise DownloadCancelled(f"Download of {ref.filename} cancelled; pull again to resume where it stopped.")
            attempts = 0
            while True:
                before = fetched
                try:
                    stream_get(remote.url, sink, fh.tell(), remote.headers, remote.size or None)
                    break
                except ModelsError:
                    raise
                except hub.network_errors() as exc:
                    # huggingface_hub retries some breaks itself (2.x also mid-body, 1.x not): resume
                    # here as long as each attempt made progress, so both behave the same.
                    attempts += 1
                    if fetched > before and attempts <= MAX_RESUMES and not self._cancel.wait(RESUME_PAUSE):
                        continue
                    if self._cancel.is_set():
                        raise DownloadCancelled(f"Download of {ref.filename} cancelled; pull again to resume.") from exc
                    raise OfflineError(
                        f"The connection to the Hub was lost while downloading {ref.filename}; "
                        "pull again to resume where it stopped."
                    ) from exc
                except Exception as exc:
                    raise hub.translate_error(exc, ref.filename, ref.repo) from exc
            fh.flush()
            os.fsync(fh.fileno())
            digest = sink.hasher.hexdigest()
        self._emit("verifying", i, force=True)
        if remote.expected_sha and digest != remote.expected_sha:
            partial.unlink(missing_ok=True)
            raise ChecksumMismatchError(
                f"{ref.filename} arrived damaged (sha256 {digest[:16]} instead of {remote.expected_sha[:16]}). "
                "The bad file was deleted; pull again to download it afresh."
            )
        return digest, fetched, have

    def _finalize(self, ref: FileRef, remote: _Remote, cache: Path) -> Path:
        """Let huggingface_hub link the blob into its snapshot (it finds the blob, fetches nothing)."""
        from huggingface_hub import hf_hub_download

        try:
            path = hf_hub_download(  # type: ignore[call-overload]
                ref.repo,
                ref.filename,
                revision=remote.commit,
                cache_dir=str(cache),
                endpoint=hub.endpoint(),
                token=self.token,
                **quiet_bar(hf_hub_download),
            )
        except Exception as exc:
            raise hub.translate_error(exc, ref.filename, ref.repo) from exc
        if ref.revision != remote.commit:  # remember which commit `main` (or the tag) meant
            from atomicchat.models.atomic import write_text_atomic

            write_text_atomic(hub.repo_folder(ref.repo, cache) / "refs" / ref.revision, remote.commit)
        return Path(str(path))

    # ------------------------------------------------------------ registry

    def _register(self, ref: FileRef, path: Path, digest: str | None, *, verified: bool, commit: str | None) -> None:
        size, mtime = stat_of(path)
        name = ref.filename.rsplit("/", 1)[-1].removesuffix(".gguf")
        self.registry.put(
            InstalledFile(
                key=ref.key,
                role=ref.role,
                name=name,
                path=str(path),
                size=size,
                mtime_ns=mtime,
                source="hub",
                verified=verified,
                sha256=digest,
                repo=ref.repo,
                filename=ref.filename,
                revision=ref.revision,
                commit=commit,
                pair_id=ref.pair_id,
                quant=ref.quant,
                added_at=time.time(),
                note="" if verified else "no reference sha256 to compare with",
            )
        )

    def _pair(self, results: list[FileResult]) -> tuple[bool, str | None]:
        target = next((r for r in results if r.ref.role == "target"), None)
        draft = next((r for r in results if r.ref.role == "draft"), None)
        if target is None or draft is None:
            return False, None
        reason = check_files(target.path, draft.path)
        if reason:
            return False, reason
        self.registry.link(target.ref.key, draft.ref.key, self.pair_id or None)
        return True, None


def _snapshot_commit(path: Path) -> str | None:
    """The commit folder of a path inside `snapshots/{commit}/...`."""
    parts = Path(path).parts
    return parts[parts.index("snapshots") + 1] if "snapshots" in parts[:-1] else None


def pending_bytes(job: DownloadJob) -> int:
    """Bytes the job would still fetch, from catalog sizes and local state only (no network)."""
    total = 0
    for ref in job.files:
        known = job.registry.get(ref.key)
        if known and Registry.is_intact(known):
            continue
        if cachefs.find_cached(ref.repo, ref.filename, ref.revision) is None:
            total += ref.size or 0
    return total
