"""The draft's confidence cut (engine/draft_confidence.py): llama.cpp's `--spec-draft-p-min` reading of a
drafted row (softmax over the top 10 logits, the best one's share), the prefix it keeps, the settings
it refuses, and on a real pair: exact output, fewer drafted tokens, the accepted ones nearly all kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from atomicchat.engine import EngineConfig, GenParams
from atomicchat.engine.draft_confidence import DEFAULT_P_MIN, confident_prefix, top_prob
from atomicchat.engine.errors import EngineError


def _row(top: list[float], n_vocab: int = 1000, rest: float = -50.0) -> np.ndarray:
    row = np.full(n_vocab, rest, np.float32)
    row[: len(top)] = top
    return np.random.default_rng(0).permutation(row)


def test_top_prob_is_the_softmax_share_of_the_best_of_ten():
    # two equal leaders and eight far below: each holds half of the top-10 mass
    assert top_prob(_row([3.0, 3.0])) == pytest.approx(0.5, abs=1e-6)
    # ten logits 0, 0, ..., ln 9 -> the best holds 9 / (9 + 9) = 0.5
    assert top_prob(_row([math.log(9.0)] + [0.0] * 9)) == pytest.approx(0.5, abs=1e-6)
    # an 11th candidate as strong as the rest is outside the top 10: the share stays 0.5, not 9/19
    assert top_prob(_row([math.log(9.0)] + [0.0] * 10)) == pytest.approx(0.5, abs=1e-6)
    # one token alone
    assert top_prob(_row([5.0])) == pytest.approx(1.0, abs=1e-9)
    # ten equal logits: the floor of a top-10 share, 0.1
    assert top_prob(_row([1.0] * 10)) == pytest.approx(0.1, abs=1e-6)
    # the other nine 5 and 20 below the best: outside the first narrow bands, still counted
    assert top_prob(_row([0.0] + [-5.0] * 9)) == pytest.approx(1 / (1 + 9 * math.exp(-5)), rel=1e-6)
    assert top_prob(_row([0.0] + [-5.0] * 3 + [-20.0] * 6)) == pytest.approx(
        1 / (1 + 3 * math.exp(-5) + 6 * math.exp(-20)), rel=1e-9)
    # a row outside the head's columns is -inf (the reduced-head draft): ignored
    assert top_prob(_row([2.0, 2.0], rest=-np.inf)) == pytest.approx(0.5, abs=1e-9)


def test_the_prefix_ends_at_the_first_doubtful_row():
    rows = np.stack([_row([4.0]), _row([2.0, 2.0]), _row([6.0])])  # shares 1.0, 0.5, 1.0
    assert confident_prefix(rows, 0.0) == 3  # off: every row
    assert confident_prefix(rows, 0.5) == 3  # 0.5 is not below 0.5
    assert confident_prefix(rows, 0.6) == 1  # the third row is confident again, but after a doubt
    assert confident_prefix(rows[1:], 0.6) == 0
    assert confident_prefix(rows[:0], 0.6) == 0


@pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5, float("nan"), True, "0.4"])
def test_a_cut_that_is_not_a_probability_below_one_is_refused(bad):
    with pytest.raises(EngineError, match="confidence cut"):
        GenParams(draft_p_min=bad)


def test_the_engine_refuses_a_bad_cut_before_loading(tmp_path):
    from atomicchat.engine import Engine

    with pytest.raises(EngineError, match="confidence cut"):
        Engine(EngineConfig(target_path=tmp_path / "missing.gguf", draft_p_min=2.0))


def test_the_default_cut_is_a_probability():
    assert 0.0 < DEFAULT_P_MIN < 1.0
