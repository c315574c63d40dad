"""TargetSpeed: the target-only speed by context length that the speedup figure divides by."""

from __future__ import annotations

import pytest

from atomicchat.stats import DecodeCounters, TargetSpeed


def run(n_generated: int, seconds: float) -> DecodeCounters:
    return DecodeCounters(n_generated=n_generated, generate_seconds=seconds)


def test_two_runs_give_the_cost_of_a_token_at_any_context_position():
    # 64 tokens after a 38-token prompt at 10 ms each; 32 tokens after 990 at 20 ms each
    sp = TargetSpeed.fit(run(64, 0.64), 38, run(32, 0.64), 990)
    assert sp.depth == pytest.approx(38 + 31.5) and sp.far_depth == pytest.approx(990 + 15.5)
    assert sp.tokens_per_second_at(sp.depth) == pytest.approx(100.0)
    assert sp.tokens_per_second_at(sp.far_depth) == pytest.approx(50.0)  # both runs are reproduced
    mid = (sp.depth + sp.far_depth) / 2
    assert sp.tokens_per_second_at(mid) == pytest.approx(1 / 0.015)  # linear in between
    # a reply of 200 tokens after a 400-token prompt is judged at its own positions, 400..599
    assert sp.for_reply(400, 200) == pytest.approx(sp.tokens_per_second_at(499.5))
    assert sp.for_reply(400, 200) < 100.0 / 1.3


def test_a_deep_run_that_came_out_faster_gives_no_slope():
    sp = TargetSpeed.fit(run(64, 0.64), 38, run(32, 0.30), 990)  # noise: never "faster deeper"
    assert sp.slope == 0.0 and sp.for_reply(5000, 100) == pytest.approx(100.0)


def test_without_a_deep_run_the_speed_is_flat():
    sp = TargetSpeed.fit(run(64, 0.64), 38)
    assert sp.slope == 0.0 and sp.far_depth == 0.0
    assert sp.for_reply(3000, 500) == pytest.approx(100.0)
    too_short = TargetSpeed.fit(run(64, 0.64), 38, run(3, 0.1), 990)  # 3 tokens: no rate to fit
    assert too_short.slope == 0.0 and too_short.far_depth == 0.0


def test_extrapolation_below_the_short_run_never_halves_the_cost():
    steep = TargetSpeed(100.0, 500.0, slope=1e-4)  # a noisy fit, extrapolated to position 0
    assert steep.tokens_per_second_at(0) == pytest.approx(200.0)
