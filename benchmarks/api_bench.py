"""Tokens/s through the local OpenAI-compatible server vs the engine in-process, same pair, one run.

    .venv/bin/python benchmarks/api_bench.py [--repeats 5] [--max-tokens 128]

Both sides run greedy on the same prompts, interleaved (server, engine, server, ...), with one thread.
Server tokens/s is the `timings.predicted_per_second` the server reports (the engine's own clock inside
the server process) and, separately, completion tokens over the client's wall time for the request;
the in-process figure is the engine's own. Fails when nothing was generated or the texts differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PROMPTS = [
    "Write a class for a stack",
    "Write a function that parses a date",
    "Write a long module with many functions",
    "Write a function that sorts a list",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--ctx", type=int, default=2048)
    args = ap.parse_args()
    import openai

    from atomicchat import demo
    from atomicchat.engine import Engine, EngineConfig, Finished, GenParams
    from atomicchat.server.process import ServerProcess, isolated_env

    target, draft = demo.demo_target_path(), demo.demo_draft_path()
    common = ["--model", str(target), "--draft", str(draft), "--ctx", str(args.ctx), "--threads", "1"]
    eng = Engine(EngineConfig(target, draft, n_ctx=args.ctx, n_threads=1))
    rows: dict[str, list[float]] = {"server (engine clock)": [], "server (client wall)": [], "in-process": []}
    tokens = {"server": 0, "in-process": 0}
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(common, env=isolated_env(Path(tmp))) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="none", max_retries=0, timeout=300)
        for _ in range(args.repeats):
            for p in PROMPTS:
                msgs = [{"role": "user", "content": p}]
                t0 = time.perf_counter()
                r = client.chat.completions.create(model=srv.model_id, messages=msgs, max_tokens=args.max_tokens,
                                                   temperature=0)
                wall = time.perf_counter() - t0
                t = r.model_extra["timings"]
                final = None
                for ev in eng.generate(eng.chat_prompt(msgs), GenParams(max_tokens=args.max_tokens)):
                    if isinstance(ev, Finished):
                        final = ev
                assert final is not None
                if r.choices[0].message.content != final.text:
                    print(f"FAIL: server and engine texts differ for {p!r}", file=sys.stderr)
                    return 1
                rows["server (engine clock)"].append(t["predicted_per_second"])
                rows["server (client wall)"].append(r.usage.completion_tokens / wall)
                rows["in-process"].append(final.stats.tokens_per_second)
                tokens["server"] += r.usage.completion_tokens
                tokens["in-process"] += final.stats.n_generated
    eng.close()
    if not tokens["server"] or not tokens["in-process"]:
        print("FAIL: nothing was generated", file=sys.stderr)
        return 1
    base = statistics.median(rows["in-process"])
    print(f"demo pair, greedy, {args.max_tokens} max tokens, {len(PROMPTS)} prompts x {args.repeats} repeats, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'path':24} {'median tok/s':>12} {'vs in-process':>14}")
    for name, xs in rows.items():
        m = statistics.median(xs)
        print(f"{name:24} {m:12.1f} {m / base:13.3f}x")
    print(f"tokens: server {tokens['server']}, in-process {tokens['in-process']}; texts identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
