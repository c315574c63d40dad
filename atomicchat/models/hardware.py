"""What this machine offers a model: RAM, free disk, and the GPUs llama.cpp itself can use.

GPU facts come from llama.cpp, not from vendor tools, because what matters is what *this* build
can offload to: a CUDA card is useless to a CPU-only wheel. `llama_cpp` is imported lazily (it loads
a native library) and any failure there just means "no GPU known": the probe always answers.

API:
    hw = probe()          # Hardware; probe(disk_path=...) measures free space where models go
    hw.gpu_offload, hw.backend, hw.devices, hw.vram_total, hw.vram_free, hw.ram_total, hw.disk_free
    free_disk_bytes(path) # free bytes on the volume holding `path` (or its nearest existing parent)
"""

from __future__ import annotations

import ctypes
import functools
import shutil
from dataclasses import dataclass
from pathlib import Path

# enum ggml_backend_dev_type (ggml-backend.h)
_DEV_CPU, _DEV_GPU, _DEV_IGPU, _DEV_ACCEL = 0, 1, 2, 3


@dataclass(frozen=True)
class GpuDevice:
    name: str  # ggml device name, e.g. "CUDA0", "Vulkan0", "Metal"
    description: str  # e.g. "NVIDIA GeForce RTX 4090"
    backend: str  # ggml backend registry name: "CUDA", "Metal", "Vulkan", ...
    integrated: bool  # an iGPU shares system RAM
    memory_total: int
    memory_free: int


@dataclass(frozen=True)
class GpuInfo:
    gpu_offload: bool
    backend: str  # "CUDA", "Metal", ..., "CPU only", or why it is unknown
    devices: tuple[GpuDevice, ...]
    error: str | None = None


@dataclass(frozen=True)
class Hardware:
    ram_total: int
    ram_available: int
    disk_free: int
    disk_path: str
    gpu: GpuInfo

    @property
    def gpu_offload(self) -> bool:
        return self.gpu.gpu_offload and bool(self.gpu.devices)

    @property
    def backend(self) -> str:
        return self.gpu.backend

    @property
    def devices(self) -> tuple[GpuDevice, ...]:
        return self.gpu.devices

    @property
    def vram_total(self) -> int:
        """Dedicated GPU memory (integrated GPUs share RAM, so they count as RAM instead)."""
        return sum(d.memory_total for d in self.gpu.devices if not d.integrated)

    @property
    def vram_free(self) -> int:
        return sum(d.memory_free for d in self.gpu.devices if not d.integrated)

    def summary(self) -> str:
        gib = 1024**3
        ram = f"RAM {self.ram_total / gib:.1f} GiB ({self.ram_available / gib:.1f} GiB available)"
        disk = f"disk {self.disk_free / gib:.1f} GiB free"
        if self.gpu_offload and self.devices:
            gpus = "; ".join(
                f"{d.description or d.name} [{d.backend}] {d.memory_free / gib:.1f}/{d.memory_total / gib:.1f} GiB free"
                for d in self.devices
            )
            return f"{ram}, {disk}, GPU: {gpus}"
        return f"{ram}, {disk}, GPU: {self.backend}"


def free_disk_bytes(path: str | Path) -> int:
    """Free bytes for new files under `path`, which need not exist yet."""
    p = Path(path).expanduser().absolute()
    for candidate in (p, *p.parents):
        try:
            return int(shutil.disk_usage(candidate).free)
        except OSError:
            continue
    return 0


def _ram() -> tuple[int, int]:
    try:
        import psutil

        vm = psutil.virtual_memory()
        return int(vm.total), int(vm.available)
    except Exception:  # noqa: BLE001 - psutil missing or unsupported platform
        import os

        try:
            pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
            avail = os.sysconf("SC_AVPHYS_PAGES") * size
            return int(pages * size), int(avail)
        except (ValueError, OSError, AttributeError):
            return 0, 0


def _ggml_devices(libggml: ctypes.CDLL) -> tuple[GpuDevice, ...]:
    """Enumerate GPU devices through the ggml backend device API (not bound as Python functions)."""
    lib = libggml
    lib.ggml_backend_dev_count.restype = ctypes.c_size_t
    lib.ggml_backend_dev_count.argtypes = []
    lib.ggml_backend_dev_get.restype = ctypes.c_void_p
    lib.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
    for fn in ("ggml_backend_dev_name", "ggml_backend_dev_description"):
        getattr(lib, fn).restype = ctypes.c_char_p
        getattr(lib, fn).argtypes = [ctypes.c_void_p]
    lib.ggml_backend_dev_type.restype = ctypes.c_int
    lib.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_dev_memory.restype = None
    lib.ggml_backend_dev_memory.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    lib.ggml_backend_dev_backend_reg.restype = ctypes.c_void_p
    lib.ggml_backend_dev_backend_reg.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_reg_name.restype = ctypes.c_char_p
    lib.ggml_backend_reg_name.argtypes = [ctypes.c_void_p]

    found: list[GpuDevice] = []
    for i in range(int(lib.ggml_backend_dev_count())):
        dev = lib.ggml_backend_dev_get(i)
        kind = int(lib.ggml_backend_dev_type(dev))
        if kind not in (_DEV_GPU, _DEV_IGPU):
            continue
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        lib.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        reg = lib.ggml_backend_dev_backend_reg(dev)
        found.append(
            GpuDevice(
                name=(lib.ggml_backend_dev_name(dev) or b"").decode(errors="replace"),
                description=(lib.ggml_backend_dev_description(dev) or b"").decode(errors="replace"),
                backend=(lib.ggml_backend_reg_name(reg) or b"").decode(errors="replace") if reg else "",
                integrated=kind == _DEV_IGPU,
                memory_total=int(total.value),
                memory_free=int(free.value),
            )
        )
    return tuple(found)


@functools.lru_cache(maxsize=1)
def probe_gpu() -> GpuInfo:
    """Ask llama.cpp which GPUs it can offload to. Cached: backend start-up can take a second."""
    try:
        import llama_cpp
    except Exception as exc:  # noqa: BLE001 - ImportError, OSError from a broken native library, ...
        return GpuInfo(False, "unknown: llama.cpp is not available", (), error=f"{type(exc).__name__}: {exc}")
    try:
        offload = bool(llama_cpp.llama_supports_gpu_offload())
    except Exception as exc:  # noqa: BLE001
        return GpuInfo(False, "unknown: llama.cpp did not answer", (), error=f"{type(exc).__name__}: {exc}")
    devices: tuple[GpuDevice, ...] = ()
    error = None
    try:
        from llama_cpp import _ggml

        devices = _ggml_devices(_ggml.libggml)
    except Exception as exc:  # noqa: BLE001 - device API missing in this build: offload flag still holds
        error = f"{type(exc).__name__}: {exc}"
    if not offload:
        return GpuInfo(False, "CPU only: this llama.cpp build has no GPU backend", (), error=error)
    backends = sorted({d.backend for d in devices if d.backend})
    return GpuInfo(True, ", ".join(backends) or "GPU", devices, error=error)


def probe(disk_path: str | Path | None = None, *, refresh_gpu: bool = False) -> Hardware:
    """RAM and disk are measured now; GPU facts come from the cached llama.cpp probe."""
    if refresh_gpu:
        probe_gpu.cache_clear()
    if disk_path is None:
        from atomicchat.models import hub

        disk_path = hub.cache_dir()
    total, available = _ram()
    return Hardware(
        ram_total=total,
        ram_available=available,
        disk_free=free_disk_bytes(disk_path),
        disk_path=str(disk_path),
        gpu=probe_gpu(),
    )
