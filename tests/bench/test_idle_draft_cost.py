"""benchmarks/idle_draft_cost.py on a generated hybrid pair: every configuration measured, tokens equal."""

from __future__ import annotations

import re

import pytest

from benchmarks import idle_draft_cost


def test_every_configuration_is_measured_on_a_hybrid_pair(tmp_path, capsys, monkeypatch):
    from atomicchat.engine import Engine

    made, offs = [], []
    real, real_off = Engine.remake_contexts, idle_draft_cost.taps_off
    monkeypatch.setattr(Engine, "remake_contexts", lambda self: (made.append(self), real(self))[1])
    monkeypatch.setattr(idle_draft_cost, "taps_off", lambda eng: (offs.append(eng), real_off(eng))[1])
    assert idle_draft_cost.main(["--cases", "tiny-qwen35", "--cache", str(tmp_path), "--max-tokens", "6",
                                 "--prompts", "1", "--repeats", "2"]) == 0
    assert len(set(map(id, made[-4:]))) == 4  # before repeat 2 each engine drew a new placement (after load-time resizes)
    assert len(offs) == 2 and offs[0] is offs[1]  # the taps went off again on the new context
    out = capsys.readouterr().out
    rows = dict(re.findall(r"^  (target-only|draft loaded|no snapshots|taps off) +([0-9.]+) tok/s", out, re.M))
    assert set(rows) == {"target-only", "draft loaded", "no snapshots", "taps off"}, out
    assert all(float(v) > 0 for v in rows.values())


def test_nothing_to_measure_is_an_error(tmp_path):
    with pytest.raises(SystemExit):
        idle_draft_cost.main(["--cache", str(tmp_path)])
    with pytest.raises(SystemExit, match="TARGET,DRAFT"):
        idle_draft_cost.main(["--pair", str(tmp_path / "missing.gguf")])
