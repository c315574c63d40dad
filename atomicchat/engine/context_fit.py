"""Fit a conversation into the context window by leaving out its oldest turns.

A chat that outgrows the context should keep working: the system prompt and the newest messages
stay, the oldest user/assistant turns are dropped whole, and the caller is told how many.
"""

from __future__ import annotations

from typing import Any

from atomicchat.engine.errors import ContextFullError


def fit_chat(
    engine: Any, messages: list[dict[str, str]], reserve: int, enable_thinking: bool | None = None
) -> tuple[list[int], int]:
    """Tokens of the longest suffix of `messages` (plus system prompts) that leaves `reserve`
    tokens free for the reply; returns (tokens, number of messages left out)."""
    n_ctx = int(engine.n_ctx)
    budget = max(1, n_ctx - max(0, reserve))
    system = [m for m in messages if m.get("role") == "system"]
    turns = [m for m in messages if m.get("role") != "system"]
    tokens = engine.chat_prompt(messages, enable_thinking=enable_thinking)
    if len(tokens) <= budget:
        return tokens, 0
    # binary search the number of leading turns to drop; the last turn is never dropped
    lo, hi = 1, max(1, len(turns) - 1)
    best: tuple[list[int], int] | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        kept = turns[mid:]
        while kept and kept[0].get("role") == "assistant":  # start on a user turn
            kept = kept[1:]
        cand = engine.chat_prompt(system + kept, enable_thinking=enable_thinking) if kept else []
        if kept and len(cand) <= budget:
            best, hi = (cand, len(turns) - len(kept)), mid - 1
        else:
            lo = mid + 1
    if best is None:
        raise ContextFullError(
            f"The last message alone needs more than the context of {n_ctx} tokens (with {reserve} kept for the "
            "reply). Shorten it, or raise the context size in Settings."
        )
    return best
