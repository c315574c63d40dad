"""DraftSide's staged features: a plain step keeps its row on the host (`DraftSide.stage`) and the
draft is fed every staged row in one decode when it next drafts (`fill_gap`), instead of a one-row
draft decode each step. What the draft then holds, and so what it drafts, must be what feeding
each step at once gave."""

from __future__ import annotations

import numpy as np
import pytest

from atomicchat.engine.draft_side import STAGE_ROWS
from tests.engine.helpers import Schedule, engine, run

PROMPT = [7, 100, 42, 9]
KS = [0, 0, 0, 0, 0, 0, 3]  # six fed plain steps, then a draft of 3


@pytest.fixture(params=["llama_pair", "qwen35_pair"])
def pair(request):
    return request.getfixturevalue(request.param)


def _drafting(pair, at_once: bool) -> tuple[list[tuple[int, list[int], np.ndarray]], list[int], list[list[int]]]:
    """Two turns on the schedule: (pos, drafted tokens, draft logits) of every draft block, the
    rows of each draft feeding decode, and the tokens of both turns. `at_once`: fed plain steps
    feed the draft right away, as before staging."""
    blocks: list[tuple[int, list[int], np.ndarray]] = []
    feeds: list[int] = []
    with engine(pair.target, pair.draft) as eng:
        ds = eng.ds
        assert ds is not None
        real_block, real_embd = ds.draft_block, ds.ctx.decode_embd

        def spy_block(id_last: int, pos: int, n_max: int, n_use: int, p_min: float = 0.0) -> list[int]:
            out = real_block(id_last, pos, n_max, n_use, p_min)
            blocks.append((pos, out, ds.ctx.logits(n_use + 1, ds.n_vocab)[1:].copy()))
            return out

        def spy_embd(n: int, pos0: int, n_pos: int) -> int:
            feeds.append(n)
            return real_embd(n, pos0, n_pos)

        ds.draft_block = spy_block  # type: ignore[method-assign]
        ds.ctx.decode_embd = spy_embd  # type: ignore[method-assign]
        if at_once:
            ds.stage = lambda tctx, pos: ds.inject(tctx, 1, pos)  # type: ignore[method-assign]
        eng.policy = Schedule(KS)  # type: ignore[assignment]
        first, _, _ = run(eng, PROMPT, max_tokens=23)  # ends on fed plain steps: rows left staged
        assert ds.kv_len <= ds.ready() and ds.ready() == len(eng._kv)
        second, fin, _ = run(eng, PROMPT + first + [5], max_tokens=16)  # the staged rows reused
        assert fin.stats.n_prompt_cached == len(PROMPT) + len(first) - 1  # all but the last token sampled
    return blocks, feeds, [first, second]


def test_staged_rows_feed_the_draft_what_feeding_each_step_at_once_did(pair):
    staged, staged_feeds, staged_tokens = _drafting(pair, at_once=False)
    fed, fed_feeds, fed_tokens = _drafting(pair, at_once=True)
    assert staged_tokens == fed_tokens
    assert [(p, d) for p, d, _ in staged] == [(p, d) for p, d, _ in fed] and len(staged) >= 4
    for (_, _, a), (_, _, b) in zip(staged, fed):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    # fed at once: a one-row decode per plain step; staged: the six rows of a plain run in one
    assert fed_feeds.count(1) >= 6 * len(fed)
    assert 6 in staged_feeds and staged_feeds.count(1) < fed_feeds.count(1) // 3


def test_a_trim_drops_staged_rows_at_and_past_its_end(llama_pair):
    """Staged rows are positions of the conversation: a trim (a new prompt parting from the old
    one) must not feed the draft the old conversation's rows at those positions."""
    with engine(llama_pair.target, llama_pair.draft) as eng:
        eng.policy = Schedule([0])  # type: ignore[assignment]  (every step plain and fed: staged)
        run(eng, PROMPT, max_tokens=12)
        ds = eng.ds
        assert ds is not None
        end = ds.end
        assert ds.ready() == len(eng._kv) > end  # the reply's plain steps are staged, not fed
        assert ds.trim(end + 3)
        assert ds.ready() == end + 3
        assert ds.trim(end)
        assert ds.ready() == end


def test_the_stage_keeps_the_last_rows_only(llama_pair):
    """A plain run longer than the stage: its first rows go blank, its last STAGE_ROWS are fed."""
    with engine(llama_pair.target, llama_pair.draft) as eng:
        eng.policy = Schedule([0])  # type: ignore[assignment]
        run(eng, PROMPT, max_tokens=STAGE_ROWS + 20)
        ds = eng.ds
        assert ds is not None
        pos = len(eng._kv)
        assert pos - ds.end > STAGE_ROWS and ds.ready() == ds.end  # its first rows fell off the stage
        rows: list[np.ndarray] = []
        real = ds.ctx.decode_embd

        def spy(n: int, pos0: int, n_pos: int) -> int:
            rows.append(ds.ctx.embd_rows(ds._stage.shape[1])[:n].copy())
            return real(n, pos0, n_pos)

        ds.ctx.decode_embd = spy  # type: ignore[method-assign]
        first = ds.end
        ds.fill_gap(pos)
        fed = np.concatenate(rows)
        assert fed.shape[0] == pos - first
        blank = np.all(fed == 0.0, axis=1)
        assert blank[: pos - first - STAGE_ROWS].all() and not blank[pos - first - STAGE_ROWS :].any()


def test_a_fed_plain_step_is_priced_with_its_share_of_the_feeding(llama_pair):
    """Staging a row costs a copy; the row is fed later, in a decode of several. The policy prices a
    fed plain step at the copy plus one row's share of the last such decode (`row_seconds`): priced
    at the copy alone, warm-ups looked free and the probe gap ignored what feeding them costs."""
    seen: list[tuple[bool, float, float]] = []
    with engine(llama_pair.target, llama_pair.draft) as eng:
        ds = eng.ds
        assert ds is not None

        class Priced(Schedule):
            def record(self, k: int, n_accepted: int, draft_seconds: float, verify_seconds: float,
                       fed: bool = True, asked: int | None = None) -> None:
                if k == 0:
                    seen.append((fed, draft_seconds, ds.row_seconds))

        eng.policy = Priced(KS)  # type: ignore[assignment]
        run(eng, PROMPT, max_tokens=20)
    fed = [(d, r) for f, d, r in seen if f]
    assert len(fed) >= 12 and all(0 < r <= d for d, r in fed)
