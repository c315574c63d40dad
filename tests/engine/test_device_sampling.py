"""On-device sampling (the GPU path), checked for exactness on the CPU backend where it also runs."""

from __future__ import annotations

import pytest

from atomicchat.engine import device_sampling
from tests.engine.helpers import engine, run

PROMPT = [7, 100, 42, 9, 300, 11]


@pytest.fixture(params=["llama_pair", "qwen35_pair"])
def pair(request):
    return request.getfixturevalue(request.param)


def test_device_tokens_equal_host_tokens_at_every_length(pair):
    with engine(pair.target) as base:
        ref, _, _ = run(base, PROMPT, max_tokens=48)
    with engine(pair.target, pair.draft, device_sampling=True) as dev:
        assert dev.device_sampling and dev.tsamp is not None and dev.ds is not None and dev.ds.samp is not None
        for n_max in (1, 4, 15, None):  # None: the adaptive policy's own choices
            dev.reset()
            got, fin, _ = run(dev, PROMPT, max_tokens=48, draft_max=n_max)
            assert got == ref, n_max
            if n_max:
                assert fin.stats.n_drafted > 0
        dev.reset()
        alone, _, _ = run(dev, PROMPT, max_tokens=48, use_draft=False)
        assert alone == ref


def test_device_drafts_equal_host_drafts(llama_pair):
    """The draft's in-graph argmax over only the rows used proposes what the host argmax proposes."""
    counts = []
    for ds in (False, True):
        with engine(llama_pair.target, llama_pair.draft, device_sampling=ds, draft_max=6) as eng:
            _, fin, steps = run(eng, PROMPT, max_tokens=40)
            counts.append((fin.stats.n_drafted, fin.stats.n_accepted, [s.n_accepted for s in steps]))
    assert counts[0] == counts[1]


def test_device_sampling_is_the_targets_sample(llama_pair):
    with engine(llama_pair.target) as base:
        greedy, _, _ = run(base, PROMPT, max_tokens=40)
    with engine(llama_pair.target, llama_pair.draft, device_sampling=True) as dev:
        one, _, _ = run(dev, PROMPT, max_tokens=40, temperature=0.7, top_k=1, seed=5)
        assert one == greedy  # top_k=1: the chain is deterministic, so DFlash must give plain decoding
        dev.reset()
        a, _, _ = run(dev, PROMPT, max_tokens=40, temperature=0.9, seed=1234)
        dev.reset()
        b, _, _ = run(dev, PROMPT, max_tokens=40, temperature=0.9, seed=1234)
        assert a == b  # seeded
        dev.reset()
        after, _, _ = run(dev, PROMPT, max_tokens=40)  # the greedy chain is back after a sampled reply
        assert after == greedy


def test_wanted_follows_setting_env_and_gpu(monkeypatch):
    monkeypatch.delenv("ATOMICCHAT_DEVICE_SAMPLING", raising=False)
    assert device_sampling.wanted(None, 0) is False  # CPU: the host path is faster
    assert device_sampling.wanted(None, 33) is False  # on an H200 too (measured; see wanted())
    assert device_sampling.wanted(False, 33) is False and device_sampling.wanted(True, 0) is True
    monkeypatch.setenv("ATOMICCHAT_DEVICE_SAMPLING", "1")
    assert device_sampling.wanted(None, 0) is True
    monkeypatch.setenv("ATOMICCHAT_DEVICE_SAMPLING", "0")
    assert device_sampling.wanted(None, 33) is False
