"""Greedy DFlash output must equal target-only output token for token."""

from __future__ import annotations

import pytest

from atomicchat.engine import Finished, GenParams

from tests.engine.helpers import Schedule, engine, install_oracle, run

PROMPTS = [[1, 2, 3], [7, 100, 42, 9, 300, 11], list(range(20, 80))]


@pytest.fixture(params=["llama_pair", "llama_pair_own_embd", "qwen35_pair"])
def pair(request):
    return request.getfixturevalue(request.param)


def test_random_draft_matches_target_only(pair):
    base = engine(pair.target)
    spec = engine(pair.target, pair.draft)
    try:
        for prompt in PROMPTS:
            ref, _, _ = run(base, prompt, max_tokens=48)
            base.reset()
            for n_max in (1, 4, 15):
                spec.reset()
                got, fin, _ = run(spec, prompt, max_tokens=48, draft_max=n_max)
                assert got == ref, (prompt, n_max)
                assert fin.stats.n_drafted > 0
                assert fin.stats.n_accepted <= fin.stats.n_drafted
    finally:
        spec.close()
        base.close()


@pytest.mark.parametrize("n_max", [3, 8, 15])
def test_partial_acceptance_oracle_matches(pair, n_max):
    prompt = [5, 6, 7, 8]
    with engine(pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=80)
    with engine(pair.target, pair.draft) as spec:
        install_oracle(spec, prompt, ref)
        got, fin, steps = run(spec, prompt, max_tokens=60, draft_max=n_max)
        drafted_text = [spec.detokenize(st.tokens[: st.from_draft.count(True)]) for st in steps]
    assert got == ref[:60]
    s = fin.stats
    assert s.n_accepted > 0, "the oracle must produce accepted drafts"
    assert s.n_accepted < s.n_drafted, "corrupted tokens must be rejected"
    assert any(0 < st.n_accepted < st.n_drafted for st in steps), "some step must accept only a prefix"
    assert all(st.from_draft.count(True) == st.n_accepted for st in steps if st.tokens)
    for st, want in zip(steps, drafted_text):  # the accepted prefix's text is exact, for colouring
        assert st.text[: st.draft_chars] == want


def test_hybrid_checkpoint_fallback(qwen35_pair):
    """n_rs_seq smaller than the draft length: rollbacks beyond it restore a PARTIAL_ONLY
    checkpoint and re-decode the accepted tokens; output must not change."""
    prompt = [3, 1, 4, 1, 5, 9, 2, 6]
    with engine(qwen35_pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=70)
    with engine(qwen35_pair.target, qwen35_pair.draft, n_rs_seq=2) as spec:
        assert spec.n_rs_seq == 2
        install_oracle(spec, prompt, ref, corrupt_every=2)
        got, fin, _ = run(spec, prompt, max_tokens=64, draft_max=12)
    assert got == ref[:64]
    assert fin.stats.n_fallbacks > 0
    assert fin.stats.n_accepted > 0


def test_hybrid_rollback_without_fallback(qwen35_pair):
    prompt = [2, 7, 1, 8, 2, 8]
    with engine(qwen35_pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=50)
    with engine(qwen35_pair.target, qwen35_pair.draft, draft_max=8) as spec:  # pinned: snapshots for 8
        assert spec.n_rs_seq >= spec.draft_max
        install_oracle(spec, prompt, ref)
        got, fin, _ = run(spec, prompt, max_tokens=50)
    assert got == ref
    assert fin.stats.n_fallbacks == 0


@pytest.mark.parametrize("useful", [2, 99])
def test_adaptive_hybrid_keeps_snapshots_only_for_drafts_that_could_pay(qwen35_pair, monkeypatch, useful):
    """An adaptive engine on a hybrid target sizes its rollback snapshots by the load-time pricing
    (Engine._fit_rollback): as many as the longest draft that could beat a plain step (fixed here,
    since on a real machine it follows the timings). Longer drafts (pinned per request) roll back
    through a checkpoint and stay exact."""
    from atomicchat.engine.draft_policy import DraftPolicy

    monkeypatch.setattr(DraftPolicy, "longest_useful", lambda self, p_max=0.9: useful)
    prompt = [2, 7, 1, 8, 2, 8]
    with engine(qwen35_pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=40)
    with engine(qwen35_pair.target, qwen35_pair.draft) as spec:
        assert spec.n_rs_seq == min(useful, spec.draft_max)
        assert spec._kv == [] and spec.policy.rate(0) is not None  # plain steps priced, nothing cached
        install_oracle(spec, prompt, ref, corrupt_every=2)
        got, fin, _ = run(spec, prompt, max_tokens=40, draft_max=6)
    assert got == ref[:40]
    assert fin.stats.n_accepted > 0
    assert (fin.stats.n_fallbacks > 0) == (spec.n_rs_seq < 6)


def test_multi_turn_cache_reuse_is_exact(pair, monkeypatch):
    """A second turn that extends the first reuses the KV caches and still matches a fresh run.

    The hybrid pair's snapshots stay as sized: when the first reply's drafts happen to be tried often
    enough, all rejected, the policy drops them before the next reply and the contexts are made again,
    which re-reads the prompt (seen 1 run in 8 under load; that path is
    `test_a_hybrid_target_drops_its_snapshots_while_no_draft_is_accepted`)."""
    from atomicchat.engine.draft_policy import DraftPolicy

    monkeypatch.setattr(DraftPolicy, "rollback_wanted", lambda self, full: full)
    turn1 = [10, 11, 12, 13]
    with engine(pair.target, pair.draft) as spec:
        out1, _, _ = run(spec, turn1, max_tokens=20)
        turn2 = turn1 + out1 + [50, 51, 52]
        out2, fin2, _ = run(spec, turn2, max_tokens=20)
        assert fin2.stats.n_prompt_cached >= len(turn1) + len(out1) - 1
        # an edited history (diverging prefix) must also be right
        turn3 = turn1[:2] + [99, 98]
        out3, _, _ = run(spec, turn3, max_tokens=20)
    with engine(pair.target) as fresh:
        assert run(fresh, turn2, max_tokens=20)[0] == out2
        fresh.reset()
        assert run(fresh, turn3, max_tokens=20)[0] == out3


def test_target_only_call_with_draft_loaded_keeps_draft_consistent(llama_pair):
    prompt = [4, 4, 4, 9]
    with engine(llama_pair.target, llama_pair.draft) as spec:
        a, fa, _ = run(spec, prompt, max_tokens=30, use_draft=False)
        assert fa.stats.n_drafted == 0
        b, fb, _ = run(spec, prompt + a + [1], max_tokens=30, draft_max=4)  # pinned: it must draft
        assert fb.stats.n_drafted > 0
    with engine(llama_pair.target) as base:
        assert run(base, prompt, max_tokens=30)[0] == a
        base.reset()
        assert run(base, prompt + a + [1], max_tokens=30)[0] == b


@pytest.mark.parametrize("feed", [True, False], ids=["fed", "unfed"])
@pytest.mark.parametrize("ks", [[0], [1], [2, 0], [15, 0, 0, 5], [0, 3, 7, 1], [4, 4, 0, 15, 2]])
def test_every_length_a_policy_picks_is_lossless(pair, ks, feed):
    """The adaptive policy may change k every step, including plain steps between drafts:
    each schedule gives the target's own tokens, greedy and with the top_k=1 sampler chain."""
    prompt = [7, 100, 42, 9]
    with engine(pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=40)
    with engine(pair.target, pair.draft) as spec:
        for params in ({}, {"temperature": 0.8, "top_k": 1, "seed": 3}):
            spec.reset()
            sched = Schedule(ks, feed)  # unfed: plain steps skip the draft's features (gaps in its cache)
            spec.policy = sched  # type: ignore[assignment]
            install_oracle(spec, prompt, ref)
            got, fin, _ = run(spec, prompt, max_tokens=40, **params)
            assert got == ref, (ks, params)
            assert set(sched.seen) >= {min(k, 15) for k in ks if k <= 3}, sched.seen
            if any(ks):
                assert fin.stats.n_drafted > 0


def test_adaptive_default_is_lossless_and_reports_its_lengths(pair):
    """No pinned length: the engine's own policy decides; output stays the target's."""
    prompt = [1, 2, 3]
    with engine(pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=60)
    with engine(pair.target, pair.draft) as spec:
        assert spec.policy is not None
        for _ in range(2):  # the second call starts from what the first one learned
            spec.reset()
            got, fin, _ = run(spec, prompt, max_tokens=60)
            assert got == ref
        s = fin.stats
        assert s.n_steps - 1 >= s.n_draft_steps  # plain steps are allowed, drafted ones counted
        assert s.mean_draft_length == (s.n_drafted / s.n_draft_steps if s.n_draft_steps else 0.0)
        assert spec.policy.verify.values  # it measured this device


def test_regenerate_after_single_token_steps_on_hybrid_target(qwen35_pair):
    """llama.cpp's recurrent seq_rm accepts a rollback of up to n_rs_seq tokens even when it reaches
    back past the last decode, and then restores the wrong state. Four single-token steps, then the
    same prompt again (a regenerate): the reply must equal a fresh target's."""
    prompt = [4, 5, 6, 7]
    with engine(qwen35_pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=12)
    with engine(qwen35_pair.target, qwen35_pair.draft, n_rs_seq=8) as spec:
        assert spec.n_rs_seq >= 4
        first, _, _ = run(spec, prompt, max_tokens=4, use_draft=False)  # four 1-token decodes
        assert first == ref[:4]
        again, fin, _ = run(spec, prompt, max_tokens=12, use_draft=False)
        assert again == ref
        assert fin.stats.n_prompt_cached == 0  # refused the unsafe rollback, re-read the prompt


def test_a_hybrid_target_drops_its_snapshots_while_no_draft_is_accepted(qwen35_pair, monkeypatch):
    """Snapshots sized for long drafts (as on a GPU, where they cost every plain step ~9% on the 9B
    stand-in) are dropped before the next reply once the sweep's drafts were all rejected, and come
    back after a drafted token is accepted; every reply stays the target's own."""
    from atomicchat.engine.draft_policy import DraftPolicy

    monkeypatch.setattr(DraftPolicy, "longest_useful", lambda self, p_max=0.9: 99)
    prompt = [2, 7, 1, 8, 2, 8]
    with engine(qwen35_pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=40)
    with engine(qwen35_pair.target, qwen35_pair.draft) as spec:
        full = spec.n_rs_seq
        assert full == spec.draft_max
        spec.policy._tried, spec.policy.profile.success[1] = {1: 2}, 0.0  # the sweep: two 1-token drafts, rejected
        got, _, _ = run(spec, prompt, max_tokens=40)
        assert spec.n_rs_seq == 0 and got == ref[:40]
        got, _, _ = run(spec, prompt, max_tokens=40)  # nothing changes now: the cache is reused
        assert spec.n_rs_seq == 0 and got == ref[:40]
        install_oracle(spec, prompt, ref, corrupt_every=2)
        got, fin, _ = run(spec, prompt, max_tokens=40, draft_max=6)  # pinned: drafts through checkpoints
        assert got == ref[:40] and fin.stats.n_accepted > 0 and fin.stats.n_fallbacks > 0
        assert spec.policy.rollback_wanted(full) == 0  # a pinned request teaches the policy nothing
        spec.policy.profile.observe(3, 2)  # an adaptive draft was accepted
        got, _, _ = run(spec, prompt, max_tokens=40)
        assert spec.n_rs_seq == full and got == ref[:40]


def test_contexts_made_again_keep_what_the_policy_learned(pair):
    """`remake_contexts` (a hybrid target's snapshot resize; benchmarks drawing a new memory
    placement) empties both caches and prices a plain step anew, keeps the acceptance learned,
    and the replies after it are still the target's own."""
    prompt = [3, 1, 4, 1, 5, 9, 2, 6]
    with engine(pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=32)
    with engine(pair.target, pair.draft) as spec:
        got, _, _ = run(spec, prompt, max_tokens=32)
        assert got == ref[:32]
        pol = spec.policy
        profile, tried = list(pol.profile.success), dict(pol._tried)
        old_ctx, n_rs = spec.tctx, spec.n_rs_seq
        spec.remake_contexts()
        assert spec.tctx is not old_ctx and spec.n_rs_seq == n_rs
        assert spec.policy is pol and list(pol.profile.success) == profile and pol._tried == tried
        assert pol.rate(0) is not None, "the calibration priced a plain step on the new context"
        got, fin, _ = run(spec, prompt, max_tokens=32)
        assert got == ref[:32]
        assert fin.stats.n_prompt_cached == 0  # nothing of the old cache survived
        got, _, _ = run(spec, prompt, max_tokens=32, draft_max=4)
        assert got == ref[:32]
        # priced again as at load (what a benchmark's new placement stands for): every size, afresh
        old_draft, trials = pol.draft, list(pol.profile.trials)
        spec.remake_contexts(reprice=True)
        assert pol.draft is not old_draft and set(pol.draft.values) == {k for k in pol.sweep_sizes() if k}
        assert pol.rate(0) is not None and list(pol.profile.trials) == trials  # the acceptance learned stays
        got, _, _ = run(spec, prompt, max_tokens=32)
        assert got == ref[:32]


def test_a_snapshot_resize_keeps_the_conversation(qwen35_pair, monkeypatch):
    """Dropping a hybrid target's snapshots, and bringing them back, makes the contexts again; the
    conversation's state is copied across, so the next turn reads only what is new, and its reply
    is still the target's own, in both directions. Past the size cap the turn is read again."""
    from atomicchat.engine import engine as engine_mod
    from atomicchat.engine.draft_policy import DraftPolicy

    monkeypatch.setattr(DraftPolicy, "longest_useful", lambda self, p_max=0.9: 99)
    want = {"n": None}
    monkeypatch.setattr(DraftPolicy, "rollback_wanted", lambda self, full: full if want["n"] is None else want["n"])

    def ref(prompt):
        with engine(qwen35_pair.target) as base:
            return run(base, prompt, max_tokens=16)[0]

    with engine(qwen35_pair.target, qwen35_pair.draft) as spec:
        full = spec.n_rs_seq
        assert full == spec.draft_max
        history = [2, 7, 1, 8, 2, 8]
        out, _, _ = run(spec, history, max_tokens=16)
        for n_rs in (0, full):
            history = history + out + [40 + n_rs, 41]
            want["n"] = n_rs
            out, fin, _ = run(spec, history, max_tokens=16)
            assert spec.n_rs_seq == n_rs and out == ref(history)
            assert fin.stats.n_prompt_cached == len(history) - 3  # all but the new turn (and the last reply token)
        assert spec.n_rs_seq == full
        history = history + out + [70, 71]  # a pinned turn drafts on the draft cache that was copied back
        out, fin, _ = run(spec, history, max_tokens=16, draft_max=4)
        assert out == ref(history) and fin.stats.n_drafted > 0
        assert fin.stats.n_prompt_cached == len(history) - 3
        monkeypatch.setattr(engine_mod, "KEEP_STATE_MAX_BYTES", 0)
        history = history + out + [50, 51]
        want["n"] = 0
        out, fin, _ = run(spec, history, max_tokens=16)
        assert spec.n_rs_seq == 0 and out == ref(history)
        assert fin.stats.n_prompt_cached == 0  # too big to copy: read again, as a new context's caches are


def test_the_policy_is_told_what_each_step_costs_outside_its_decodes(llama_pair):
    """The time between one step's timed work and the next one's (here a consumer that takes 3 ms
    over every step it is handed) reaches the adaptive policy as the step's untimed cost, and
    the reply is still the target's own."""
    import time

    from atomicchat.engine import GenParams, Step
    from atomicchat.engine.draft_policy import DraftPolicy

    prompt = [7, 100, 42, 9]
    n = 6 * DraftPolicy.bare_every  # deep in a plain run, one step in `bare_every` is told
    with engine(llama_pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=n)
    with engine(llama_pair.target, llama_pair.draft) as spec:
        pol = spec.policy
        got = []
        for ev in spec.generate(prompt, GenParams(max_tokens=n)):
            if isinstance(ev, Step):
                got += ev.tokens
                time.sleep(0.003)
        assert got == ref
        assert pol.plain_step.count(1) >= 5  # after plain steps: a plain step's loop cost
        assert 0.003 <= pol.plain_step.estimate(1) < 1.0


class _Grants(Schedule):
    """A policy deep in a plain run: each `coast` grants `n` unfed plain steps; logs what it is told."""

    def __init__(self, n: int) -> None:
        super().__init__([0], feed=False)
        self.n, self.granted, self.returned, self.asked = n, 0, 0, 0

    def coast(self, limit: int) -> int:
        assert limit >= 1  # the engine asks to coast only where a draft could be chosen
        self.granted += self.n
        return self.n

    def uncoast(self, n: int) -> None:
        assert n > 0
        self.returned += n

    def record(self, k: int, n_accepted: int, draft_seconds: float, verify_seconds: float, fed: bool = True,
               asked: int | None = None) -> None:
        assert k == 0 and not fed
        self.asked += 1


@pytest.mark.parametrize("n", [1, 5, 1000])
def test_coasted_steps_the_reply_did_not_take_go_back_to_the_policy(llama_pair, n):
    """The engine takes the plain steps `coast` grants without calling the policy. A reply's last
    step (no room left to draft) is still asked, and what a reply that ended, or was stopped, did not
    take goes back (`uncoast`): the policy's count of plain steps stays the steps taken."""
    prompt = [7, 100, 42, 9]
    with engine(llama_pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=40)
    with engine(llama_pair.target, llama_pair.draft) as spec:
        pol = _Grants(n)
        spec.policy = pol  # type: ignore[assignment]
        got, fin, _ = run(spec, prompt, max_tokens=40)
        assert got == ref
        steps = fin.stats.n_steps - 1  # the first token comes from the prefill
        assert steps == len(ref) - 1 and pol.asked == 1  # only the last step was asked
        assert pol.granted - pol.returned == steps - 1
        assert spec._coast_left == 0
        assert (pol.returned > 0) == (n > 1)

        spec.reset()
        pol2 = _Grants(n)
        spec.policy = pol2  # type: ignore[assignment]
        seen = []
        for ev in spec.generate(prompt, GenParams(max_tokens=40), should_stop=lambda: len(seen) >= 7):
            seen.append(ev)
        fin = seen[-1]
        assert isinstance(fin, Finished) and fin.reason == "cancelled" and fin.tokens == ref[: len(fin.tokens)]
        assert pol2.asked == 0 and pol2.granted - pol2.returned == fin.stats.n_steps - 1
        assert spec._coast_left == 0


def test_a_second_policy_is_priced_on_the_same_contexts_and_runs_in_place_of_the_first(pair):
    """`price_policy` (benchmarks/adaptive_bench.py --policy-from puts two policies side by side on one
    engine): the other policy learns every size's price on the engine's contexts, the engine's own
    keeps its tables, and with the other swapped in the replies are still the target's own."""
    from atomicchat.engine.draft_policy import DraftPolicy
    from atomicchat.engine.errors import EngineError

    prompt = [3, 1, 4, 1, 5, 9, 2, 6]
    with engine(pair.target) as base:
        ref, _, _ = run(base, prompt, max_tokens=32)
        with pytest.raises(EngineError, match="no draft"):
            base.price_policy(DraftPolicy(4))
    with engine(pair.target, pair.draft) as spec:
        class DraftsTwo(DraftPolicy):  # a policy whose choices show in the stats
            def choose(self, limit: int) -> int:
                return min(2, limit)

        own = spec.policy
        own_draft = own.draft
        other = DraftsTwo(spec.draft_max)
        spec.price_policy(other)
        assert spec.policy is own and own.draft is own_draft  # the engine's own is left as it was
        assert set(other.draft.values) == {k for k in other.sweep_sizes() if k} and other.rate(0) is not None
        assert sum(other.profile.trials) == 0  # costs only: acceptance comes from replies
        with spec.policy_swapped(other):
            assert spec.policy is other
            got, fin, _ = run(spec, prompt, max_tokens=32)
        assert spec.policy is own and got == ref[:32]
        # its choices: length 2 (1 where the reply's end caps it), every draft step recorded
        assert fin.stats.n_draft_steps > 0 and sum(other._tried.values()) == fin.stats.n_draft_steps
        assert set(other._tried) <= {1, 2} and other._tried[2] >= fin.stats.n_draft_steps - 2


def test_unfed_steps_at_load_are_priced_once_they_stop_getting_cheaper():
    """Right after other work a plain step runs slow for a while: on demo F32 (2-core Xeon sharing a
    480 MiB L3, 2026-12-07) the load's first unfed steps after its 8-row verifies took 3.3-3.6 ms
    and fell to a steady ~1.65 over ~10 steps. Six steps priced a plain run at 2.3-3.4 ms, and the
    engine drafted 95% of its steps at 0.76-0.83x of target-only. `bare_settled` waits out the fall."""
    from atomicchat.engine.draft_policy import SETTLE_WINDOW as BARE_WINDOW
    from atomicchat.engine.engine import BARE_CALIBRATION_STEPS, bare_settled

    ms = [3.56, 3.27, 3.09, 2.61, 2.16, 1.79, 1.77, 1.70, 1.59, 1.68, 1.62, 1.72, 1.66, 1.65, 1.67, 1.58, 1.68]
    first = next(n for n in range(1, len(ms) + 1) if bare_settled(ms[:n]))
    assert first > BARE_CALIBRATION_STEPS and max(ms[first - BARE_WINDOW : first]) < 1.8  # the last five steady
    flat = [1.7, 1.6, 1.65, 1.62, 1.64, 1.61, 1.66, 1.63, 1.6, 1.65, 1.64]
    assert not bare_settled(flat[:-1]) and bare_settled(flat)  # two windows and the switch, no more
    falling = [4.0 - 0.15 * i for i in range(20)]  # 4% a step and more: never settled
    assert not any(bare_settled(falling[:n]) for n in range(len(falling) + 1))


def test_a_plain_step_is_priced_at_load_by_unfed_steps(pair):
    """After the fed sizes, the load prices plain steps that skip feeding the draft (`calibrate_bare`):
    what a step of a plain run costs. Priced by fed steps alone, a plain step looked 20-26% dearer
    than target-only ran on demo F32 (2.09-2.14 ms against 1.70), and drafting that lost to
    target-only looked to pay. Nothing is fed between those steps; they set the bare price, and
    they go on until it settles (`bare_settled`), at most `BARE_CALIBRATION_MOST`."""
    from atomicchat.engine.draft_policy import DraftPolicy
    from atomicchat.engine.engine import BARE_CALIBRATION_MOST, BARE_CALIBRATION_STEPS, bare_settled

    def settled_or_most(seen: list[tuple[float, int]]) -> bool:
        times = [s for s, _ in seen]
        return BARE_CALIBRATION_STEPS <= len(times) <= BARE_CALIBRATION_MOST and (
            bare_settled(times) and not bare_settled(times[:-1]) or len(times) == BARE_CALIBRATION_MOST)

    with engine(pair.target, pair.draft) as spec:
        seen: list[tuple[float, int]] = []

        class Spy(DraftPolicy):
            def calibrate_bare(self, seconds: float) -> None:
                seen.append((seconds, spec.ds.end))
                super().calibrate_bare(seconds)

        pol = Spy(spec.draft_max)
        spec.price_policy(pol)
        assert settled_or_most(seen)  # stopped at the first step where the price settled
        assert len({end for _, end in seen}) == 1  # the draft was fed nothing meanwhile
        last = sorted(s for s, _ in seen[-5:])
        assert pol.bare.count(1) == 5 and pol.bare.estimate(1) == pytest.approx(last[2])
        seen.clear()
        with spec.policy_swapped(pol):
            spec.remake_contexts()  # a plain step priced again on the new context: unfed steps too
        assert settled_or_most(seen) and pol.bare.count(1) == 5
