"""benchmarks/opening_sim.py: simulated chats whose replies open with text the draft gets right."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from atomicchat.engine.draft_policy import FixedPolicy
from benchmarks import opening_sim as osim


def test_a_replys_opening_is_accepted_more_often_than_the_rest():
    """The content follows the reply under way: a fixed length accepts more in each reply's opening."""
    seen: list[tuple[int, int]] = []  # (reply position before the step, accepted)

    class Recording(osim.tracked(FixedPolicy)):  # type: ignore[misc]
        def record(self, k, n_accepted, draft_seconds, verify_seconds, fed=True, asked=None):  # noqa: ANN001
            seen.append((self.reply_pos, n_accepted))
            super().record(k, n_accepted, draft_seconds, verify_seconds, fed, asked)

    pol = Recording(4)
    matches = osim.opening_matches(random.Random(0), lambda: pol.reply_pos, 24, 0.9, 0.3, 7)
    osim.simulate(pol, lambda n: 1e-3, lambda k: 1e-3, matches, n_tokens=2000, reply_len=128)
    opening = [n for pos, n in seen if pos < 24]
    later = [n for pos, n in seen if pos >= 24]
    assert opening and later
    assert sum(opening) / len(opening) > 2.5 > 1.0 > sum(later) / len(later)  # ~3.2 and ~0.4 of 4


def test_the_same_policy_twice_gives_the_same_figures(capsys):
    tree_policy = Path(osim.__file__).resolve().parents[1] / "atomicchat" / "engine" / "draft_policy.py"
    assert osim.main(["--seeds", "2", "--replies", "2", "--scenarios", "0,2", "--policy-from", str(tree_policy)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "adaptive" in ln]
    assert len(lines) == 8  # 2 scenarios x (first reply, first 2 replies) x 2 policies
    for mine, other in zip(lines[::2], lines[1::2]):
        figures = re.findall(r"\d+\.\d{3}\b", mine)  # rate, worst, over best fixed, worst
        assert len(figures) == 4 and re.findall(r"\d+\.\d{3}\b", other) == figures
        assert 0.5 < float(figures[0]) < 2.0


def test_a_run_that_took_no_steps_fails(monkeypatch):
    monkeypatch.setattr(osim, "simulate", lambda *a, **k: (1.0, []))
    with pytest.raises(SystemExit, match="nothing was measured"):
        osim.main(["--seeds", "1", "--scenarios", "0"])
