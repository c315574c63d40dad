"""Flash attention per build and device (engine/attention.py): off on the CPU when llama.cpp was built
without llamafile kernels (scripts/bootstrap.sh builds it so), llama.cpp's auto otherwise, and the
engine reports and applies what it chose."""

from __future__ import annotations

import pytest

from atomicchat.engine import attention
from atomicchat.engine.draft_policy import DraftPolicy
from atomicchat.engine.errors import EngineError
from atomicchat.engine.lib import system_info
from tests.engine.helpers import engine, lossless_totals

WITH = "CPU : SSE3 = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | AVX512 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
WITHOUT = "CPU : SSE3 = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | AVX512 = 1 | OPENMP = 1 | REPACK = 1 | "


def test_off_on_the_cpu_only_without_llamafile_kernels(monkeypatch):
    monkeypatch.delenv(attention.ENV, raising=False)
    assert attention.has_llamafile(WITH) and not attention.has_llamafile(WITHOUT)
    assert attention.choose(WITHOUT, on_gpu=False) == attention.OFF
    assert attention.choose(WITH, on_gpu=False) == attention.AUTO  # off would part DFlash from target-only
    assert attention.choose(WITHOUT, on_gpu=True) == attention.AUTO
    assert [attention.describe(v) for v in (attention.AUTO, attention.OFF, attention.ON)] == ["auto", "off", "on"]


def test_the_environment_overrides_and_a_bad_value_is_refused(monkeypatch):
    monkeypatch.setenv(attention.ENV, "on")
    assert attention.choose(WITHOUT, on_gpu=False) == attention.ON
    monkeypatch.setenv(attention.ENV, "Off ")
    assert attention.choose(WITH, on_gpu=True) == attention.OFF
    monkeypatch.setenv(attention.ENV, "fast")
    with pytest.raises(EngineError, match="auto, on or off"):
        attention.choose(WITH, on_gpu=False)


def test_the_engine_applies_and_reports_its_choice(llama_pair, monkeypatch):
    monkeypatch.delenv(attention.ENV, raising=False)
    want = attention.describe(attention.choose(system_info(), on_gpu=False))
    eng = engine(llama_pair.target, llama_pair.draft, n_gpu_layers=0)
    try:
        assert eng.info.flash_attn == want
    finally:
        eng.close()
    monkeypatch.setenv(attention.ENV, "on")
    eng = engine(llama_pair.target, n_gpu_layers=0)
    try:
        assert eng.info.flash_attn == "on"
    finally:
        eng.close()


@pytest.mark.skipif(attention.has_llamafile(system_info()), reason="this llama.cpp has llamafile kernels: flash "
                    "attention stays on, and F16 batches are summed apart from one-row decodes")
def test_an_f16_target_stays_identical_under_dflash_without_flash_attention(smollm2_path, tmp_path_factory):
    """The SmolLM2 F16 copy parted from target-only at token 46 of this reply with llamafile's kernels
    (a near-tie; 2 of benchmarks/smol_bench.py's 18 prompts at length 7, 2026-12-05). Without them
    every product is summed alike at any batch size, flash attention or not."""
    from atomicchat import first_run
    from benchmarks.common import converted

    f16 = converted(smollm2_path, "F16", tmp_path_factory.mktemp("f16"))
    base = engine(f16, n_ctx=512, n_threads=1)
    spec = engine(f16, first_run.draft_path(), n_ctx=512, n_threads=1, draft_max=7)
    try:
        assert base.info.flash_attn == spec.info.flash_attn == "off"
        drafted, _, _ = lossless_totals(
            base, spec, ["Write a short paragraph about the importance of drinking water."], 64, draft_max=7
        )
        assert drafted > 0
    finally:
        spec.close()
        base.close()


def test_a_long_chat_stays_identical_under_adaptive_dflash_on_two_threads(smollm2_path):
    """~980 positions deep, 2 threads, the adaptive policy choosing lengths (and plain steps) as it
    runs. With llamafile's kernels and flash attention on, the first such DFlash reply parted from
    target-only at token 70 in 3 runs of 4 (2-core Xeon, 2026-12-05): with flash attention, a one-row
    decode over 512+ cached positions takes another path (split-KV, ggml-cpu/ops.cpp) than a batch."""
    from atomicchat import first_run
    from atomicchat.engine import target_speed
    from tests.engine.helpers import run

    spec = engine(smollm2_path, first_run.draft_path(), n_ctx=2048, n_threads=2)
    try:
        prompt = target_speed.far_prompt(spec, 1000)
        assert len(prompt) > 900
        ref, _, _ = run(spec, prompt, max_tokens=96, use_draft=False)
        spec.reset()
        # A policy that learns its prices live: its sweep drafts length 1 at least twice whatever
        # this machine's speed. The one the load calibrated may find that no length could pay
        # (SmolLM2 Q4_1 is compute-bound on the CPU) and stay plain for all 96 tokens (seen once in
        # CI, 2026-12-06), which would test nothing here.
        spec.policy = DraftPolicy(spec.draft_max)
        got, fin, _ = run(spec, prompt, max_tokens=96)
        assert got == ref
        assert fin.stats.n_drafted > 0  # the policy did draft (its first steps sweep the lengths)
    finally:
        spec.close()
