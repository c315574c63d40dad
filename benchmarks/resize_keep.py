"""What keeping the conversation across a hybrid target's snapshot resize saves (issue 13).

The adaptive engine drops a hybrid target's rollback snapshots while no drafted token is accepted and
brings them back when one is (`Engine._resize_rollback`); either way its contexts are made again.
This times the first token of the next reply after such a resize, with the conversation copied
across (the engine's way) and with the copy off (`KEEP_STATE_MAX_BYTES` = 0: the reply reads the whole
conversation again), on a fresh engine each time, alternating:

    python benchmarks/resize_keep.py --tokens 1000,3000             # the generated tiny-qwen35 pair
    python benchmarks/resize_keep.py --pair T.gguf,D.gguf --tokens 2000 [--gpu-layers -1]

Times include making the contexts again and pricing a plain step, which both ways pay alike.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atomicchat.engine import Engine, EngineConfig, Finished, GenParams  # noqa: E402
from atomicchat.engine import engine as engine_mod  # noqa: E402
from benchmarks import bench  # noqa: E402


def first_token_after_resize(eng: Engine, n_tokens: int, seed: int) -> tuple[float, int]:
    """Seconds from the snapshot resize to the first token of a second turn (the copy, the new
    contexts, a plain step priced, the prefill); and how many prompt tokens that turn found cached."""
    rng = random.Random(seed)
    history = [rng.randrange(5, eng.n_vocab) for _ in range(n_tokens)]
    params = GenParams(max_tokens=8, temperature=0.0, draft_max=1)  # pinned: no resize of its own
    first = [ev for ev in eng.generate(history, params) if isinstance(ev, Finished)][0]
    history = history + first.tokens + [7, 8]
    t0 = time.perf_counter()
    eng._resize_rollback(0 if eng.n_rs_seq else eng.draft_max)  # what the policy asks between replies
    seconds, cached = None, 0
    for ev in eng.generate(history, params):
        seconds = time.perf_counter() - t0 if seconds is None else seconds
        if isinstance(ev, Finished):
            cached = ev.stats.n_prompt_cached
    assert seconds is not None
    return seconds, cached


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pair", default=None, help="TARGET,DRAFT (a hybrid target); default the tiny-qwen35 pair")
    ap.add_argument("--tokens", default="1000,3000", help="conversation lengths, comma-separated")
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--gpu-layers", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "atomicchat" / "bench-models")
    a = ap.parse_args(argv)
    if a.pair:
        target, _, draft = a.pair.partition(",")
        pair = (Path(target), Path(draft))
    else:
        p = bench.tiny_pairs(["tiny-qwen35"], a.cache)[0]
        pair = (p.target, p.draft)
    lengths = [int(x) for x in a.tokens.split(",") if x.strip()]
    cfg = EngineConfig(pair[0], pair[1], n_ctx=max(lengths) + 64, n_threads=a.threads, n_gpu_layers=a.gpu_layers)
    print(f"load average {os.getloadavg()[0]:.2f}; {pair[0].name} + {pair[1].name}; {a.repeats} fresh engines a way")
    cap = engine_mod.KEEP_STATE_MAX_BYTES
    for n in lengths:
        got: dict[str, list[tuple[float, int]]] = {"copied back": [], "read again": []}
        try:
            for rep in range(a.repeats):
                for way in sorted(got, reverse=bool(rep % 2)):
                    engine_mod.KEEP_STATE_MAX_BYTES = cap if way == "copied back" else 0
                    with Engine(cfg) as eng:
                        if not eng.target.is_hybrid:
                            raise SystemExit("resize_keep: the target is not hybrid: it has no snapshots to resize")
                        got[way].append(first_token_after_resize(eng, n, rep))
        finally:  # the engine module's cap, as it was, whatever failed
            engine_mod.KEEP_STATE_MAX_BYTES = cap
        kept = {c for _, c in got["copied back"]}
        if min(kept) < n or any(c for _, c in got["read again"]):
            raise SystemExit(f"resize_keep: the copy did not keep the conversation (cached {sorted(kept)})")
        cells = ", ".join(f"{w} {statistics.median(s for s, _ in v) * 1e3:.1f} ms" for w, v in got.items())
        print(f"{n:>6} tokens: first token after the resize, median: {cells}")
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
