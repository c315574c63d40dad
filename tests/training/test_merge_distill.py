"""training/merge_distill.py: two distillation sets become one whose sequences read back unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "training"))
from merge_distill import merge  # noqa: E402


def _set(path: Path, lens: list[int], seed: int, lids=(1, 8)) -> dict:
    rng = np.random.default_rng(seed)
    n = sum(lens)
    z = dict(tokens=rng.integers(0, 49152, n).astype(np.uint16), feats=rng.standard_normal((n, 6)).astype(np.float16),
             offsets=np.concatenate([[0], np.cumsum(lens)]).astype(np.int64),
             prompt_len=np.asarray([x // 2 for x in lens], np.int64), target_layers=np.asarray(lids, np.int64),
             sampled=rng.random(len(lens)) < 0.5, kind=np.asarray(["code"] * len(lens)))
    np.savez(path, **z)
    return z


def _seq(z, i: int):
    o = z["offsets"]
    return z["tokens"][o[i]:o[i + 1]].tolist(), z["feats"][o[i]:o[i + 1]].tolist(), int(z["prompt_len"][i])


def test_sequences_of_both_sets_read_back_in_order(tmp_path):
    a, b = _set(tmp_path / "a.npz", [5, 3, 7], 0), _set(tmp_path / "b.npz", [4, 6], 1)
    merge(tmp_path / "m.npz", [tmp_path / "a.npz", tmp_path / "b.npz"])
    m = np.load(tmp_path / "m.npz")
    assert len(m["prompt_len"]) == 5 and int(m["offsets"][-1]) == 25
    want = [_seq(a, i) for i in range(3)] + [_seq(b, i) for i in range(2)]
    assert [_seq(m, i) for i in range(5)] == want
    assert m["sampled"].tolist() == a["sampled"].tolist() + b["sampled"].tolist()


def test_sets_that_tap_other_layers_are_refused(tmp_path):
    _set(tmp_path / "a.npz", [3], 0, lids=(1, 8))
    _set(tmp_path / "b.npz", [3], 1, lids=(1, 9))
    with pytest.raises(AssertionError, match="target layers differ"):
        merge(tmp_path / "m.npz", [tmp_path / "a.npz", tmp_path / "b.npz"])
