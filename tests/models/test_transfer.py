"""The sink huggingface_hub writes into, and the speed/ETA meter."""

from __future__ import annotations

import errno
import hashlib
import io
import threading

import pytest

from atomicchat.models.errors import DiskFullError, DownloadCancelled
from atomicchat.models.transfer import HashingSink, Meter


def sink_over(fh: io.BytesIO, cancel: threading.Event | None = None) -> tuple[HashingSink, list[int], list[int]]:
    writes: list[int] = []
    rewinds: list[int] = []
    sink = HashingSink(fh, hashlib.sha256(), writes.append, rewinds.append, cancel or threading.Event(), "f.gguf")
    return sink, writes, rewinds


def test_sink_hashes_counts_and_rehashes_on_rewind() -> None:
    fh = io.BytesIO()
    sink, writes, rewinds = sink_over(fh)
    sink.write(b"abc")
    sink.write(b"def")
    assert writes == [3, 3] and sink.hasher.hexdigest() == hashlib.sha256(b"abcdef").hexdigest()
    sink.seek(2)  # what http_get does when a server ignores Range
    sink.truncate()
    sink.write(b"XY")
    assert rewinds == [2] and sink.hasher.hexdigest() == hashlib.sha256(b"abXY").hexdigest()


def test_sink_stops_on_cancel() -> None:
    cancel = threading.Event()
    sink, _, _ = sink_over(io.BytesIO(), cancel)
    sink.write(b"x")
    cancel.set()
    with pytest.raises(DownloadCancelled, match="resume"):
        sink.write(b"y")


class FullDisk(io.BytesIO):
    def write(self, data: bytes) -> int:  # type: ignore[override]
        raise OSError(errno.ENOSPC, "No space left on device")


def test_sink_reports_a_full_disk_in_words() -> None:
    sink, _, _ = sink_over(FullDisk())
    with pytest.raises(DiskFullError, match="disk filled up .* part already downloaded is kept"):
        sink.write(b"data")


def test_meter_speed_and_eta() -> None:
    now = [0.0]
    meter = Meter(clock=lambda: now[0])
    assert meter.eta(100) is None
    for _ in range(10):
        now[0] += 0.5
        meter.add(50_000_000)  # 100 MB/s
    assert meter.speed == pytest.approx(100e6)
    assert meter.eta(300_000_000) == pytest.approx(3.0)
