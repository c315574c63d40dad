"""Small pure pieces: the stats figures, the draft-character split, and worker resilience."""

from __future__ import annotations

from pathlib import Path

from atomicchat.engine.errors import ModelLoadError
from atomicchat.engine.types import EngineConfig
from atomicchat.stats import TargetSpeed
from atomicchat.store.records import ReplyStats
from atomicchat.ui.chat.stats_format import format_stats, speedup
from atomicchat.ui.engine.host import EngineHost
from atomicchat.ui.engine.worker_types import GenRequest
from tests.ui.conftest import WAIT_MS
from tests.ui.fake_engine import Script, factory


def flat(tps: float) -> TargetSpeed:
    """A baseline measured at one context length only (no slope)."""
    return TargetSpeed(tps, 0.0)


def test_speedup_uses_the_measured_baseline_when_there_is_one():
    s = ReplyStats(
        n_generated=100,
        generate_seconds=1.0,
        n_steps=25,
        n_drafted=150,
        n_accepted=75,
        n_draft_steps=25,
        draft_seconds=0.2,
        verify_seconds=0.8,
        used_draft=True,
    )
    assert speedup(s, flat(40.0)) == 2.5
    assert speedup(s, None) is None  # never a guess: no figure until this machine measured the baseline
    t = format_stats(s, None)
    assert t.acceptance == "acceptance 50% (75/150)" and t.tau == "τ 4.00" and t.speedup == ""
    assert format_stats(s, flat(40.0)).speedup == "2.50× vs target-only (40 tok/s, measured)"
    slow = format_stats(s, flat(250.0))
    assert slow.slower and slow.speedup == "slower than target-only: 0.40× (250 tok/s, measured)"
    assert not format_stats(s, flat(40.0)).slower
    level = format_stats(s, flat(s.tokens_per_second * 1.001))  # rounds to 1.00×: never "slower: 1.00×"
    assert level.slower and level.speedup.startswith("no faster than target-only: 1.00× (")
    assert format_stats(ReplyStats(n_generated=5, generate_seconds=0.5), None).mode == "target only"
    assert speedup(ReplyStats(used_draft=False, n_generated=9), flat(10.0)) is None


def test_worker_survives_a_failed_load_and_serves_the_next(qtbot, qapp):
    script = Script(texts=["fine"], load_error=ModelLoadError("llama.cpp refused the model (test)."))
    host = EngineHost(factory(script))
    failures, ready, done = [], [], []
    host.failed.connect(failures.append)
    host.ready.connect(ready.append)
    host.finished.connect(done.append)
    try:
        host.load(EngineConfig(Path("/x/a.gguf")))
        qtbot.waitUntil(lambda: bool(failures), timeout=WAIT_MS)
        assert failures[0].kind == "load" and failures[0].message == "llama.cpp refused the model (test)."
        host.generate(GenRequest(req_id=host.next_request_id(), messages=[{"role": "user", "content": "x"}]))
        qtbot.waitUntil(lambda: len(failures) == 2, timeout=WAIT_MS)
        assert "No model is loaded" in failures[1].message
        script.load_error = None
        host.load(EngineConfig(Path("/x/a.gguf")))
        qtbot.waitUntil(lambda: bool(ready), timeout=WAIT_MS)
        host.generate(GenRequest(req_id=host.next_request_id(), messages=[{"role": "user", "content": "x"}]))
        qtbot.waitUntil(lambda: bool(done), timeout=WAIT_MS)
        assert done[0].reason == "eos" and done[0].stats.n_generated > 0
    finally:
        assert host.close()


def test_cancel_before_the_worker_starts_is_honoured(qtbot):
    host = EngineHost(factory(Script(texts=["z" * 3000], step_delay=0.001)))
    done, ready = [], []
    host.finished.connect(done.append)
    host.ready.connect(ready.append)
    try:
        host.load(EngineConfig(Path("/x/a.gguf")))
        qtbot.waitUntil(lambda: bool(ready), timeout=WAIT_MS)
        rid = host.next_request_id()
        host.cancel(rid)
        host.generate(GenRequest(req_id=rid, messages=[{"role": "user", "content": "x"}]))
        qtbot.waitUntil(lambda: bool(done), timeout=WAIT_MS)
        assert done[0].reason == "cancelled"
    finally:
        host.close()


def test_rates_need_a_span_otherwise_counts() -> None:
    one = ReplyStats(n_generated=1, generate_seconds=0.0000272, used_draft=True, n_steps=1)
    t = format_stats(one, flat(30.0))
    assert t.speed == "1 token" and t.speedup == ""  # not "36697.2 tok/s"
    assert format_stats(ReplyStats(n_generated=3, generate_seconds=0.5), None).speed == "3 tokens"
    assert format_stats(ReplyStats(n_generated=40, generate_seconds=2.0), None).speed == "20.0 tok/s"


def test_drafting_text_reports_what_the_adaptive_length_did():
    from atomicchat.ui.chat.stats_format import drafting_text

    s = ReplyStats(n_generated=60, generate_seconds=1.0, n_steps=41, n_drafted=84, n_accepted=20,
                   n_draft_steps=30, used_draft=True)
    assert drafting_text(s) == "drafts 2.8/step · 25% plain steps"  # 84/30 drafted, 10 of 40 steps plain
    assert format_stats(s, None).drafting == drafting_text(s)
    every = ReplyStats(n_generated=9, n_steps=3, n_drafted=8, n_draft_steps=2, used_draft=True)
    assert drafting_text(every) == "drafts 4.0/step"
    none = ReplyStats(n_generated=9, n_steps=9, used_draft=True)
    assert drafting_text(none) == "no drafts · 100% plain steps"
    assert drafting_text(ReplyStats(n_generated=1, n_steps=1, used_draft=True)) == ""


def test_speedup_compares_with_the_target_alone_at_the_replys_own_context_positions():
    from atomicchat.ui.chat.stats_format import stats_tooltip

    # the target alone: 100 tok/s ~70 positions in, 50 tok/s ~1,000 in (the cache read grows)
    base = TargetSpeed(100.0, 70.0, slope=0.01 / 930, far_depth=1000.0)
    deep = ReplyStats(n_prompt=901, n_generated=200, generate_seconds=200 / 55.0, used_draft=True,
                      n_steps=150, n_drafted=100, n_accepted=50, n_draft_steps=50)
    # positions 901..1100: the target alone runs at 1/(0.01 + 0.01 * 930.5/930) ~ 50 tok/s there
    assert format_stats(deep, base).speedup == "1.10× vs target-only (50 tok/s, measured)"
    assert format_stats(deep, flat(100.0)).speedup.startswith("slower than target-only: 0.55×")  # the old bias
    tip = stats_tooltip(deep, base)
    assert "context positions (901-1100): 50.0 tok/s" in tip
    assert "100.0 tok/s after a short prompt and 50.0 tok/s 1000 tokens into a chat" in tip


def test_a_reply_that_drafted_nothing_is_not_called_slower_than_the_target():
    """The first-run model on a 2-core CPU: the policy took target steps only, and the reply, streaming
    into the window, ran at 0.93x of the baseline measured with the window idle, as target-only replies
    did in the same app (0.91-1.02x). No ratio, no 'slower', no offer to turn DFlash off: the draft
    did nothing to blame. The tooltip says why there were no drafts and what the target alone did."""
    from atomicchat.ui.chat.stats_format import NO_DRAFTS, stats_tooltip

    plain = ReplyStats(n_generated=86, generate_seconds=86 / 60.2, n_steps=86, used_draft=True)
    t = format_stats(plain, flat(64.8))
    assert (t.mode, t.speed, t.drafting) == ("DFlash", "60.2 tok/s", NO_DRAFTS)
    assert t.speedup == t.acceptance == t.tau == "" and not t.slower
    tip = stats_tooltip(plain, flat(64.8))
    assert "No drafts in this reply" in tip and "measured at 64.8 tok/s" in tip and "Acceptance" not in tip
    one_draft = ReplyStats(n_generated=86, generate_seconds=86 / 60.2, n_steps=85, n_drafted=2, n_accepted=1,
                           n_draft_steps=1, used_draft=True)
    assert format_stats(one_draft, flat(64.8)).slower  # a draft step was taken: the ratio is the draft's
    assert format_stats(ReplyStats(n_generated=1, n_steps=1, used_draft=True), flat(64.8)).acceptance == "acceptance –"


def test_the_measure_button_is_offered_only_where_there_is_a_speedup_to_measure(qtbot):
    from atomicchat.ui.chat.stats_bar import StatsBar

    bar = StatsBar()
    qtbot.addWidget(bar)
    bar.show()
    drafted = ReplyStats(n_generated=60, generate_seconds=1.0, n_steps=20, n_drafted=80, n_accepted=40,
                         n_draft_steps=20, used_draft=True)
    bar.set_stats(drafted, None)
    assert bar.measure.isVisible() and bar.chart.isVisible()
    bar.set_stats(ReplyStats(n_generated=60, generate_seconds=1.0, n_steps=60, used_draft=True), None)
    assert not bar.measure.isVisible() and not bar.chart.isVisible() and not bar.dflash_off.isVisible()
