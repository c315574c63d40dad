"""training/replies.py: a run's replies kept without features, and the features rebuilt from them.

The kept runs in training/data/ are what the next round trains on, so they must hold the benchmark's
prompts out, and rebuilding their features must give what the app feeds the draft: the target's layer
inputs of each position, which depend on that position's prefix alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "training"))
from replies import KEYS, feats, pack  # noqa: E402

DATA = sorted((ROOT / "training" / "data").glob("smollm2_*.npz"))


def _run(path: Path, lens: list[int], seed: int) -> dict:
    """A distill.npz as gen_distill_llama.py writes it (features included)."""
    rng = np.random.default_rng(seed)
    n = sum(lens)
    z = dict(tokens=rng.integers(0, 49152, n).astype(np.uint16), feats=rng.standard_normal((n, 6)).astype(np.float16),
             offsets=np.concatenate([[0], np.cumsum(lens)]).astype(np.int64),
             prompt_len=np.asarray([x // 2 for x in lens], np.int64), target_layers=np.asarray([1, 8], np.int64),
             sampled=rng.random(len(lens)) < 0.5, kind=np.asarray(["code", "prose", "lists"][: len(lens)]))
    np.savez(path, **z)
    return z


def test_a_packed_run_keeps_every_reply_and_its_prompt_but_no_features(tmp_path):
    z = _run(tmp_path / "run.npz", [7, 4, 9], 0)
    (tmp_path / "prompts.json").write_text(json.dumps(["a", "b", "c"]))
    pack(tmp_path / "run.npz", tmp_path / "prompts.json", tmp_path / "kept.npz")
    k = np.load(tmp_path / "kept.npz")
    assert "feats" not in k.files
    for key in KEYS + ("target_layers",):
        assert k[key].tolist() == z[key].tolist(), key
    assert k["prompts"].tolist() == ["a", "b", "c"]


def test_a_run_whose_prompts_do_not_match_its_replies_is_refused(tmp_path):
    _run(tmp_path / "run.npz", [7, 4], 0)
    (tmp_path / "prompts.json").write_text(json.dumps(["only one"]))
    with pytest.raises(AssertionError):
        pack(tmp_path / "run.npz", tmp_path / "prompts.json", tmp_path / "kept.npz")


@pytest.mark.skipif(not DATA, reason="no kept run in training/data")
@pytest.mark.parametrize("path", DATA, ids=lambda p: p.stem)
def test_kept_runs_hold_the_benchmarks_prompts_out(path):
    from benchmarks.smol_bench import PROMPTS

    k = np.load(path)
    held_out = {p for ps in PROMPTS.values() for p in ps}
    assert len(k["prompts"]) == len(k["prompt_len"]) == len(k["offsets"]) - 1 > 1000
    assert not held_out & set(k["prompts"].tolist())
    assert k["target_layers"].tolist() == [1, 8, 15, 22, 29]  # the shipped draft's taps
    assert np.all(np.diff(k["offsets"]) > k["prompt_len"])  # every sequence has a reply


@pytest.fixture(scope="module")
def smollm2_f16(smollm2_path, tmp_path_factory) -> Path:
    """The F16 copy of the Q4_1 file that the runs were generated with (build_smollm2.sh makes it)."""
    from benchmarks.common import converted

    return converted(smollm2_path, "F16", tmp_path_factory.mktemp("f16"))


def test_rebuilt_features_are_each_positions_own(tmp_path, smollm2_f16):
    """Three kept replies through replies.feats on the real target: a zero row closes each sequence, and
    the rows of a sequence's first half equal those of a prefill of that half alone (a position's layer
    inputs depend on its prefix only, so rows did not leak across positions or sequences)."""
    if not DATA:
        pytest.skip("no kept run in training/data")
    smollm2_path = smollm2_f16
    k = np.load(DATA[0])
    o = k["offsets"][:4]
    sub = {key: k[key][:3] for key in ("prompt_len", "sampled", "kind")}
    np.savez(tmp_path / "three.npz", tokens=k["tokens"][:o[-1]], offsets=o, target_layers=k["target_layers"], **sub)
    feats(smollm2_path, tmp_path / "three.npz", tmp_path / "three_f.npz", threads=1)
    f = np.load(tmp_path / "three_f.npz")
    assert f["feats"].shape == (int(o[-1]), 5 * 576)
    assert f["tokens"].tolist() == k["tokens"][:o[-1]].tolist()
    for s in range(3):
        assert not f["feats"][o[s + 1] - 1].any()
        assert np.all(np.abs(f["feats"][o[s]:o[s + 1] - 1]).max(axis=1) > 0)
    half = (o[1] - o[0]) // 2
    np.savez(tmp_path / "half.npz", tokens=k["tokens"][:half + 1], offsets=np.asarray([0, half + 1]),
             target_layers=k["target_layers"], **{key: v[:1] for key, v in sub.items()})
    feats(smollm2_path, tmp_path / "half.npz", tmp_path / "half_f.npz", threads=1)
    a = np.load(tmp_path / "half_f.npz")["feats"][:half].astype(np.float32)
    b = f["feats"][:half].astype(np.float32)
    # Per row, the error relative to the row's norm: a 60-row and a 180-row prefill may round a little
    # differently; a row taken from another position or sequence differs by ~1.
    rel = np.linalg.norm(a - b, axis=1) / np.linalg.norm(b, axis=1)
    assert rel.max() < 0.02, rel.max()
    shifted = np.linalg.norm(a[1:] - b[:-1], axis=1) / np.linalg.norm(b[:-1], axis=1)
    assert np.median(shifted) > 0.2, np.median(shifted)  # the tolerance tells neighbouring rows apart
