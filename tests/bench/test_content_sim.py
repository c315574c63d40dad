"""benchmarks/position_trace.py and benchmarks/content_sim.py: recorded replies, and the draft policy
replayed on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomicchat.demo import demo_draft_path, demo_target_path
from atomicchat.engine.draft_confidence import DEFAULT_P_MIN
from atomicchat.engine.draft_policy import DraftPolicy
from benchmarks import content_sim, position_trace
from benchmarks.adaptive_bench import PROSE_PROMPTS
from tests.engine.helpers import engine, run

DATA = Path(__file__).resolve().parent.parent / "engine" / "data"

# Demo F32's costs on the 2-core EPYC (benchmarks/record_policy_trace.py, 2026-12-08, load 0.44), ms:
# verify by tokens decoded, draft by tokens drafted; a plain step as target-only ran in a slow spell
# of adaptive_bench (run O, 2026-12-08: 477 tok/s, ~1.95 ms a decode besides the loop's 0.15).
_F32_EPYC_VERIFY = {1: 1.95, 2: 2.89, 3: 3.94, 4: 3.99, 5: 4.44, 6: 4.91, 7: 4.93, 8: 4.89}
_F32_EPYC_DRAFT = {1: 1.35, 2: 1.87, 3: 1.91, 4: 2.15, 5: 2.43, 6: 2.54, 7: 2.83}


class _ShiftsAnywhere(DraftPolicy):
    """The policy as it was: shifts looked for in every draft step of a reply."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.profile.shift_reply_steps = 0


def test_a_dip_within_a_reply_does_not_send_a_paying_draft_plain():
    """Demo F32's six prose replies as recorded (benchmarks/position_trace.py), three times, priced
    anew before each as adaptive_bench does: fixed 6 runs at ~1.19x of plain steps. Within a reply
    the draft's dips do not last; taken for changes of content, they cut the profile's history and
    the policy went plain on 26% of steps at 0.949x of the best fixed length (8 seeds of cost
    noise). Looked for only in a reply's first draft steps: 9% plain, 0.971x."""
    rec = json.loads((DATA / "position_trace_demo_f32_prose.json").read_text())
    res = content_sim.compare({"adaptive": DraftPolicy, "anywhere": _ShiftsAnywhere}, rec["replies"], rec["k_max"],
                              _F32_EPYC_VERIFY, _F32_EPYC_DRAFT, seeds=8)
    new, old = res["adaptive"], res["anywhere"]
    assert max(res["fixed"].values()) > 1.15  # drafting pays here
    assert new["over_best"] >= 0.96 and new["over_best"] >= old["over_best"] + 0.015, res
    assert 2 * new["plain_share"] <= old["plain_share"], res


def test_content_sim_refuses_traces_without_positions(tmp_path):
    trace, costs = tmp_path / "t.json", tmp_path / "c.json"
    trace.write_text(json.dumps({"case": "empty", "k_max": 7, "replies": [[]]}))
    costs.write_text(json.dumps({"verify_ms": _F32_EPYC_VERIFY, "draft_ms": _F32_EPYC_DRAFT}))
    with pytest.raises(SystemExit, match="no positions"):
        content_sim.main([str(trace), "--costs", str(costs), "--seeds", "1"])


def test_content_sim_prints_each_policy_beside_the_fixed_lengths(tmp_path, capsys):
    rec = json.loads((DATA / "position_trace_demo_f32_prose.json").read_text())
    trace, costs = tmp_path / "t.json", tmp_path / "c.json"
    trace.write_text(json.dumps({**rec, "replies": rec["replies"][:2]}))
    costs.write_text(json.dumps({"verify_ms": _F32_EPYC_VERIFY, "draft_ms": _F32_EPYC_DRAFT}))
    assert content_sim.main([str(trace), "--costs", str(costs), "--seeds", "2", "--repeats", "1",
                             "--burst", "0.0025,0.01,1.6"]) == 0
    out = capsys.readouterr().out
    assert "demo-f32 prose: 2 replies x 1, 2 seeds, a plain step 1.95 ms" in out and "bursts" in out
    assert "fixed lengths over plain steps: 1 0." in out and " 7 1." in out
    assert "adaptive  over the best fixed" in out


def test_a_recorded_reply_is_what_the_engines_draft_steps_meet():
    """The trace at each position a pinned length-7 engine drafted from: the step drafted what the
    confidence cut kept there, and the target accepted the recorded match of those (all 23 such
    steps on the 2-core EPYC; the draft is fed a row at a time there and a step's accepted rows at
    once in the engine, which other CPUs' kernels may round apart now and then)."""
    with engine(demo_target_path(), demo_draft_path(), draft_p_min=DEFAULT_P_MIN) as eng:
        prompt = eng.chat_prompt([{"role": "user", "content": PROSE_PROMPTS[0]}])
        rows = position_trace.record_reply(eng, prompt, 96)
        eng.reset()
        toks, _, steps = run(eng, prompt, max_tokens=96, draft_max=7)
    assert len(rows) == len(toks) - 1 and all(len(m) == len(c) == 7 for m, c in rows)
    at, met = 0, []
    for s in steps:
        if s.n_drafted:
            match, kept = rows[at - 1]
            if len(toks) - at - 1 >= 7:  # not a reply's last steps (capped to what is left)
                met.append((s.n_drafted, s.n_accepted) == (kept[6], min(kept[6], match[6])))
        at += len(s.tokens)  # the next step drafts after the last token so far
    assert len(met) >= 10 and sum(met) >= 0.9 * len(met), met
