"""Measure the target alone, at two context lengths: the denominator of the speedup figure.

One greedy run with the draft off after a short prompt, and one after a long prompt (made of a
neutral paragraph repeated), so the figure can compare a reply with the target-only speed at the
context positions the reply itself used (atomicchat.stats.TargetSpeed). The long run is skipped
where its prefill would take too long (a large model on a CPU) or the context is too small; the
speed is then taken as flat, as before. Works with an in-process Engine or an EngineProcess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomicchat.engine.errors import EngineError
from atomicchat.engine.types import Finished, GenParams
from atomicchat.stats import MIN_RATE_TOKENS, TargetSpeed

NEAR_PROMPT = "Write one short paragraph about the sea."
NEAR_TOKENS = 64
# A run of the short prompt before the measured one, thrown away: a model's first tokens after its load
# (or after a while idle) run slow, and the baseline is measured once per model, right after its load.
# Demo F32 on a 2-core Xeon whose L3 holds the model (2026-12-07): 368 tok/s measured right after the
# load where the same run a moment later gave 495 and steady decoding 512-548; the speedup figure over
# such a baseline reads up to 1.4x for a reply no faster than the target alone.
WARM_TOKENS = 16
FAR_TOKENS = 32
FAR_DEPTH = 1024  # context positions the long run starts at, at most
FAR_BUDGET_S = 4.0  # what the long run's prefill may take, estimated from the short run
FAR_MIN_DEPTH = 256  # below this the two runs are too close for a slope worth the wait
FILLER = (
    "The committee met on Tuesday to review the plans for the new library. The architect showed "
    "drawings of the reading room, the children's corner and the garden at the back. Several members "
    "asked about the budget, the opening hours and the number of computers for visitors. "
)
FAR_QUESTION = "\n\nSummarize these meeting notes in one short paragraph."


def _run(eng: Any, tokens: list[int], max_tokens: int, should_stop: Callable[[], bool]) -> Finished:
    params = GenParams(max_tokens=max_tokens, temperature=0.0, use_draft=False)
    final = None
    for ev in eng.generate(tokens, params, should_stop=should_stop):
        if isinstance(ev, Finished):
            final = ev
    if final is None or final.reason == "cancelled":
        raise EngineError("The baseline measurement was stopped; try again.")
    return final


def far_prompt(eng: Any, depth: int) -> list[int]:
    """A chat prompt of about `depth` tokens (not more), or [] when even the shortest is longer."""

    def prompt(units: int) -> list[int]:
        return eng.chat_prompt([{"role": "user", "content": FILLER * units + FAR_QUESTION}], enable_thinking=False)

    one, two = prompt(1), prompt(2)
    per = max(1, len(two) - len(one))
    units = max(1, 1 + (depth - len(one)) // per)
    tokens = prompt(units)
    while len(tokens) > depth and units > 1:
        units -= 1
        tokens = prompt(units)
    return tokens if len(tokens) <= depth else []


def measure(
    eng: Any,
    should_stop: Callable[[], bool] = lambda: False,
    near_tokens: int = NEAR_TOKENS,
    far_budget_s: float = FAR_BUDGET_S,
) -> TargetSpeed:
    """Target-only speed after a short and, when affordable (its prefill estimated to take at most
    far_budget_s), a long prompt; after a warm-up run that is not measured (`WARM_TOKENS`)."""
    near_prompt = eng.chat_prompt([{"role": "user", "content": NEAR_PROMPT}], enable_thinking=False)
    _run(eng, near_prompt, WARM_TOKENS, should_stop)
    eng.reset()  # the measured run reads its prompt again: its prefill rate sizes the long run
    near = _run(eng, near_prompt, near_tokens, should_stop)
    s = near.stats
    if s.n_generated < 4:
        raise EngineError("The baseline measurement produced too few tokens; try again.")
    n_new = s.n_prompt - s.n_prompt_cached
    prefill_tps = max(s.tokens_per_second, n_new / s.prefill_seconds if n_new >= 8 and s.prefill_seconds > 0 else 0.0)
    depth = int(min(FAR_DEPTH, int(eng.n_ctx) - FAR_TOKENS - 16, prefill_tps * far_budget_s))
    far = None
    n_far = 0
    if depth >= FAR_MIN_DEPTH:
        tokens = far_prompt(eng, depth)
        if len(tokens) >= FAR_MIN_DEPTH:
            run = _run(eng, tokens, FAR_TOKENS, should_stop)
            if run.stats.n_generated >= MIN_RATE_TOKENS:  # an early end says nothing about the slope
                far, n_far = run.stats, len(tokens)
    return TargetSpeed.fit(s, len(near_prompt), far, n_far)
