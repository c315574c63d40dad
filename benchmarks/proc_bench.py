"""The engine process hop: tokens/s through EngineProcess (what the app's worker uses) vs the Engine
in-process, on the bundled demo pair, interleaved in one run.

    .venv/bin/python benchmarks/proc_bench.py [--repeats 5] [--max-tokens 128]

Two figures per side: the engine's own tokens/s (its clock, inside whichever process runs it) and the
caller's tokens/s (tokens over the wall time from the first step seen to Finished, as the worker sees
them). The target is a ratio >= 0.98 for the caller's figure. Fails when nothing was generated or the
tokens differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PROMPTS = ["Write a class for a stack", "Write a function that parses a date", "Write a function that sorts a list",
           "Write a long module with many functions"]


def _run(engine, tokens: list[int], max_tokens: int) -> tuple[list[int], float, float]:  # noqa: ANN001
    from atomicchat.engine import Finished, GenParams

    first = None
    for ev in engine.generate(tokens, GenParams(max_tokens=max_tokens)):
        if first is None:
            first = time.perf_counter()
        if isinstance(ev, Finished):
            wall = time.perf_counter() - first
            n = ev.stats.n_generated
            return ev.tokens, ev.stats.tokens_per_second, (n - 1) / wall if wall > 0 else 0.0
    raise RuntimeError("no Finished")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=128)
    args = ap.parse_args()
    from atomicchat import demo
    from atomicchat.engine import Engine, EngineConfig
    from atomicchat.engine.proc import EngineProcess

    cfg = EngineConfig(demo.demo_target_path(), demo.demo_draft_path(), n_ctx=2048, n_threads=1)
    rows: dict[str, list[float]] = {k: [] for k in ("process engine", "process caller", "in-process engine",
                                                    "in-process caller")}
    generated = 0
    with Engine(cfg) as local, EngineProcess(cfg) as child:
        for r in range(args.repeats):
            for p in PROMPTS:
                tokens = local.chat_prompt([{"role": "user", "content": p}])
                order = ((child, "process"), (local, "in-process"))
                for eng, name in order if r % 2 == 0 else order[::-1]:
                    toks, tps, caller = _run(eng, tokens, args.max_tokens)
                    rows[f"{name} engine"].append(tps)
                    rows[f"{name} caller"].append(caller)
                    generated += len(toks)
                    if name == "process":
                        got = toks
                    else:
                        ref = toks
                if got != ref:
                    print(f"FAIL: tokens differ for {p!r}", file=sys.stderr)
                    return 1
    if not generated:
        print("FAIL: nothing was generated", file=sys.stderr)
        return 1
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"demo pair, greedy, {args.max_tokens} tokens, {len(PROMPTS)} prompts x {args.repeats} repeats, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for k, v in med.items():
        print(f"  {k:18} {v:8.1f} tok/s")
    print(f"  ratio process/in-process: caller {med['process caller'] / med['in-process caller']:.3f}, "
          f"engine {med['process engine'] / med['in-process engine']:.3f}; tokens identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
