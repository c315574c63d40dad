"""The bundled demo pair on this machine: DFlash vs target-only, side by side in one run.

Two engines are loaded from resources/demo/ with the same settings: one with the target only, one
with the target + DFlash draft. Each repeat runs every prompt on both (the order alternates between
repeats, so a busy neighbour process hurts both alike); greedy, a fixed number of new tokens.
Reported: the median tokens/s of each mode, their ratio, the median of the per-pair ratios, the
acceptance (accepted / drafted), tau (tokens per draft step = accepted per step + 1), and whether
every DFlash output equalled the target-only output token for token.

    .venv/bin/python benchmarks/demo_bench.py                 # defaults: 5 repeats x 6 prompts, 128 tokens
    .venv/bin/python benchmarks/demo_bench.py --threads 2 --draft-max 5 --json out/demo_bench.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atomicchat.demo import demo_draft_path, demo_target_path  # noqa: E402
from atomicchat.engine import Engine, EngineConfig  # noqa: E402
from benchmarks.common import run_once  # noqa: E402

PROMPTS = [
    "Write a Python function `read_config` that parses an INI file.",
    "Show me the `dedent` function from the `textwrap` module.",
    "Write a Python class `LRUCache`.",
    "How is `urljoin` implemented in `urllib.parse`?",
    "Return a list of all the files in a directory tree.",
    "Implement `quote(s, safe)` in Python.",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", type=Path, default=None, help="default: the bundled demo target")
    ap.add_argument("--draft", type=Path, default=None, help="default: the bundled demo draft")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=None, help="default: the engine's choice")
    ap.add_argument("--draft-max", type=int, default=None, help="default: block_size - 1")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    a = ap.parse_args(argv)
    target = a.target or demo_target_path()
    draft = a.draft or demo_draft_path()
    cfg = dict(n_ctx=2048, n_threads=a.threads)
    base = Engine(EngineConfig(target_path=target, **cfg))
    spec = Engine(EngineConfig(target_path=target, draft_path=draft, draft_max=a.draft_max, **cfg))
    try:
        prompts = [spec.chat_prompt([{"role": "user", "content": p}]) for p in PROMPTS]
        # warm-up: first decodes pay for graph allocation
        run_once(base, prompts[0], 16, False, None)
        run_once(spec, prompts[0], 16, True, a.draft_max)
        tps = {"target": [], "dflash": []}
        ratios, identical = [], True
        drafted = accepted = draft_steps = generated = 0
        t0 = time.time()
        for r in range(a.repeats):
            for i, p in enumerate(prompts):
                order = ("target", "dflash") if (r + i) % 2 == 0 else ("dflash", "target")
                res = {}
                for mode in order:
                    eng = base if mode == "target" else spec
                    res[mode] = run_once(eng, p, a.max_tokens, mode == "dflash", a.draft_max)
                    tps[mode].append(res[mode].stats.tokens_per_second)
                s = res["dflash"].stats
                drafted += s.n_drafted
                accepted += s.n_accepted
                draft_steps += s.n_draft_steps
                generated += s.n_generated
                identical &= res["dflash"].tokens == res["target"].tokens
                ratios.append(s.tokens_per_second / res["target"].stats.tokens_per_second)
        med_t, med_d = statistics.median(tps["target"]), statistics.median(tps["dflash"])
        out = {
            "target": str(target.name), "draft": str(draft.name),
            "threads": a.threads, "draft_max": spec.info.draft_max if a.draft_max is None else a.draft_max,
            "block_size": spec.info.block_size, "repeats": a.repeats, "prompts": len(prompts),
            "max_tokens": a.max_tokens,
            "target_only_tps_median": round(med_t, 1), "dflash_tps_median": round(med_d, 1),
            "speedup_of_medians": round(med_d / med_t, 3),
            "speedup_median_of_pairs": round(statistics.median(ratios), 3),
            "acceptance": round(accepted / drafted, 4) if drafted else 0.0,
            "tau": round(accepted / draft_steps + 1, 3) if draft_steps else 1.0,
            "tokens_generated_dflash": generated,
            "greedy_identical": identical,
            "wall_seconds": round(time.time() - t0, 1),
        }
    finally:
        spec.close()
        base.close()
    print(f"demo pair: {out['target']} + {out['draft']}  (draft_max {out['draft_max']}, threads {a.threads or 'auto'})")
    print(f"  target-only  {out['target_only_tps_median']:8.1f} tok/s (median of {len(tps['target'])})")
    print(f"  DFlash       {out['dflash_tps_median']:8.1f} tok/s (median of {len(tps['dflash'])})")
    print(f"  speed-up     {out['speedup_of_medians']:.2f}x (median of per-pair ratios "
          f"{out['speedup_median_of_pairs']:.2f}x)")
    print(f"  acceptance   {out['acceptance']:.1%}   tau {out['tau']:.2f}   "
          f"greedy output identical: {out['greedy_identical']}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(out, indent=1))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
