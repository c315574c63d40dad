"""Notice a reply that has fallen into a loop: the same block of tokens over and over.

Small models do this often: asked for a follow-up, SmolLM2-135M-Instruct wrote the line
`line.strip().startswith('#') and` about eighty times, until the reply's 1,024-token limit (18 s on
a 2-core CPU), and a regenerated essay repeated one paragraph to the end. The app stops such a reply
once one block has come back `min_repeats` times in a row and the loop covers `min_span` tokens,
and says why; nothing is changed before that point, so the tokens are still exactly the target's
(greedy or sampled, with or without DFlash: the guard sees the same tokens one at a time).

How: every token, the n-gram it ends is looked up in a dict of where each n-gram last ended; the
distance to it is a candidate period p, and from then on each token is checked against the token p
before it. A candidate lives while that holds and is dropped at the first token where it does not,
so only a handful are followed at once (a loop whose block repeats a sentence inside it offers the
sentence's distance and the block's: the first dies at the next block, the second lives). About
1 µs a token, nothing that grows with the period.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NGRAM = 8  # tokens an occurrence must match on: shorter repeats (a list's "- ", a table's "|") are normal
MAX_PERIOD = 256  # longer blocks are not looked for: four of them would not fit a usual reply
MIN_REPEATS = 4  # copies of the block in a row
MIN_SPAN = 128  # tokens the loop must cover in all: a short stretch of a repeated line is often intended


@dataclass
class LoopGuard:
    """Feed it a reply's tokens in order; `feed` says when the reply has become a loop."""

    ngram: int = NGRAM
    max_period: int = MAX_PERIOD
    min_repeats: int = MIN_REPEATS
    min_span: int = MIN_SPAN
    tokens: list[int] = field(default_factory=list)
    _last: dict[tuple[int, ...], int] = field(default_factory=dict)
    _runs: dict[int, int] = field(default_factory=dict)  # candidate period -> tokens in a row equal to the one p before
    period: int = 0  # the loop's period, once one was found

    def feed(self, token: int) -> bool:
        """Add the next token; True when the reply now loops (and from then on)."""
        toks = self.tokens
        toks.append(token)
        if self.period:
            return True
        i = len(toks)
        runs = self._runs
        for p in list(runs):
            if toks[i - 1 - p] == token:
                runs[p] += 1
            else:
                del runs[p]
        if i >= self.ngram:
            key = tuple(toks[i - self.ngram:i])
            prev = self._last.get(key)
            self._last[key] = i
            if prev is not None and i - prev <= self.max_period and i - prev not in runs:
                runs[i - prev] = self.ngram  # the n-gram's tokens each equal the one a period before
        for p, run in runs.items():
            span = run + p  # the first copy and every token since that repeated it
            if span >= self.min_span and span >= self.min_repeats * p:
                self.period = p
                return True
        return False

    def feed_all(self, tokens: list[int]) -> int | None:
        """Feed tokens in order; the index in `tokens` of the one that completed a loop, or None."""
        for j, t in enumerate(tokens):
            if self.feed(t):
                return j
        return None
