"""The Qwen3.5-9B stand-in (benchmarks/standin_9b.py) end to end on this machine: one run, one table.

Measures, CPU only unless --gpu-layers, one 9B process at a time:
  * load time through atomicchat.engine.Engine (a child process per configuration: target only, and
    target + draft), at each context of --ctxs (default 4096 and 32768);
  * peak RSS of that child (psutil, polled every 20 ms, and the child's own ru_maxrss) after a
    prompt and a few generated tokens (so every weight is touched and the compute buffers exist),
    against the app's fit estimate for the same configuration and context:
    atomicchat.models.fit.estimate() for the catalog pair (the figure the model manager shows),
    fit.estimate_files() on these files' headers and sizes (what an imported pair gets), and the
    engine's own load-time preflight (atomicchat.engine.memory_check.need_bytes);
  * tokens/s of a few decode steps at n_ctx 4096, greedy: target only (an engine without a draft),
    DFlash with a pinned draft length (GenParams.draft_max = --draft-max) and DFlash adaptive (the
    engine's default: EngineConfig.draft_max None). Random weights, so acceptance is ~0 and DFlash
    is all cost here; the adaptive figure shows what the policy does about that (k per step listed);
  * host µs per step outside llama_decode: the wall time between two `Step` events minus the time
    inside llama_decode itself (each context's `_decode` is wrapped, as benchmarks/host_overhead.py
    does; batch filling, logits reads, argmax and the policy count as host time);
  * llama-server (same llama.cpp commit) on the same prompt ids, greedy, target only and DFlash with
    the pinned length: its own predicted_per_second, through benchmarks/bench.py's Server helpers.

Load average before and after goes into the table. Exit status: 0 when everything asked for was
measured; 3 when some part failed (the table says which); 1 when nothing was measured. Never run in CI.

    /work/main/.venv/bin/python benchmarks/standin_bench.py [--steps 8] [--ctxs 4096,32768] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

from standin_9b import DEFAULT_OUT, DRAFT_NAME, TARGET_NAME  # noqa: E402

DEFAULT_SERVER = Path.home() / ".cache" / "atomicchat" / "llama-server-0c1e57098-nollamafile" / "build" / "bin" / "llama-server"
GIB = 1024**3
SPEED_CTX = 4096
CASES = (
    ("target", "engine target-only"),
    ("pinned", "engine DFlash pinned"),
    ("adaptive", "engine DFlash adaptive"),
    ("pinned_capped", "engine DFlash pinned, capped"),
)
SERVER_CASES = (
    ("target", "llama-server target-only"),
    ("dflash", "llama-server DFlash, capped"),
    ("target_stream", "llama-server target, stream"),
    ("dflash_stream", "llama-server DFlash, stream"),
)


# The stand-in's draft has random weights: every drafted token is a doubt, so the confidence cut
# (engine/draft_confidence.py) would leave nothing to verify. Off here, in the engine and the server alike,
# so a step costs what a full block costs.
NO_CUT = 0.0

def _prompt(n: int, n_vocab: int) -> list[int]:
    import numpy as np

    return np.random.default_rng(42).integers(0, n_vocab - 1, size=n).tolist()


def _atomicchat_file() -> str:
    import atomicchat

    return str(atomicchat.__file__)


def _loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# ------------------------------------------------------------------------------------------------
# child: load (+ a prompt and a few tokens) and report


def child_load(args: argparse.Namespace) -> int:
    from atomicchat.engine import Engine, EngineConfig, GenParams

    draft = None if args.no_draft else args.draft
    t0 = time.perf_counter()
    eng = Engine(
        EngineConfig(
            target_path=args.target, draft_path=draft, n_ctx=args.ctx, n_batch=args.batch,
            n_gpu_layers=args.gpu_layers, n_threads=args.threads, draft_p_min=NO_CUT,
        )
    )  # fmt: skip
    load_s = time.perf_counter() - t0
    rss_loaded = _rss()
    prompt = _prompt(args.prompt_len, eng.n_vocab)
    t1 = time.perf_counter()
    n = 0
    for _ev in eng.generate(prompt, GenParams(max_tokens=3, temperature=0.0, use_draft=draft is not None)):
        n += 1
    gen_s = time.perf_counter() - t1
    out = {
        "load_s": load_s,
        "rss_after_load": rss_loaded,
        "rss_after_steps": _rss(),
        "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "n_ctx": eng.n_ctx,
        "draft_max": eng.draft_max,
        "gen_s": gen_s,
        "events": n,
        "device": eng.info.device,
        "device_sampling": bool(eng.device_sampling),
    }
    eng.close()
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _estimates(target: Path, draft: Path | None, n_ctx: int, draft_max: int) -> dict[str, int]:
    from atomicchat.engine.memory_check import need_bytes
    from atomicchat.engine.validate import inspect_draft, inspect_target
    from atomicchat.models import catalog, fit
    from atomicchat.models.hardware import probe

    hw = probe(target.parent)
    out: dict[str, int] = {}
    try:
        pair = catalog.load_catalog().pair("qwen3.5-9b-dflash")
        out["catalog"] = fit.estimate(
            pair, "Q4_K_M", n_ctx, draft_quant="Q8_0", use_draft=draft is not None, hardware=hw, draft_max=draft_max
        ).total
    except Exception as exc:  # noqa: BLE001
        print(f"  catalog estimate unavailable: {type(exc).__name__}: {exc}", file=sys.stderr)
    est = fit.estimate_files(
        fit.facts_from_gguf(target), target.stat().st_size, n_ctx,
        draft=fit.facts_from_gguf(draft) if draft else None, draft_size=draft.stat().st_size if draft else None,
        hardware=hw, draft_max=draft_max,
    )  # fmt: skip
    out["files"] = est.total
    out["preflight"] = need_bytes(inspect_target(target), inspect_draft(draft) if draft else None, n_ctx, draft_max)
    return out


def measure_load(args: argparse.Namespace, n_ctx: int, with_draft: bool) -> dict[str, Any] | None:
    import psutil

    cmd = [
        sys.executable, __file__, "--child-load", "--ctx", str(n_ctx), "--target", str(args.target),
        "--draft", str(args.draft), "--threads", str(args.threads), "--gpu-layers", str(args.gpu_layers),
        "--batch", str(args.batch), "--prompt-len", str(args.prompt_len),
    ] + ([] if with_draft else ["--no-draft"])  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ps = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            peak = max(peak, ps.memory_info().rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    out, err = proc.communicate()
    line = next((ln for ln in out.splitlines() if ln.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        tail = " | ".join(err.strip().splitlines()[-4:])
        print(f"  load at ctx {n_ctx} ({'with' if with_draft else 'no'} draft) failed (exit {proc.returncode}): {tail}",
              file=sys.stderr)  # fmt: skip
        return None
    res = json.loads(line[len("RESULT ") :])
    res["peak_rss_polled"] = peak
    res["child_wall_s"] = time.perf_counter() - t0
    # the engine's loaded draft_max (block_size - 1 with the default config) sizes the estimates too
    res["estimate"] = _estimates(args.target, args.draft if with_draft else None, n_ctx, res["draft_max"] or 15)
    print(f"  {json.dumps(res)}", file=sys.stderr)
    return res


# ------------------------------------------------------------------------------------------------
# speed: target-only and DFlash steps, with the time inside llama_decode taken out


class DecodeClock:
    """Wraps each context's llama_decode (Context._decode) to add up the wall time spent inside it."""

    def __init__(self, *contexts: Any) -> None:
        self.seconds = 0.0
        self.calls = 0
        perf = time.perf_counter
        for ctx in contexts:
            if ctx is None:
                continue
            real = ctx._decode

            def timed(ptr, batch, _real=real):  # noqa: ANN001, ANN202
                t = perf()
                try:
                    return _real(ptr, batch)
                finally:
                    self.seconds += perf() - t
                    self.calls += 1

            ctx._decode = timed


def _run_case(eng: Any, clock: DecodeClock, prompt: list[int], n_steps: int, use_draft: bool,
              draft_max: int | None, max_tokens: int | None = None) -> dict[str, Any]:  # fmt: skip
    """`n_steps` timed steps after the first token. max_tokens None: room for n_steps full drafts, so a
    pinned length drafts its full k every step; 1 + n_steps: the draft is capped by what is left to
    generate (k = min(n_max, remaining - 1)), as llama-server does for a request of that length."""
    import numpy as np

    from atomicchat.engine import GenParams, Step

    eng.reset()
    steps: list[dict[str, float]] = []
    last_t = last_dec = last_calls = None
    params = GenParams(max_tokens=max_tokens or n_steps * 64 + 1, temperature=0.0, use_draft=use_draft,
                       draft_max=draft_max)  # fmt: skip
    t0 = time.perf_counter()
    gen = eng.generate(prompt, params)
    t_first = None
    for ev in gen:
        now, dec, calls = time.perf_counter(), clock.seconds, clock.calls
        if not isinstance(ev, Step):
            continue
        if last_t is None:
            t_first = now  # the first token comes from the prompt's logits
        else:
            # ev is the step decoded since the previous event: its tokens, what it drafted
            steps.append({"wall": now - last_t, "decode": dec - last_dec, "calls": calls - last_calls,
                          "tokens": len(ev.tokens), "drafted": ev.n_drafted, "accepted": ev.n_accepted})  # fmt: skip
        last_t, last_dec, last_calls = now, dec, calls
        if len(steps) >= n_steps:
            break
    gen.close()
    logits = eng.tctx.logits(1, eng.n_vocab)[0] if not eng.device_sampling else None
    finite = None if logits is None else bool(np.isfinite(logits).all())
    wall = sum(s["wall"] for s in steps)
    dec = sum(s["decode"] for s in steps)
    tokens = sum(s["tokens"] for s in steps)
    n = max(1, len(steps))
    return {
        "steps": len(steps),
        "tokens": tokens,
        "tps": tokens / wall if wall else 0.0,
        "ms_per_step": 1e3 * wall / n,
        "decode_ms_per_step": 1e3 * dec / n,
        "decode_calls_per_step": sum(s["calls"] for s in steps) / n,
        "host_us_per_step": 1e6 * (wall - dec) / n,
        "host_us_each": [round(1e6 * (s["wall"] - s["decode"])) for s in steps],
        "ms_each": [round(1e3 * s["wall"]) for s in steps],
        "drafted_each": [s["drafted"] for s in steps],
        "accepted": sum(s["accepted"] for s in steps),
        "prefill_s": (t_first - t0) if t_first else None,
        "logits_finite": finite,
        "logits_std": float(np.std(logits)) if finite else None,
    }


def measure_speed(args: argparse.Namespace) -> dict[str, Any]:
    """Target only on an engine without a draft; then one engine with the draft (adaptive by default)
    for the pinned (GenParams.draft_max) and adaptive (no draft_max anywhere) runs. One at a time."""
    from atomicchat.engine import Engine, EngineConfig, GenParams

    res: dict[str, Any] = {}
    for with_draft in (False, True):
        t0 = time.perf_counter()
        try:
            eng = Engine(
                EngineConfig(
                    target_path=args.target, draft_path=args.draft if with_draft else None, n_ctx=SPEED_CTX,
                    n_batch=args.batch, n_gpu_layers=args.gpu_layers, n_threads=args.threads, draft_p_min=NO_CUT,
                )
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001
            print(f"  engine ({'with' if with_draft else 'no'} draft) failed to load: {type(exc).__name__}: {exc}",
                  file=sys.stderr)  # fmt: skip
            continue
        load_s = time.perf_counter() - t0
        try:
            clock = DecodeClock(eng.tctx, eng.dctx)
            prompt = _prompt(args.prompt_len, eng.n_vocab)
            # warm-up: first-call graph builds and page faults stay out of the timed steps
            t1 = time.perf_counter()
            warm = GenParams(max_tokens=3, temperature=0.0, use_draft=with_draft, draft_max=args.draft_max if with_draft else None)
            for _ev in eng.generate(prompt[:8], warm):
                pass
            warm_s = time.perf_counter() - t1
            cases = [("target", False, None, None)] if not with_draft else [
                ("pinned", True, args.draft_max, None), ("adaptive", True, None, None),
                ("pinned_capped", True, args.draft_max, 1 + args.steps),
            ]  # fmt: skip
            for key, use_draft, dm, cap in cases:
                try:
                    r = _run_case(eng, clock, prompt, args.steps, use_draft, dm, cap)
                except Exception as exc:  # noqa: BLE001
                    print(f"  {key} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                    continue
                r.update(engine_load_s=load_s, warmup_s=warm_s, device=eng.info.device, device_sampling=bool(eng.device_sampling),
                         engine_draft_max=eng.draft_max, pinned_to=dm, max_tokens_cap=cap)  # fmt: skip
                res[key] = r
                print(f"  {key}: {json.dumps(r)}", file=sys.stderr)
        finally:
            eng.close()
    return res


# ------------------------------------------------------------------------------------------------
# llama-server on the same ids


def stream_steps(url: str, prompt: list[int], n_predict: int, n_steps: int, timeout: float = 900.0) -> dict[str, Any]:
    """Streamed /completion: client-side wall time between token events, for the first n_steps events
    after the first token; then the connection is closed (llama-server cancels the rest). With a large
    n_predict the draft is not capped by what is left, so DFlash drafts its full n_max every step, as
    the engine's uncapped pinned case."""
    import http.client
    from urllib.parse import urlparse

    u = urlparse(url)
    body = json.dumps({"prompt": list(prompt), "n_predict": n_predict, "temperature": 0, "cache_prompt": False,
                       "return_tokens": True, "stream": True})  # fmt: skip
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    times: list[float] = []
    counts: list[int] = []
    try:
        conn.request("POST", "/completion", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        if resp.status != 200:
            raise RuntimeError(f"llama-server answered {resp.status}: {resp.read()[:300]!r}")
        while len(times) < n_steps + 1:
            line = resp.readline()
            if not line:
                break
            line = line.strip()
            if not line.startswith(b"data: "):
                continue
            ev = json.loads(line[6:])
            n = len(ev.get("tokens") or [])
            if n == 0:
                continue
            times.append(time.perf_counter())
            counts.append(n)
            if ev.get("stop"):
                break
    finally:
        conn.close()
    gaps = [b - a for a, b in zip(times, times[1:])]
    tokens = sum(counts[1:])
    wall = sum(gaps)
    return {
        "steps": len(gaps),
        "tokens": tokens,
        "tps": tokens / wall if wall else 0.0,
        "ms_per_step": 1e3 * wall / max(1, len(gaps)),
        "ms_each": [round(1e3 * g) for g in gaps],
    }


def measure_server(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks import bench

    out: dict[str, Any] = {}
    if not args.server.exists():
        print(f"  llama-server not found at {args.server}; skipped", file=sys.stderr)
        return out
    logs = Path.home() / ".cache" / "atomicchat" / "bench-logs"
    logs.mkdir(parents=True, exist_ok=True)
    from atomicchat.engine.validate import inspect_target

    prompt = _prompt(args.prompt_len, inspect_target(args.target).n_vocab)
    for key, draft in (("target", None), ("dflash", args.draft)):
        def cmd(port: int, d: Path | None = draft) -> list[str]:
            c = bench.server_command(
                args.server, args.target, d, port=port, threads=args.threads, n_ctx=SPEED_CTX,
                n_batch=args.batch, n_max=args.draft_max, gpu_layers=args.gpu_layers, p_min=NO_CUT,
            )  # fmt: skip
            return c + ["--no-repack"]  # as the engine on AMX CPUs: no extra buffer types (see model.py)

        t0 = time.perf_counter()
        srv = None
        try:
            srv = bench.Server(cmd, logs / f"server-standin-{key}.log", startup_s=900.0)
            start_s = time.perf_counter() - t0
            bench.run_server(srv, prompt[:8], 2)  # warm-up, as the engine's
            r = bench.run_server(srv, prompt, 1 + args.server_tokens)  # the first token comes from the prompt
            steps = max(r["steps"], 1)
            out[key] = {
                "start_s": start_s,
                "tps": r["server_tps"],
                "tokens": len(r["tokens"]) - 1,  # after the first, as predicted_per_second counts
                "steps": r["steps"],
                "drafted": r["drafted"],
                "accepted": r["accepted"],
                "ms_per_step": 1e3 * r["seconds"] / steps,
            }
            print(f"  server {key}: {out[key]}", file=sys.stderr)
            st = stream_steps(srv.url, prompt, 1 + 64 * args.server_tokens, args.server_tokens)
            out[key + "_stream"] = st
            print(f"  server {key} streamed: {st}", file=sys.stderr)
        except Exception as exc:  # noqa: BLE001
            print(f"  llama-server {key} failed: {exc}", file=sys.stderr)
        finally:
            if srv is not None:
                srv.close()
    return out


# ------------------------------------------------------------------------------------------------


def _g(n: float | None) -> str:
    return "-" if n is None else f"{n / GIB:.2f}"


def table(report: dict[str, Any]) -> str:
    L = []
    m = report["meta"]
    L.append(f"Qwen3.5-9B stand-in on {m['cpu']} ({m['n_cpus']} CPUs), threads {m['threads']}, gpu_layers {m['gpu_layers']}")
    L.append(f"  target {m['target']} ({m['target_bytes']:,} B)")
    L.append(f"  draft  {m['draft']} ({m['draft_bytes']:,} B)")
    L.append(f"  load average (1/5/15 min) start {m['load_start']}  end {m.get('load_end')}")
    L.append(f"  atomicchat from {m.get('atomicchat')}")
    L.append("")
    L.append("load + memory (engine in a child process, one at a time; RSS after the prompt and 3 generated tokens)")
    L.append(f"  {'config':<14} {'n_ctx':>6} {'load s':>7} {'peak RSS':>9} {'maxrss':>7} {'est. catalog':>12} "
             f"{'est. files':>10} {'preflight':>9} {'RSS/files':>9} {'1st gen s':>9}  (GiB)")  # fmt: skip
    for key, r in report.get("load", {}).items():
        cfg, ctx = key.rsplit("@", 1)
        if r is None:
            L.append(f"  {cfg:<14} {ctx:>6} FAILED")
            continue
        e = r["estimate"]
        ratio = f"{r['peak_rss_polled'] / e['files']:.2f}" if e.get("files") else "-"
        L.append(
            f"  {cfg:<14} {ctx:>6} {r['load_s']:>7.1f} {_g(r['peak_rss_polled']):>9} {_g(r['ru_maxrss']):>7} "
            f"{_g(e.get('catalog')):>12} {_g(e.get('files')):>10} {_g(e.get('preflight')):>9} {ratio:>9} {r['gen_s']:>9.1f}"
        )
    L.append("  1st gen s: the prompt and 3 tokens right after the load (first decode in the process)")
    sp = report.get("speed", {})
    sv = report.get("server", {})
    L.append("")
    L.append(f"decode speed, n_ctx {SPEED_CTX}, prompt {m['prompt_len']} random ids, greedy, pinned n_max {m['draft_max']} "
             "(random weights: acceptance ~0, so DFlash only costs here)")  # fmt: skip
    L.append(f"  {'case':<29} {'steps':>5} {'tok':>4} {'tok/s':>7} {'ms/step':>8} {'decode ms':>9} {'host µs/step':>12}  drafted per step")
    for key, name in CASES:
        r = sp.get(key)
        if not r:
            L.append(f"  {name:<29} FAILED" if key in report.get("asked_speed", ()) else f"  {name:<29} (skipped)")
            continue
        L.append(
            f"  {name:<29} {r['steps']:>5} {r['tokens']:>4} {r['tps']:>7.3f} {r['ms_per_step']:>8.0f} "
            f"{r['decode_ms_per_step']:>9.0f} {r['host_us_per_step']:>12.0f}  {r['drafted_each']}"
        )
    for key, name in SERVER_CASES:
        r = sv.get(key)
        if not r:
            L.append(f"  {name:<29} FAILED" if report.get("asked_server") else f"  {name:<29} (skipped)")
            continue
        tail = (f"drafted {r['drafted']} accepted {r['accepted']} (its predicted_per_second)" if "drafted" in r
                else f"client-timed gaps {r['ms_each']} ms")  # fmt: skip
        L.append(f"  {name:<29} {r['steps']:>5} {r['tokens']:>4} {r['tps']:>7.3f} {r['ms_per_step']:>8.0f} "
                 f"{'':>9} {'(in C++)':>12}  {tail}")  # fmt: skip
    L.append("  capped: max tokens 1 + steps, so each draft is min(n_max, tokens left - 1), as llama-server "
             "does for that request; stream: n_predict large, full n_max drafts, timed by the client")
    if sp:
        warm = sorted({round(v["warmup_s"], 1) for v in sp.values() if "warmup_s" in v})
        L.append(f"  engine warm-up generate (8-id prompt, 3 tokens, first in the process): {warm} s")
        L.append("  host µs per step, each step: " + " · ".join(f"{k} {v['host_us_each']}" for k, v in sp.items()))
        fin = [f"{k}: {'finite' if v.get('logits_finite') else 'NOT FINITE'}" for k, v in sp.items() if v.get("logits_finite") is not None]
        if fin:
            L.append("  last logits " + ", ".join(fin))
        dev = {f"{v['device']}, sampling {'on the device' if v['device_sampling'] else 'on the host'}" for v in sp.values()}
        L.append("  engine ran on " + "; ".join(sorted(dev)))
    if report.get("failures"):
        L.append("")
        L.append("INCOMPLETE: " + "; ".join(report["failures"]))
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", type=Path, default=DEFAULT_OUT / TARGET_NAME)
    ap.add_argument("--draft", type=Path, default=DEFAULT_OUT / DRAFT_NAME)
    ap.add_argument("--ctxs", default="4096,32768")
    ap.add_argument("--ctx", type=int, default=4096, help=argparse.SUPPRESS)
    ap.add_argument("--no-draft", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=8, help="timed decode steps per engine case (default 8)")
    ap.add_argument("--server-tokens", type=int, default=8, help="tokens llama-server generates after the first (default 8)")
    ap.add_argument("--prompt-len", type=int, default=32)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--draft-max", type=int, default=15, help="the pinned draft length (default 15)")
    ap.add_argument("--gpu-layers", type=int, default=0)
    ap.add_argument("--server", type=Path, default=DEFAULT_SERVER)
    ap.add_argument("--skip", default="", help="comma list of load,speed,server to skip")
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--child-load", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_load:
        return child_load(args)
    if args.steps < 1 or args.server_tokens < 1:
        print("--steps and --server-tokens must be at least 1", file=sys.stderr)
        return 2
    for p in (args.target, args.draft):
        if not p.exists():
            print(f"{p} is missing: run benchmarks/standin_9b.py first", file=sys.stderr)
            return 2
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    report: dict[str, Any] = {
        "meta": {
            "cpu": cpu, "n_cpus": os.cpu_count(), "threads": args.threads, "gpu_layers": args.gpu_layers,
            "target": str(args.target), "target_bytes": args.target.stat().st_size,
            "draft": str(args.draft), "draft_bytes": args.draft.stat().st_size,
            "load_start": _loadavg(), "prompt_len": args.prompt_len,
            "draft_max": args.draft_max, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "atomicchat": _atomicchat_file(),
        },
        "failures": [],
    }  # fmt: skip
    t_start = time.perf_counter()
    measured = 0
    if "load" not in skip:
        report["load"] = {}
        for ctx in [int(x) for x in args.ctxs.split(",") if x.strip()]:
            for with_draft in (False, True):
                name = f"{'target+draft' if with_draft else 'target only'}@{ctx}"
                print(f"load + RSS: {name} ...", file=sys.stderr)
                r = measure_load(args, ctx, with_draft)
                report["load"][name] = r
                if r is None:
                    report["failures"].append(f"load {name}")
                measured += r is not None
    if "speed" not in skip:
        print("engine speed ...", file=sys.stderr)
        report["asked_speed"] = [k for k, _ in CASES]
        report["speed"] = measure_speed(args)
        for key, _name in CASES:
            r = report["speed"].get(key)
            if r is None or r["steps"] < 1 or r["tps"] <= 0:
                report["failures"].append(f"speed {key}")
                report["speed"].pop(key, None)
            else:
                measured += 1
    if "server" not in skip:
        print("llama-server ...", file=sys.stderr)
        report["asked_server"] = True
        report["server"] = measure_server(args)
        for key, _name in SERVER_CASES:
            r = report["server"].get(key)
            if r is None or r["tps"] <= 0:
                report["failures"].append(f"llama-server {key}")
                report["server"].pop(key, None)
            else:
                measured += 1
    report["meta"]["load_end"] = _loadavg()
    report["meta"]["wall_s"] = time.perf_counter() - t_start
    print(table(report))
    print(f"(total {report['meta']['wall_s']:.0f} s)")
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(report, indent=1, default=str))
    if not measured:
        print("measured nothing", file=sys.stderr)
        return 1
    return 3 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
