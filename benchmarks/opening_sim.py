"""The adaptive policy on simulated chats whose replies open with text the draft gets right.

A reply's first tokens are drafted right far more often than the rest (measured 2026-12-07 on the
2-core Xeon, adaptive_bench's prompts, greedy, fixed lengths; accepted tokens per draft step in a
reply's first 24 tokens against after them): demo F32, length 4: 3.85 of 4 against 2.46; length 2:
1.90 against 1.58. SmolLM2 Q4_1 (its held-out prompts), length 4: 0.91 against 0.71; length 2: 0.75
against 0.61. A policy that learns the draft's acceptance from a model's first steps (the sweep) learns
it from the easy part. On the engine, the first replies of fresh policies are too noisy to compare two
policies by: the same policy twice parted by 0.78-1.15x per reply on SmolLM2 there. This replays
policies on recorded costs instead, with seeded acceptance and cost noise, so a change shows to a
tenth of a percent, and on the same chats every fixed length and plain steps run:

    .venv/bin/python benchmarks/opening_sim.py                        # the working tree's policy
    .venv/bin/python benchmarks/opening_sim.py --policy-from HEAD     # beside HEAD's (or a file's)

Per scenario (costs, acceptance in a reply's opening and after it), for a model's first reply and for
its first ten, the tokens per second of each policy over a plain step's (plain = 1.000) and over the
best of the fixed lengths and plain steps on the same chats (each seed's best, averaged). The
simulator is the unit tests' (tests/engine/test_draft_policy.py: `simulate`), which prices what the
engine does: a reply's last steps capped, coasted plain steps, the load-time calibration. Not in it:
what the content does beyond the two acceptance levels, and how the engine's costs drift.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atomicchat.engine.draft_policy import DraftPolicy, FixedPolicy  # noqa: E402
from benchmarks.adaptive_bench import policy_class_at  # noqa: E402
from benchmarks.content_sim import STEP_S, noisy_costs  # noqa: E402
from tests.engine.test_draft_policy import (  # noqa: E402
    _F32_XEON_DRAFT,
    _F32_XEON_VERIFY,
    _cost_table,
    calibrated,
    simulate,
)


@dataclass(frozen=True)
class Costs:
    """What a pair's steps cost on one machine (ms by size: verify by tokens decoded, draft by tokens
    drafted), as an adaptive engine's cost tables had them."""

    name: str
    verify_ms: dict[int, float]
    draft_ms: dict[int, float]
    feed_ms: float  # feeding the draft one plain step's row
    switch_ms: float  # a step whose size differs from the step before (graphs re-planned)
    k_max: int = 7


COSTS = {
    # the first-run pair as the app runs it (2 threads), 2-core Xeon, 2026-12-07: a plain step 9.5 ms
    "smollm2-q4_1": Costs("smollm2-q4_1", {1: 9.5, 2: 14.3, 3: 17.2, 5: 24.5, 8: 36.8},
                          {1: 4.05, 2: 4.72, 4: 6.3, 7: 8.9}, 0.39, 1.0),
    # the demo pair as adaptive_bench runs it (1 thread), 2-core Xeon, 2026-12-07
    "demo-f32": Costs("demo-f32", _F32_XEON_VERIFY, _F32_XEON_DRAFT, 0.12, 0.2),
}

# (costs, acceptance a position in a reply's first `opening` tokens, after them)
SCENARIOS = [
    ("smollm2-q4_1", 0.85, 0.55),  # as measured: drafting never pays after the opening
    ("smollm2-q4_1", 0.8, 0.8),  # no opening effect, drafting a near tie
    ("demo-f32", 0.9, 0.8),  # drafting pays throughout
    ("demo-f32", 0.9, 0.6),  # the opening pays, the rest does not
]


def opening_matches(rng: random.Random, pos: Callable[[], int], opening: int, p_open: float, p_body: float,
                    cap: int) -> Iterator[int]:
    """Match lengths: each next drafted token accepted with p_open while the reply under way is in its
    first `opening` tokens (`pos`), p_body after."""
    while True:
        p = p_open if pos() < opening else p_body
        m = 0
        while m < cap and rng.random() < p:
            m += 1
        yield m


def tracked(cls: type) -> type:
    """`cls` counting the tokens of the reply under way (what the simulated content depends on)."""

    class Tracked(cls):  # type: ignore[misc, valid-type]
        def __init__(self, *a, **k) -> None:  # noqa: ANN002, ANN003
            super().__init__(*a, **k)
            self.reply_pos = 0

        def begin_reply(self) -> None:
            self.reply_pos = 0
            super().begin_reply()

        def record(self, k, n_accepted, draft_seconds, verify_seconds, fed=True, asked=None):  # noqa: ANN001
            self.reply_pos += n_accepted + 1
            super().record(k, n_accepted, draft_seconds, verify_seconds, fed, asked)

        def coast(self, limit: int) -> int:
            n = super().coast(limit)
            self.reply_pos += n  # a coasted stretch, counted when granted: its steps are never recorded
            return n

    return Tracked


def run(cls: type, costs: Costs, p_open: float, p_body: float, seed: int, n_tokens: int, reply_len: int,
        opening: int, noise: float, k: int | None = None) -> tuple[float, int]:
    """(tokens per second over a plain step's, steps) of one simulated chat; `k`: a fixed length."""
    verify, draft = _cost_table(costs.verify_ms), _cost_table(costs.draft_ms)
    pol = tracked(cls)(k if k is not None else costs.k_max)
    if k is None:
        calibrated(pol, verify, draft, feed=costs.feed_ms / 1e3)
    rng, nz = random.Random(seed), random.Random(seed + 7919)
    matches = opening_matches(rng, lambda: pol.reply_pos, opening, p_open, p_body, costs.k_max)
    rate, chosen = simulate(pol, noisy_costs(verify, nz, noise, None), noisy_costs(draft, nz, noise, None), matches,
                            n_tokens=n_tokens, reply_len=reply_len, feed=costs.feed_ms / 1e3 if k != 0 else 0.0,
                            switch=costs.switch_ms / 1e3, overhead=STEP_S)
    return rate * (verify(1) + STEP_S), len(chosen)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policy-from", action="append", default=[], metavar="REV",
                    help="also the policy as git revision REV had it, or a draft_policy.py file (repeatable)")
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--reply", type=int, default=128, help="tokens a reply")
    ap.add_argument("--replies", type=int, default=10)
    ap.add_argument("--opening", type=int, default=24, help="a reply's first tokens, accepted more often")
    ap.add_argument("--noise", type=float, default=0.06, help="sd of a step's cost, log scale")
    ap.add_argument("--scenarios", default="all", help="comma-separated indices into SCENARIOS, or all")
    a = ap.parse_args(argv)
    policies: dict[str, type] = {"adaptive": DraftPolicy}
    for where in a.policy_from:
        policies[f"adaptive {where}"] = policy_class_at(where)
    width = max(len(p) for p in policies)
    picked = SCENARIOS if a.scenarios == "all" else [SCENARIOS[int(i)] for i in a.scenarios.split(",")]
    print(f"{a.seeds} seeds, replies of {a.reply} tokens, the first {a.opening} of each in the opening; "
          "tokens/s over a plain step's (1.000), then over the best fixed length on the same chats")
    for name, p_open, p_body in picked:
        costs = COSTS[name]
        print(f"\n{name}: acceptance {p_open} in the opening, {p_body} after")
        for label, n_tok in (("first reply", a.reply), (f"first {a.replies} replies", a.reply * a.replies)):
            best = []
            for s in range(a.seeds):
                fixed = [run(FixedPolicy, costs, p_open, p_body, s, n_tok, a.reply, a.opening, a.noise, k=k)
                         for k in range(0, costs.k_max + 1)]
                if min(n for _, n in fixed) == 0:
                    raise SystemExit("opening_sim: a fixed length took no steps: nothing was measured")
                best.append(max(r for r, _ in fixed))
            for pname, cls in policies.items():
                got = [run(cls, costs, p_open, p_body, s, n_tok, a.reply, a.opening, a.noise) for s in range(a.seeds)]
                if min(n for _, n in got) == 0:
                    raise SystemExit(f"opening_sim: {pname} took no steps: nothing was measured")
                rates = [r for r, _ in got]
                over = [r / b for r, b in zip(rates, best)]
                print(f"  {label:17s} {pname:{width}s} {statistics.mean(rates):.3f} (worst {min(rates):.3f})   "
                      f"over best fixed {statistics.mean(over):.3f} (worst {min(over):.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
