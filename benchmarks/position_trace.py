"""Record, at every position of a pair's greedy replies, how many drafted tokens the target would accept.

A draft step's acceptance depends on where in the reply it starts, and which positions a policy
drafts from depends on the policy. So this records the content itself: for each reply (adaptive_bench's
prompts, greedy, target-only), at every position, the draft's block of each length 1..k_max drafted
from there and compared with the target's own continuation (the match length, by block length: the
engine drafts a block of the length the adaptive policy asks for). The draft is fed every position,
as in a drafting run. benchmarks/content_sim.py replays policies on these replies, exactly where
they would draft, which seeded acceptance cannot do: real content has stretches the draft misses
and stretches it gets right, in the order replies have them.

    .venv/bin/python benchmarks/position_trace.py demo-f32 prose --out /tmp/demo-f32-prose.json
    .venv/bin/python benchmarks/position_trace.py smollm2-q4_1 code --out /tmp/smol-code.json

Each position drafts every length twice (with and without the cut): a case of 6 replies took 20 s on
the demo pair and 105-124 s on SmolLM2 Q4_1 (2-core EPYC, 2026-12-08).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from atomicchat.engine import Engine, EngineConfig, GenParams  # noqa: E402
from atomicchat.engine.draft_confidence import DEFAULT_P_MIN  # noqa: E402
from atomicchat.engine.engine import _common_prefix  # noqa: E402
from atomicchat.engine.sampling import Sampler  # noqa: E402
from atomicchat.engine.types import Finished  # noqa: E402


def record_reply(eng: Engine, prompt: list[int], max_tokens: int, p_min: float = DEFAULT_P_MIN) -> list[list[list[int]]]:
    """Per position after the reply's first token, two lists by block length 1..draft_max: the
    match length of the block drafted there, and how many of its tokens the draft's confidence cut
    (`p_min`, engine/draft_confidence.py) keeps. The target's greedy reply is generated first, then
    the positions are walked with plain steps that feed the draft, checked against that reply."""
    eng.reset()
    ref: list[int] = []
    for ev in eng.generate(prompt, GenParams(max_tokens=max_tokens, use_draft=False)):
        if isinstance(ev, Finished):
            ref = list(ev.tokens)
    eng.reset()
    sampler = Sampler(GenParams(), eng.n_vocab)
    rows: list[list[list[int]]] = []
    ds = eng.ds
    assert ds is not None  # a pair
    try:
        eng._prefill(prompt, eng._prepare_cache(prompt, True), inject=True)
        if not ref or eng._first_token(sampler) != ref[0]:
            raise SystemExit("position_trace: the reply's first token differs from target-only's")
        pos = len(prompt)
        for i in range(len(ref) - 1):
            sizes = range(1, eng.draft_max + 1)
            rows.append([[_common_prefix(ds.draft_block(ref[i], pos, b, b), ref[i + 1 :]) for b in sizes],
                         [len(ds.draft_block(ref[i], pos, b, b, p_min)) for b in sizes]])
            if eng._plain_step(ref[i], pos, sampler)[0] != ref[i + 1]:
                raise SystemExit(f"position_trace: a plain step differs from target-only's at token {i + 1}")
            eng._inject(1, pos)  # fed every position, as in a drafting run
            pos += 1
    finally:
        sampler.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    import adaptive_bench
    import bench
    from atomicchat.demo import demo_draft_path, demo_target_path

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", choices=("demo-f32", "smollm2-q4_1"))
    ap.add_argument("kind", choices=("code", "prose"))
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--p-min", type=float, default=DEFAULT_P_MIN, help="the confidence cut whose kept lengths to record")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    if a.case == "demo-f32":
        target, draft = Path(demo_target_path()), Path(demo_draft_path())
        texts = adaptive_bench.CODE_PROMPTS if a.kind == "code" else adaptive_bench.PROSE_PROMPTS
    else:
        pair = bench.smollm2_pair()
        if pair is None:
            print("position_trace: SmolLM2 or its draft is not installed", file=sys.stderr)
            return 1
        target, draft, texts = pair.target, pair.draft, adaptive_bench.SMOL_PROMPTS[a.kind]
    t0 = time.perf_counter()
    with Engine(EngineConfig(target, draft, n_ctx=2048, n_gpu_layers=0, n_threads=a.threads)) as eng:
        replies = [record_reply(eng, eng.chat_prompt([{"role": "user", "content": t}]), a.max_tokens, a.p_min)
                   for t in texts[: a.prompts]]
        k_max = eng.draft_max
    positions = sum(len(r) for r in replies)
    if not positions:
        print("position_trace: no position was recorded", file=sys.stderr)
        return 1
    out = {"case": f"{a.case} {a.kind}", "target": target.name, "draft": draft.name, "k_max": k_max,
           "p_min": a.p_min, "load_average": os.getloadavg(), "prompts": list(texts[: a.prompts]), "replies": replies}
    a.out.write_text(json.dumps(out, separators=(",", ":")))
    full = [row for r in replies for row in r]
    print(f"{out['case']}: {len(replies)} replies, {positions} positions in {time.perf_counter() - t0:.0f} s; "
          f"a length-{k_max} block: first token accepted at {sum(1 for m, _ in full if m[-1]) / positions:.3f} "
          f"of positions, {sum(m[-1] for m, _ in full) / positions:.2f} tokens matched on average, "
          f"{sum(c[-1] for _, c in full) / positions:.2f} kept by the confidence cut ({a.p_min})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
