"""A model service for the manager tests: the real catalog, registry and fit estimate, with the
hardware probe and the Hub transfer replaced (no network, no GPU questions, a known machine)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from atomicchat.models.downloads import FileResult, JobResult, Progress
from atomicchat.models.errors import DownloadCancelled
from atomicchat.models.hardware import GpuInfo, Hardware
from atomicchat.models.registry import InstalledFile, stat_of
from atomicchat.models.service import ModelService

GIB = 1024**3
HARDWARE = Hardware(
    ram_total=32 * GIB,
    ram_available=24 * GIB,
    disk_free=500 * GIB,
    disk_path="/tmp",
    gpu=GpuInfo(False, "CPU only", ()),
)


class FakeModels(ModelService):
    def __init__(self, files: tuple[Path, Path] | None = None, demo: tuple[Path, Path | None] | None = None) -> None:
        super().__init__()
        self.files = files  # what a "download" installs: a real tiny target and draft
        self.demo = demo
        self.steps = 40
        self.step_delay = 0.01
        self.runs = 0

    def hardware(self):
        return HARDWARE

    def demo_pair(self):
        return self.demo

    def first_run_model(self):
        return None

    def display_name(self, path):
        return None

    def pending_bytes(self, job) -> int:
        return sum(f.size or 0 for f in job.files) if self.runs == 0 else sum(f.size or 0 for f in job.files) // 2

    def run_download(self, job, progress, cancel: threading.Event):
        self.runs += 1
        total = sum(f.size or 0 for f in job.files)
        start = 0 if self.runs == 1 else self.steps // 2
        t0 = time.monotonic()
        for i in range(start, self.steps + 1):
            if cancel.is_set():
                raise DownloadCancelled("Download cancelled; the partial file is kept and resumes next time.")
            done = total * i // self.steps
            elapsed = max(time.monotonic() - t0, 1e-3)
            progress(
                Progress(
                    "downloading",
                    job.files[0].filename,
                    0,
                    len(job.files),
                    done,
                    total,
                    done,
                    total,
                    speed=done / elapsed,
                    eta=(total - done) / max(done / elapsed, 1),
                )
            )
            time.sleep(self.step_delay)
        assert self.files is not None
        results = []
        for ref, path in zip(job.files, self.files, strict=True):
            size, mtime = stat_of(path)
            self.registry.put(
                InstalledFile(
                    key=ref.key,
                    role=ref.role,
                    name=path.stem,
                    path=str(path),
                    size=size,
                    mtime_ns=mtime,
                    source="hub",
                    verified=True,
                    repo=ref.repo,
                    filename=ref.filename,
                    pair_id=ref.pair_id,
                    quant=ref.quant,
                )
            )
            results.append(FileResult(ref, path, None, size, size, 0, False))
        self.registry.link(job.files[0].key, job.files[1].key, job.pair_id)
        return JobResult(job.pair_id, tuple(results), True, None)
