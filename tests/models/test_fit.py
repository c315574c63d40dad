"""Hardware probe and the memory-fit estimate (KV formula, verdicts, numbers in the message)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from atomicchat.models import catalog, fit, hardware
from atomicchat.models.fit import GIB, Verdict
from atomicchat.models.hardware import GpuDevice, GpuInfo, Hardware
from tests.models.ggufs import make_target


def machine(ram_gib: float, vram_gib: float = 0) -> Hardware:
    devices = (GpuDevice("CUDA0", "Test GPU", "CUDA", False, int(vram_gib * GIB), int(vram_gib * GIB)),) if vram_gib else ()
    gpu = GpuInfo(bool(vram_gib), "CUDA" if vram_gib else "CPU only", devices)
    return Hardware(int(ram_gib * GIB), int(ram_gib * GIB), 100 * GIB, "/", gpu)


@pytest.fixture
def qwen() -> catalog.ModelPair:
    return catalog.load_catalog().pair("qwen3.5-9b-dflash")


def test_kv_formula_for_hybrid_qwen(qwen: catalog.ModelPair) -> None:
    # 8 attention layers x n_ctx x 4 KV heads x (256 + 256) x 2 bytes = 32 KiB per token
    assert fit.kv_cache_bytes(qwen.target.facts, 1) == 32 * 1024
    assert fit.kv_cache_bytes(qwen.target.facts, 32768) == 1 * GIB
    assert fit.kv_cache_bytes(qwen.target.facts, 262144) == 8 * GIB
    # draft: 1 full layer x n_ctx + 5 sliding-window layers x 4096, 8 heads x (128 + 128) x 2 B
    assert fit.kv_cache_bytes(qwen.draft.facts, 32768) == (32768 + 5 * 4096) * 8 * 256 * 2


def test_fits_in_vram_with_numbers(qwen: catalog.ModelPair) -> None:
    est = fit.estimate(qwen, "Q4_K_M", 32768, hardware=machine(32, vram_gib=24))
    assert est.verdict is Verdict.FITS_VRAM and est.label == "fits in VRAM"
    assert est.total == 6_169_341_984 + 1_383_768_224 + 1 * GIB + est.kv_draft + 16 * 52_690_944 + fit.OVERHEAD_BYTES  # 1 + draft_max state planes
    assert f"needs {est.total / GIB:.1f} GiB" in est.message and "Test GPU has 24.0 GiB free" in est.message
    assert "KV 1.2 GiB at 32768 tokens" in est.breakdown()


def test_partial_offload_is_slower_but_fits(qwen: catalog.ModelPair) -> None:
    est = fit.estimate(qwen, "Q4_K_M", 8192, hardware=machine(32, vram_gib=4))
    assert est.verdict is Verdict.FITS_RAM and est.label == "fits in RAM, slower"
    assert 0.3 < est.gpu_fraction < 0.6 and "runs on the GPU" in est.message


def test_cpu_only_and_too_small(qwen: catalog.ModelPair) -> None:
    cpu = fit.estimate(qwen, "Q4_K_M", 8192, hardware=machine(16))
    assert cpu.verdict is Verdict.FITS_RAM and "no GPU" in cpu.message
    small = fit.estimate(qwen, "Q8_0", 262144, hardware=machine(8))
    assert small.verdict is Verdict.WONT_FIT and small.label == "won't fit"
    assert "about" in small.message  # the Q8_0 size is an estimate until a refresh
    assert "6.0 GiB of usable memory" in small.message


def test_context_is_clamped_to_the_trained_length(qwen: catalog.ModelPair) -> None:
    est = fit.estimate(qwen, None, 10_000_000, hardware=machine(64))
    assert est.n_ctx == 262144 and est.kv_target == 8 * GIB


def test_without_draft(qwen: catalog.ModelPair) -> None:
    est = fit.estimate(qwen, "Q4_K_M", 4096, hardware=machine(64), use_draft=False)
    assert est.weights_draft == 0 and est.kv_draft == 0 and est.draft_quant is None


def test_dflash_keeps_rollback_copies_of_the_recurrent_state(qwen: catalog.ModelPair) -> None:
    """n_rs_seq = draft_max: a hybrid target keeps 1 + draft_max recurrent-state planes."""
    one = qwen.target.facts.recurrent_state_bytes
    assert one > 0
    alone = fit.estimate(qwen, "Q4_K_M", 4096, hardware=machine(64), use_draft=False)
    paired = fit.estimate(qwen, "Q4_K_M", 4096, hardware=machine(64))
    short = fit.estimate(qwen, "Q4_K_M", 4096, hardware=machine(64), draft_max=3)
    assert alone.recurrent_state == one
    assert paired.recurrent_state - qwen.draft.facts.recurrent_state_bytes == 16 * one
    assert short.recurrent_state - qwen.draft.facts.recurrent_state_bytes == 4 * one


def test_facts_from_a_gguf_header(tmp_path: Path) -> None:
    make_target(tmp_path / "t.gguf", pad_bytes=16)
    facts = fit.facts_from_gguf(tmp_path / "t.gguf")
    assert (facts.n_layer, facts.kv_layers, facts.n_head_kv, facts.key_length, facts.n_vocab) == (8, 2, 2, 16, 65)


def test_probe_without_llama_cpp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hardware.probe_gpu.cache_clear()
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    try:
        hw = hardware.probe(tmp_path / "not" / "there")
    finally:
        hardware.probe_gpu.cache_clear()
    assert hw.ram_total > 0 and hw.ram_available > 0 and hw.disk_free > 0
    assert not hw.gpu_offload and hw.vram_total == 0
    assert hw.backend.startswith("unknown") and hw.gpu.error and "GPU: unknown" in hw.summary()


def test_probe_with_llama_cpp_reports_its_backend() -> None:
    pytest.importorskip("llama_cpp")
    hardware.probe_gpu.cache_clear()
    gpu = hardware.probe_gpu()
    assert gpu.error is None, gpu.error  # the ggml device API answered
    if gpu.gpu_offload:
        assert gpu.devices and all(d.memory_total > 0 for d in gpu.devices)
    else:
        assert gpu.backend.startswith("CPU only") and gpu.devices == ()
