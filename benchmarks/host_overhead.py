"""Host time per DFlash step outside llama_decode, at Qwen3.5's vocabulary (248,320), host vs on-device sampling.

A generated pair with a 248,320-token vocabulary (tests/gguf_factory.py, cached outside the repo;
tiny layers, so the full-vocabulary work shows) drafts a pinned block of --draft-max tokens per step
(0% acceptance: a 16-row verify and a 16-row draft every step). Every llama_decode call is timed;
host µs per step = (generation time - time inside llama_decode) / steps. Both paths run interleaved
in one process and must give identical tokens.

    .venv/bin/python benchmarks/host_overhead.py                # 3 rounds x 64 tokens, k = 15, CPU
    python benchmarks/host_overhead.py --gpu-layers -1             # every layer on the GPU (device_check.sh)

The engine samples on the host unless asked otherwise (on-device sampling was slower on the CPU and
on an H200: engine/device_sampling.py); this script forces each path in turn, so both are measured
wherever it runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atomicchat.engine import Engine, EngineConfig, Finished, GenParams  # noqa: E402

VOCAB = 248_320


def pair(cache: Path) -> tuple[Path, Path]:
    from tests.gguf_factory import DraftSpec, TargetSpec, write_draft, write_target

    t = TargetSpec(n_vocab=VOCAB, n_embd=64, seed=11)
    tp, dp = cache / "bigvocab-target.gguf", cache / "bigvocab-draft.gguf"
    cache.mkdir(parents=True, exist_ok=True)
    if not tp.exists():
        write_target(tp.with_suffix(".partial"), t).replace(tp)
    if not dp.exists():
        write_draft(dp.with_suffix(".partial"), t, DraftSpec(seed=12)).replace(dp)
    return tp, dp


class DecodeClock:
    """Wraps a context's llama_decode to sum the seconds spent inside it. On a GPU llama_decode
    returns once the graph is queued and the wait falls on the first read of its outputs, so the
    wrapper synchronizes inside the timed span: what stays outside is the host's own work."""

    def __init__(self, *contexts) -> None:  # noqa: ANN002
        from llama_cpp import llama_cpp as c

        self.seconds = 0.0
        sync = c.llama_synchronize
        for ctx in contexts:
            real = ctx._decode

            def timed(ptr, batch, _real=real, _sync=sync):  # noqa: ANN001, ANN202
                t = time.perf_counter()
                try:
                    return _real(ptr, batch)
                finally:
                    _sync(ptr)
                    self.seconds += time.perf_counter() - t

            ctx._decode = timed


def measure(eng: Engine, clock: DecodeClock, prompt: list[int], n: int, temperature: float) -> tuple[float, float, list[int]]:
    eng.reset()
    fin = None
    d0 = None
    for ev in eng.generate(prompt, GenParams(max_tokens=n, temperature=temperature, seed=1, top_k=40)):
        if d0 is None:
            d0 = clock.seconds  # after the prompt
        if isinstance(ev, Finished):
            fin = ev
    assert fin is not None and d0 is not None
    s = fin.stats
    steps = max(s.n_steps - 1, 1)
    host = (s.generate_seconds - (clock.seconds - d0)) / steps
    return host * 1e6, s.generate_seconds / steps * 1e3, list(fin.tokens)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draft-max", type=int, default=15)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--gpu-layers", type=int, default=0, help="layers on the GPU (default 0: CPU; -1: all)")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "atomicchat" / "bench-models")
    a = ap.parse_args(argv)
    tp, dp = pair(a.cache)
    engines = {}
    for name, ds in (("host", False), ("device", True)):
        e = Engine(EngineConfig(tp, dp, n_ctx=1024, n_gpu_layers=a.gpu_layers, n_threads=a.threads, draft_max=a.draft_max,
                                device_sampling=ds, draft_p_min=0.0))  # random draft: no confidence cut
        engines[name] = (e, DecodeClock(e.tctx, e.ds.ctx))
    info = engines["host"][0].info
    device = info.device
    if a.gpu_layers and not info.gpu_layers_used:
        for e, _ in engines.values():
            e.close()
        print(f"host_overhead: --gpu-layers {a.gpu_layers} asked, but no layer runs on a GPU ({device})", file=sys.stderr)
        return 1
    prompt = list(range(5, 37))
    load = os.getloadavg()
    rows = []
    try:
        for temp in (0.0, 0.8):
            res: dict[str, list[tuple[float, float]]] = {"host": [], "device": []}
            toks: dict[str, list[int]] = {}
            for r in range(a.rounds):
                for name in (("host", "device") if r % 2 == 0 else ("device", "host")):
                    e, clock = engines[name]
                    host_us, step_ms, out = measure(e, clock, prompt, a.tokens, temp)
                    res[name].append((host_us, step_ms))
                    toks.setdefault(name, out)
            if temp == 0.0 and toks["host"] != toks["device"]:
                print("host_overhead: the device path gave other tokens than the host path", file=sys.stderr)
                return 1
            for name, xs in res.items():
                if not xs:
                    print("host_overhead: nothing measured", file=sys.stderr)
                    return 1
                rows.append((temp, name, statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs)))
    finally:
        for e, _ in engines.values():
            e.close()
    print(f"vocab {VOCAB}, draft-max {a.draft_max} ({a.draft_max + 1}-row verify), {a.tokens} tokens x {a.rounds} rounds, "
          f"{a.threads} thread(s), {device}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'temperature':>11} {'path':<7} {'host µs/step outside decode':>28} {'ms/step':>8}")
    for temp, name, host_us, step_ms in rows:
        print(f"{temp:>11.1f} {name:<7} {host_us:>28.0f} {step_ms:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
