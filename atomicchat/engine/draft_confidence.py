"""The draft's confidence cut: stop a drafted block at its first token the draft itself doubts.

llama.cpp's speculative drafting (`--spec-draft-p-min`, common/speculative.cpp) reads each drafted
position through a top-k(10) sampler and breaks at the first position whose best candidate has a
probability below p_min, the probability being the softmax over those 10 candidates. The cut keeps
the output exact (the target still verifies every token it is given); it only stops paying the
verify for tokens that are likely to be rejected. The same definition is used here, so the engine's
drafted/accepted counts match llama-server's with the same `--spec-draft-p-min`.

Measured on SmolLM2-135M-Instruct (Q4_1) and its shipped draft, 6 code prompts x 128 tokens, 2026-12-06:
at draft length 7, p_min 0.4 drafted 684 tokens instead of 1,432 and accepted 402 instead of 415
(acceptance 29% -> 59%); resources/smollm2/MODEL_CARD.md has the speed of each setting.
"""

from __future__ import annotations

import numpy as np

from atomicchat.engine.errors import EngineError

TOP_K = 10  # llama.cpp's draft sampler: top-k 10, then the best of those
# A logit this far below the row's best adds less than exp(-30) to the softmax: cheaper to skip.
_FAR = 30.0
# Bands tried in turn: once one holds TOP_K logits, the top TOP_K are all inside it. The shipped SmolLM2
# draft has all 13,081 logits of its head within _FAR of the best, so selecting from that band alone cost
# ~150 us a row on the 2-core EPYC; the narrow band first, ~31 us (400 real rows, 2026-12-06).
_BANDS = (4.0, 10.0, _FAR)
DEFAULT_P_MIN = 0.4  # the engine's default cut (EngineConfig.draft_p_min None); 0 turns it off


def top_prob(row: np.ndarray, top_k: int = TOP_K) -> float:
    """The best token's probability in the softmax over the row's top_k logits."""
    best = float(row.max())
    for band in _BANDS:
        near = row[row >= best - band]
        if len(near) >= top_k:
            break
    if len(near) > top_k:
        near = np.partition(near, len(near) - top_k)[-top_k:]
    return float(1.0 / np.exp(near.astype(np.float64) - best).sum())


def confident_prefix(rows: np.ndarray, p_min: float) -> int:
    """How many leading rows (drafted positions, in order) to keep: up to the first below p_min."""
    if p_min <= 0.0:
        return len(rows)
    for j in range(len(rows)):
        if top_prob(rows[j]) < p_min:
            return j
    return len(rows)


def p_min_in_range(p_min: float) -> bool:
    """Whether a cut is a probability below 1 (1 would never draft): the rule the engine, the CLI
    flags and the benchmarks check."""
    return 0.0 <= p_min < 1.0


def check_p_min(p_min: float | None) -> None:
    """Refuse a cut that is not a probability below 1, with a sentence."""
    if p_min is None:
        return
    if isinstance(p_min, bool) or not isinstance(p_min, (int, float)) or not p_min_in_range(float(p_min)):
        raise EngineError(f"The draft confidence cut draft_p_min must be a number from 0 to below 1, not {p_min!r}.")
