"""Download throughput on loopback: Atomic Chat's pull vs plain `huggingface_hub.hf_hub_download`.

Both fetch the same generated file from the test suite's fake Hub (tests/models/fakehub.py, a real
HTTP server in a child process, sending with sendfile) into fresh HF caches, alternating run by run.
"ours" is the full pull: HEAD, Range-capable GET in CHUNK_SIZE pieces with sha256 computed while
writing, the final check, the snapshot link and the registry update. The raw call does not verify.

    python benchmarks/download_bench.py [--size-mb 256] [--rounds 3]

Prints MB/s and client CPU seconds per GiB for each run, the medians, and the ratio ours / raw
(1.0 = same speed). Wall-clock speed on a busy machine is noisy; CPU per GiB is the steadier figure.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPO, FILE = "bench-org/Bench-GGUF", "bench-Q4_K_M.gguf"


def _serve(path: str, q: mp.Queue[str]) -> None:
    from tests.models.fakehub import FakeHub

    hub = FakeHub()
    hub.add_path(REPO, FILE, Path(path))
    hub.start()
    q.put(hub.url)
    while True:
        time.sleep(3600)


def _make_file(path: Path, size: int) -> str:
    h = hashlib.sha256()
    block = 4 * 1024 * 1024
    with open(path, "wb") as fh:
        left = size
        while left > 0:
            data = os.urandom(min(block, left))
            fh.write(data)
            h.update(data)
            left -= len(data)
    return h.hexdigest()


def _timed(fn) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(wall seconds, CPU seconds of this process: the client side only, the server is a child)."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def _raw(work: Path) -> tuple[float, float]:
    from huggingface_hub import hf_hub_download

    cache = work / "raw-cache"
    dt = _timed(lambda: hf_hub_download(REPO, FILE, cache_dir=str(cache)))
    shutil.rmtree(cache)
    return dt


def _ours(work: Path, size: int, sha: str, chunk: int) -> tuple[float, float]:
    from atomicchat.models.catalog import FileRef
    from atomicchat.models.downloads import DownloadJob
    from atomicchat.models.registry import Registry

    cache = work / "ours-cache"
    os.environ["HF_HUB_CACHE"] = str(cache)
    ref = FileRef("target", "bench", "Q4_K_M", REPO, "main", FILE, size, sha, True)
    job = DownloadJob(files=[ref], registry=Registry(work / "registry.json"), chunk_size=chunk)
    dt = _timed(job.run)
    shutil.rmtree(cache)
    (work / "registry.json").unlink()
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    size = args.size_mb * 1024 * 1024

    with tempfile.TemporaryDirectory(prefix="dlbench-") as tmp:
        work = Path(tmp)
        src = work / "src.gguf"
        print(f"generating {args.size_mb} MiB test file ...", flush=True)
        sha = _make_file(src, size)
        q: mp.Queue[str] = mp.Queue()
        server = mp.Process(target=_serve, args=(str(src), q), daemon=True)
        server.start()
        url = q.get(timeout=30)
        os.environ.update(
            HF_ENDPOINT=url,
            HF_HOME=str(work / "hf"),
            HF_HUB_DISABLE_XET="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
            HF_HUB_DISABLE_TELEMETRY="1",
            ATOMICCHAT_HOME=str(work / "app"),
        )
        from atomicchat.models.downloads import CHUNK_SIZE

        _raw(work)  # warm-up: page cache, connection pool, imports
        names = ("raw hf_hub_download", "ours (1 MiB chunks)", "ours (10 MiB chunks)")
        runs: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
        try:
            for r in range(args.rounds):
                for name, fn in zip(
                    names,
                    (
                        lambda: _raw(work),
                        lambda: _ours(work, size, sha, CHUNK_SIZE),
                        lambda: _ours(work, size, sha, 10 * 1024 * 1024),
                    ),
                ):
                    wall, cpu = fn()
                    runs[name].append((size / wall / 1e6, cpu / (size / 1024**3)))
                    print(
                        f"round {r + 1} {name:<22} {runs[name][-1][0]:8.1f} MB/s  {runs[name][-1][1]:5.2f} CPU s/GiB", flush=True
                    )
        finally:
            server.terminate()
        speed = {k: statistics.median(x[0] for x in v) for k, v in runs.items()}
        cpu = {k: statistics.median(x[1] for x in v) for k, v in runs.items()}
        raw = speed[names[0]]
        print(f"\nmedian of {args.rounds} rounds, {args.size_mb} MiB over loopback (load average {os.getloadavg()[0]:.1f}):")
        for name in names:
            print(
                f"  {name:<22} {speed[name]:8.1f} MB/s  ratio vs raw {speed[name] / raw:5.2f}   client CPU {cpu[name]:5.2f} s/GiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
