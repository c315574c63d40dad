"""Pieces of one file transfer: the sink huggingface_hub writes into, the speed/ETA meter, and the
two knobs of its `http_get` (chunk size, progress bar).

huggingface_hub's `http_get` streams into any file-like object and resumes with a Range request
from `resume_size`. The sink hashes every byte as it is written (so verifying a 6 GB file costs no
second pass), counts progress, and raises on cancel: a write is the one hook that runs in the
download thread for every chunk, and raising there stops `http_get` without touching its internals.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, Self

from atomicchat.models.errors import DiskFullError, DownloadCancelled

HASH_BLOCK = 4 * 1024 * 1024


def hash_prefix(fh: BinaryIO, length: int, on_bytes: Callable[[int], None] | None = None) -> hashlib._Hash:
    """sha256 state after the first `length` bytes of an open file (used when resuming)."""
    h = hashlib.sha256()
    fh.seek(0)
    left = length
    while left > 0:
        block = fh.read(min(HASH_BLOCK, left))
        if not block:
            break
        h.update(block)
        left -= len(block)
        if on_bytes:
            on_bytes(len(block))
    fh.seek(length)
    return h


def sha256_file(path: str, on_bytes: Callable[[int], None] | None = None, cancel: threading.Event | None = None) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(HASH_BLOCK):
            if cancel is not None and cancel.is_set():
                raise DownloadCancelled("Cancelled while checking a downloaded file; nothing was lost.")
            h.update(block)
            if on_bytes:
                on_bytes(len(block))
    return h.hexdigest()


class HashingSink:
    """File object for http_get: writes, hashes, reports bytes, and honours cancellation."""

    def __init__(
        self,
        fh: BinaryIO,
        hasher: hashlib._Hash,
        on_write: Callable[[int], None],
        on_rewind: Callable[[int], None],
        cancel: threading.Event,
        label: str,
    ) -> None:
        self._fh = fh
        self.hasher = hasher
        self._on_write = on_write
        self._on_rewind = on_rewind
        self._cancel = cancel
        self._label = label

    def write(self, data: bytes) -> int:
        if self._cancel.is_set():
            raise DownloadCancelled(f"Download of {self._label} cancelled; pull again to resume where it stopped.")
        try:
            n = self._fh.write(data)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
                raise DiskFullError(
                    f"The disk filled up while downloading {self._label}. Free some space and pull again: "
                    "the part already downloaded is kept and the download resumes."
                ) from exc
            raise
        self._fh.flush()  # in the file at once: a kill or a cut keeps every byte that arrived
        self.hasher.update(data)
        self._on_write(len(data))
        return n

    def tell(self) -> int:
        return self._fh.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        """http_get rewinds when a server ignores Range; the hash must restart from that point."""
        pos = self._fh.seek(offset, whence)
        self._fh.flush()
        self.hasher = hash_prefix(self._fh, pos)
        self._on_rewind(pos)
        return pos

    def truncate(self, size: int | None = None) -> int:
        return self._fh.truncate(size)

    def flush(self) -> None:
        self._fh.flush()


class Meter:
    """Smoothed transfer speed (exponential average over ~3 s windows) and the ETA it implies.

    Until the first 0.2 s window closes, the speed is the plain average since `restart()`, so a
    progress bar has a number from the first chunk on.
    """

    TAU = 3.0
    WINDOW = 0.2

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._smoothed = 0.0
        self.restart()

    def restart(self) -> None:
        """Call when bytes start flowing (after the HEAD request, before the GET)."""
        self._t = self._clock()
        self._pending = 0

    @property
    def speed(self) -> float:
        return self._smoothed

    def add(self, n: int) -> None:
        now = self._clock()
        self._pending += n
        dt = now - self._t
        if dt >= self.WINDOW:
            inst = self._pending / dt
            alpha = 1 - math.exp(-dt / self.TAU)
            self._smoothed = inst if self._smoothed == 0 else alpha * inst + (1 - alpha) * self._smoothed
            self._t, self._pending = now, 0
        elif self._smoothed == 0:
            self._smoothed = self._pending / max(dt, 1e-3)

    def eta(self, remaining: int) -> float | None:
        return remaining / self._smoothed if self._smoothed > 0 else None


_chunk_lock = threading.Lock()
_chunk_users = 0
_chunk_saved: int | None = None


@contextlib.contextmanager
def chunk_size(size: int) -> Iterator[None]:
    """huggingface_hub reads its chunk size from a module constant; lower it while jobs run."""
    global _chunk_users, _chunk_saved
    from huggingface_hub import constants

    with _chunk_lock:
        if _chunk_users == 0:
            _chunk_saved = constants.DOWNLOAD_CHUNK_SIZE
            constants.DOWNLOAD_CHUNK_SIZE = size
        _chunk_users += 1
    try:
        yield
    finally:
        with _chunk_lock:
            _chunk_users -= 1
            if _chunk_users == 0 and _chunk_saved is not None:
                constants.DOWNLOAD_CHUNK_SIZE = _chunk_saved


class SilentBar:
    """tqdm stand-in for http_get: progress is reported through the sink instead."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: float | None = 1) -> None:
        return None


def quiet_bar(fn: Callable[..., object]) -> dict[str, object]:
    """`tqdm_class=` where this huggingface_hub's function accepts it (newer releases do)."""
    import inspect

    try:
        return {"tqdm_class": SilentBar} if "tqdm_class" in inspect.signature(fn).parameters else {}
    except (TypeError, ValueError):
        return {}


READ_TIMEOUT_S = 15.0  # a server silent this long is a broken transfer (it is resumed), never a hang


def stream_get(url: str, sink: Any, resume_size: int, headers: dict[str, str], expected_size: int | None) -> None:
    """GET `url` into `sink` from `resume_size` on, writing every piece as it arrives.

    huggingface_hub's http_get hands bytes over in 1 MiB chunks: at 1 byte/s a cancel waited for
    the next chunk (minutes), and a connection that broke before a full chunk lost what had arrived.
    Here each network read is written at once (the sink checks cancel on every write), so Stop takes
    effect within a read and every received byte is kept for the resume."""
    from huggingface_hub.utils import get_session, hf_raise_for_status

    session = get_session()
    timeout = type(getattr(session, "timeout", None))(30.0, read=READ_TIMEOUT_S) if hasattr(session, "timeout") else None
    h = dict(headers)
    if resume_size:
        h["Range"] = f"bytes={resume_size}-"
    with session.stream("GET", url, headers=h, follow_redirects=True, timeout=timeout) as r:
        hf_raise_for_status(r)
        if resume_size and r.status_code == 200:  # the server ignored Range: start the file over
            sink.seek(0)
            sink.truncate(0)
        for piece in r.iter_bytes():  # no chunk size: whatever each read returned
            if piece:
                sink.write(piece)
    if expected_size is not None and sink.tell() != expected_size:
        raise ConnectionError(f"the transfer ended at {sink.tell():,} of {expected_size:,} bytes")
