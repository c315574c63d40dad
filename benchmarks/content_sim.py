"""The adaptive policy replayed on real replies: each step's acceptance is what the draft got at that
position of a recorded reply (benchmarks/position_trace.py), so dips and easy stretches come where
the content has them, and the fixed lengths and the policy run on the very same replies.

    .venv/bin/python benchmarks/content_sim.py TRACE.json [TRACE2.json ...] --costs COSTS.json
    .venv/bin/python benchmarks/content_sim.py TRACE.json --costs COSTS.json --plain-ms 1.95 --policy-from HEAD

COSTS.json is benchmarks/record_policy_trace.py's output (verify and draft ms by size, this machine);
`--plain-ms` sets a plain step's price apart (record_policy_trace prices a plain step that feeds the
draft, dearer than target-only's). The replies of every trace run in turn, `--repeats` times, the
policy priced again before each reply as adaptive_bench does, each cost drawn with log-normal
noise (`--noise`) and, with `--burst`, slow spells. Per policy: tokens per second over the best fixed
length or plain steps on the same replies and noise (each seed's best; mean and worst), over plain
steps, and the share of plain steps. Not in it: what feeding gaps do to the draft's acceptance (a
deep plain run leaves the draft's context with blank rows), and a draft block's cost beyond its size.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atomicchat.engine.draft_policy import DraftPolicy, FixedPolicy  # noqa: E402
from benchmarks.adaptive_bench import policy_class_at  # noqa: E402
from tests.engine.test_draft_policy import _cost_table, calibrated, simulate  # noqa: E402

STEP_S = 0.15e-3  # what a step costs besides its decodes (the engine's loop), as measured


def noisy_costs(f: Callable[[int], float], rng: random.Random, noise: float,
                burst: tuple[float, float, float] | None) -> Callable[[int], float]:
    """`f` with log-normal noise of sd `noise`, and with `burst` (p_in, p_out, factor) slow spells:
    each call enters one with probability p_in, leaves it with p_out, and costs `factor` times
    more inside."""
    state = [False]

    def g(n: int) -> float:
        if burst:
            state[0] = rng.random() >= burst[1] if state[0] else rng.random() < burst[0]
        return f(n) * rng.lognormvariate(0.0, noise) * (burst[2] if burst and state[0] else 1.0)

    return g


def replay(cls: type, replies: list[list[list[int]]], k_max: int, verify_ms: dict[int, float],
           draft_ms: dict[int, float], seed: int, repeats: int = 3, noise: float = 0.06,
           burst: tuple[float, float, float] | None = None, k: int | None = None, feed_ms: float = 0.12,
           switch_ms: float = 0.2) -> tuple[float, float]:
    """(tokens per second, share of plain steps) of one policy on the replies, in turn, `repeats`
    times; `k`: a pinned length (it drafts the full block and keeps k, as the engine does)."""
    verify, draft = _cost_table(verify_ms), _cost_table(draft_ms)
    rng = random.Random(seed + 7919)
    nv, nd = noisy_costs(verify, rng, noise, burst), noisy_costs(draft, rng, noise, burst)
    pol = cls(k if k is not None else k_max)

    def at_reply(_: int) -> None:
        if k is None:  # adaptive_bench prices the engine again before each prompt
            pol.forget_costs()
            calibrated(pol, nv, nd, feed=feed_ms / 1e3)

    def content(r: int, pos: int) -> list[list[int]]:
        rows = replies[r % len(replies)]
        match, kept = rows[pos] if pos < len(rows) else ([0] * k_max, [0] * k_max)
        if k is not None:  # the full block drafted, its first k kept, then cut
            return [[match[k_max - 1]] * k_max, [kept[k_max - 1]] * k_max]
        return [match, kept]

    lens = [len(r) + 1 for r in replies]  # the first token comes from the prefill
    rate, chosen = simulate(pol, nv, nd, iter(()), n_tokens=sum(lens) * repeats, reply_len=lens,
                            feed=feed_ms / 1e3 if k != 0 else 0.0, switch=switch_ms / 1e3, overhead=STEP_S,
                            content=content, at_reply=at_reply, built=set(range(k_max + 1)))
    if not chosen:
        raise SystemExit("content_sim: a policy took no steps: nothing was measured")
    return rate, chosen.count(0) / len(chosen)


def compare(policies: dict[str, type], replies: list[list[list[int]]], k_max: int, verify_ms: dict[int, float],
            draft_ms: dict[int, float], seeds: int, **kw: Any) -> dict[str, Any]:
    """Every fixed length and each policy on the same replies and noise, per seed."""
    fixed: dict[int, list[float]] = {k: [] for k in range(k_max + 1)}
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in policies}
    for s in range(seeds):
        for k in fixed:
            fixed[k].append(replay(FixedPolicy, replies, k_max, verify_ms, draft_ms, s, k=k, **kw)[0])
        for name, cls in policies.items():
            got[name].append(replay(cls, replies, k_max, verify_ms, draft_ms, s, **kw))
    best = [max(fixed[k][s] for k in fixed) for s in range(seeds)]
    out: dict[str, Any] = {"fixed": {k: statistics.mean(r / p for r, p in zip(v, fixed[0])) for k, v in fixed.items()}}
    for name, rs in got.items():
        over = [r / b for (r, _), b in zip(rs, best)]
        out[name] = {"over_best": statistics.mean(over), "worst": min(over),
                     "over_plain": statistics.mean(r / p for (r, _), p in zip(rs, fixed[0])),
                     "plain_share": statistics.mean(ps for _, ps in rs)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+", type=Path, help="benchmarks/position_trace.py outputs, replayed in turn")
    ap.add_argument("--costs", type=Path, required=True, help="benchmarks/record_policy_trace.py output")
    ap.add_argument("--plain-ms", type=float, default=None, help="a plain step's price (default: the costs')")
    ap.add_argument("--policy-from", action="append", default=[], metavar="REV",
                    help="also the policy as git revision REV had it, or a draft_policy.py file (repeatable)")
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--noise", type=float, default=0.06, help="sd of a step's cost, log scale")
    ap.add_argument("--burst", default=None, metavar="P_IN,P_OUT,FACTOR", help="slow spells, e.g. 0.0025,0.01,1.6")
    a = ap.parse_args(argv)
    traces = [json.loads(p.read_text()) for p in a.traces]
    costs = json.loads(a.costs.read_text())
    replies = [r for t in traces for r in t["replies"]]
    k_max = min(t["k_max"] for t in traces)
    if not replies or not any(replies):
        raise SystemExit("content_sim: the traces hold no positions: nothing to replay")
    verify_ms = {int(n): float(v) for n, v in costs["verify_ms"].items()}
    draft_ms = {int(n): float(v) for n, v in costs["draft_ms"].items()}
    if a.plain_ms is not None:
        verify_ms[1] = a.plain_ms
    burst = tuple(float(x) for x in a.burst.split(",")) if a.burst else None
    if burst is not None and len(burst) != 3:
        raise SystemExit("content_sim: --burst wants P_IN,P_OUT,FACTOR")
    policies: dict[str, type] = {"adaptive": DraftPolicy}
    for where in a.policy_from:
        policies[f"adaptive {where}"] = policy_class_at(where)
    res = compare(policies, replies, k_max, verify_ms, draft_ms, a.seeds, repeats=a.repeats, noise=a.noise,
                  burst=burst)
    print(f"{', '.join(t.get('case', '?') for t in traces)}: {len(replies)} replies x {a.repeats}, {a.seeds} seeds, "
          f"a plain step {verify_ms[1]:.2f} ms, noise {a.noise}{f', bursts {a.burst}' if burst else ''}")
    print("fixed lengths over plain steps: " + ", ".join(f"{k} {v:.3f}" for k, v in res["fixed"].items() if k))
    width = max(len(p) for p in policies)
    for name in policies:
        r = res[name]
        print(f"  {name:{width}s}  over the best fixed {r['over_best']:.3f} (worst {r['worst']:.3f})   "
              f"over plain {r['over_plain']:.3f}   plain steps {r['plain_share']:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
