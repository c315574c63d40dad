"""What the engine believes its caches hold must be what llama.cpp holds, after every kind of turn.

Checked against llama.cpp itself (`llama_memory_seq_pos_max`), not against the engine's own
counters: a drifted cache reuses the wrong prefix and changes the reply silently."""

from __future__ import annotations

import pytest

from atomicchat.engine import Engine, GenParams, Step
from atomicchat.engine.lib import C
from tests.engine.helpers import engine, run

A = [5, 6, 7, 8, 9, 10, 11]
B = [5, 6, 70, 71, 72]


@pytest.fixture(params=["llama_pair", "qwen35_pair"])
def pair(request):
    return request.getfixturevalue(request.param)


def _pos_max(ctx) -> int:  # noqa: ANN001
    return int(C().llama_memory_seq_pos_max(ctx.mem, 0))


def assert_consistent(eng: Engine) -> None:
    kv = eng._kv
    assert _pos_max(eng.tctx) == len(kv) - 1, "target cache differs from what the engine records"
    ds = eng.ds
    if ds is not None:
        assert _pos_max(ds.ctx) == ds.end - 1, "draft cache differs from its recorded end"
        assert ds.kv_len <= len(kv) and ds.kv_len <= ds.ready()  # fed, or staged to be fed


def _ref(pair, prompt: list[int], n: int) -> list[int]:
    with engine(pair.target) as base:
        return run(base, prompt, max_tokens=n)[0]


def test_caches_follow_every_turn(pair):
    ref_a, ref_b = _ref(pair, A, 24), _ref(pair, B, 24)
    with engine(pair.target, pair.draft) as eng:
        assert_consistent(eng)
        got, _, _ = run(eng, A, max_tokens=24, draft_max=4)
        assert got == ref_a
        assert_consistent(eng)

        follow = A + got + [12, 13]  # the next turn extends the conversation: a prefix is reused
        ref_f = _ref(pair, follow, 16)
        got, fin, _ = run(eng, follow, max_tokens=16, draft_max=4)
        assert got == ref_f and fin.stats.n_prompt_cached > 0
        assert_consistent(eng)

        gen = eng.generate(B, GenParams(max_tokens=24, draft_max=4))  # abandoned after 3 steps
        for _ in range(3):
            assert isinstance(next(gen), Step)
        gen.close()
        assert_consistent(eng)

        got, _, _ = run(eng, B, max_tokens=24, use_draft=False)  # target-only turn: the draft lags
        assert got == ref_b
        assert_consistent(eng)
        got, _, _ = run(eng, B, max_tokens=24, draft_max=4)  # back to DFlash on the same chat
        assert got == ref_b
        assert_consistent(eng)


def test_any_exception_mid_reply_empties_the_caches(pair):
    ref_a = _ref(pair, A, 24)
    with engine(pair.target, pair.draft) as eng:
        run(eng, A, max_tokens=24, draft_max=4)
        calls = {"n": 0}

        def stop() -> bool:
            calls["n"] += 1
            if calls["n"] == 3:
                raise RuntimeError("a callback failed")
            return False

        with pytest.raises(RuntimeError):
            for _ in eng.generate(A, GenParams(max_tokens=24, draft_max=4), should_stop=stop):
                pass
        assert eng._kv == [] and _pos_max(eng.tctx) == -1
        assert eng.ds is not None and eng.ds.end == 0 and _pos_max(eng.ds.ctx) == -1
        got, fin, _ = run(eng, A, max_tokens=24, draft_max=4)
        assert got == ref_a and fin.stats.n_prompt_cached == 0


def test_draft_side_only_with_a_draft(llama_pair):
    with engine(llama_pair.target) as base:
        assert base.ds is None
        got, fin, _ = run(base, A, max_tokens=8, use_draft=True)  # asks for DFlash, runs plain
        assert len(got) == 8 and fin.stats.n_drafted == 0
    with engine(llama_pair.target, llama_pair.draft) as spec:
        ds = spec.ds
        assert ds is not None and ds.layer_ids and ds.mask_token >= 0
        assert ds.ctx.n_ctx == spec.tctx.n_ctx


def test_generate_after_close_is_a_sentence(llama_pair):
    eng = engine(llama_pair.target, llama_pair.draft)
    eng.close()
    eng.close()  # twice is fine
    with pytest.raises(Exception) as exc:
        next(eng.generate(A, GenParams(max_tokens=4)))
    assert "unloaded" in str(exc.value)


def test_load_time_calibration_prices_sizes_and_leaves_both_caches_empty(pair):
    """An adaptive engine prices the policy's sweep sizes while loading (Engine._calibrate): costs
    learned, no acceptance observed, both caches empty again, and replies unchanged."""
    with engine(pair.target, pair.draft) as spec:
        policy = spec.policy
        assert policy is not None
        for k in policy.sweep_sizes():
            if k:
                assert policy.draft.count(k) >= 2 and policy.verify.count(k + 1) >= 2
        assert policy.bare.count(1) >= 3
        assert policy.feed.count(1) >= 3  # feeding a plain step's row, so a probe's first warm-up keeps its gap
        assert policy.profile.version == 0 and sum(policy.profile.trials) == 0
        # what the prices imply is worked out at the pricing, not in the first reply's first step
        assert policy._best_key and policy._spans_key == (policy.verify.version, policy.draft.version,
                                                          policy.cuts.version, policy.step.version)
        assert _pos_max(spec.tctx) == -1 and _pos_max(spec.ds.ctx) == -1
        assert spec._kv == [] and spec.ds.end == 0 and spec.ds.kv_len == 0
        assert run(spec, A, max_tokens=24)[0] == _ref(pair, A, 24)
        # (not assert_consistent: an adaptive reply's unfed plain steps leave the draft behind the
        # target on purpose, and the next turn fills that gap with blank rows)
        assert _pos_max(spec.tctx) == len(spec._kv) - 1 and _pos_max(spec.ds.ctx) == spec.ds.end - 1
    with engine(pair.target, pair.draft, draft_max=3) as pinned:  # a pinned length chooses nothing
        assert pinned.policy is not None and pinned.policy.verify.count(1) == 0


def test_calibration_stops_at_a_small_context(llama_pair):
    """n_ctx 16 leaves room for only a few priced calls; loading still works and replies too."""
    with engine(llama_pair.target, llama_pair.draft, n_ctx=16) as spec:
        assert _pos_max(spec.tctx) == -1 and _pos_max(spec.ds.ctx) == -1
        assert run(spec, A, max_tokens=6)[0] == _ref(llama_pair, A, 6)
