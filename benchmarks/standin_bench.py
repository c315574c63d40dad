"""The Qwen3.5-9B stand-in (benchmarks/standin_9b.py) end to end on this machine: one run, one table.

Measures, CPU only unless --gpu-layers:
  * load time of target + draft through atomicchat.engine.Engine (in a child process);
  * peak RSS of that child (psutil, polled every 20 ms, plus the child's own ru_maxrss) after a few
    decode steps (so weights are touched and compute buffers exist), against the app's fit estimate
    for the same context: atomicchat.models.fit.estimate() for the catalog pair (the figure the model
    manager shows) and estimate_files() on these two files' headers (what an imported pair gets),
    and the engine's own load-time preflight (memory_check.need_bytes); contexts 4k and 32k;
  * tokens/s of a few target-only steps and a few DFlash steps (greedy; random weights, so acceptance
    is meaningless and not reported as a result);
  * host overhead per step outside llama_decode: the wall time between two `Step` events minus the
    time spent inside Context.decode_tokens / Context.decode_embd (wrapped here by monkeypatching the
    class, the engine code is not edited);
  * llama-server (same llama.cpp commit) on the same prompt ids, target-only and DFlash, its own
    predicted_per_second and ms per step, driven through atomicchat.bench's Server helpers.

Exits non-zero when it measured nothing (no models, or every phase failed). Never run in CI.

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/standin_bench.py [--steps 4] [--ctxs 4096,32768]
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

DEFAULT_SERVER = Path.home() / ".cache" / "atomicchat" / "llama-server-0c1e57098" / "build" / "bin" / "llama-server"
GIB = 1024**3


def _prompt(n: int, n_vocab: int) -> list[int]:
    import numpy as np

    return np.random.default_rng(42).integers(0, n_vocab - 1, size=n).tolist()


# ------------------------------------------------------------------------------------------------
# child: load (+ a few steps) and report


def child_load(args: argparse.Namespace) -> int:
    from atomicchat.engine import Engine, EngineConfig, GenParams

    t0 = time.perf_counter()
    eng = Engine(
        EngineConfig(
            target_path=args.target, draft_path=args.draft, n_ctx=args.ctx, n_batch=args.batch,
            n_gpu_layers=args.gpu_layers, n_threads=args.threads,
        )
    )  # fmt: skip
    load_s = time.perf_counter() - t0
    rss_loaded = _rss()
    prompt = _prompt(args.prompt_len, eng.n_vocab)
    t1 = time.perf_counter()
    n = 0
    for _ev in eng.generate(prompt, GenParams(max_tokens=3, temperature=0.0, use_draft=args.draft is not None)):
        n += 1
    gen_s = time.perf_counter() - t1
    out = {
        "load_s": load_s,
        "rss_after_load": rss_loaded,
        "rss_after_steps": _rss(),
        "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "n_ctx": eng.n_ctx,
        "gen_s": gen_s,
        "device": eng.info.device,
    }
    eng.close()
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _estimates(target: Path, draft: Path, n_ctx: int, draft_max: int = 15) -> dict[str, int]:
    from atomicchat.engine.memory_check import need_bytes
    from atomicchat.engine.validate import inspect_draft, inspect_target
    from atomicchat.models import catalog, fit
    from atomicchat.models.hardware import probe

    hw = probe(target.parent)
    out: dict[str, int] = {}
    try:
        pair = next(p for p in catalog.load_catalog().pairs if p.id == "qwen3.5-9b-dflash")
        out["catalog"] = fit.estimate(pair, "Q4_K_M", n_ctx, hardware=hw).total
    except Exception as exc:  # noqa: BLE001
        print(f"  catalog estimate unavailable: {exc}", file=sys.stderr)
    est = fit.estimate_files(
        fit.facts_from_gguf(target), target.stat().st_size, n_ctx,
        draft=fit.facts_from_gguf(draft), draft_size=draft.stat().st_size, hardware=hw, draft_max=draft_max,
    )  # fmt: skip
    out["files"] = est.total
    out["preflight"] = need_bytes(inspect_target(target), inspect_draft(draft), n_ctx, draft_max)
    return out


def measure_load(args: argparse.Namespace, n_ctx: int) -> dict[str, Any] | None:
    import psutil

    cmd = [
        sys.executable, __file__, "--child-load", "--ctx", str(n_ctx), "--target", str(args.target),
        "--draft", str(args.draft), "--threads", str(args.threads), "--gpu-layers", str(args.gpu_layers),
        "--batch", str(args.batch), "--prompt-len", str(args.prompt_len),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
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
        print(f"  load at ctx {n_ctx} failed (exit {proc.returncode}): {tail}", file=sys.stderr)
        return None
    res = json.loads(line[len("RESULT ") :])
    res["peak_rss_polled"] = peak
    res["estimate"] = _estimates(args.target, args.draft, n_ctx)
    return res


# ------------------------------------------------------------------------------------------------
# speed: target-only and DFlash steps, with the decode time taken out


class DecodeTimer:
    """Monkeypatches Context.decode_tokens / decode_embd to add up wall time inside them."""

    def __init__(self) -> None:
        from atomicchat.engine import model

        self.cls = model.Context
        self.orig = {n: getattr(self.cls, n) for n in ("decode_tokens", "decode_embd")}
        self.seconds = 0.0
        self.calls = 0

    def __enter__(self) -> DecodeTimer:
        perf = time.perf_counter

        for name, fn in self.orig.items():

            def timed(ctx, *a, _fn=fn, **kw):  # noqa: ANN001, ANN002, ANN003
                t0 = perf()
                try:
                    return _fn(ctx, *a, **kw)
                finally:
                    self.seconds += perf() - t0
                    self.calls += 1

            setattr(self.cls, name, timed)
        return self

    def __exit__(self, *exc: object) -> None:
        for name, fn in self.orig.items():
            setattr(self.cls, name, fn)


def measure_speed(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from atomicchat.engine import Engine, EngineConfig, GenParams, Step

    res: dict[str, Any] = {}
    with DecodeTimer() as timer:
        eng = Engine(
            EngineConfig(
                target_path=args.target, draft_path=args.draft, n_ctx=4096, n_batch=args.batch,
                n_gpu_layers=args.gpu_layers, n_threads=args.threads, draft_max=args.draft_max,
            )
        )  # fmt: skip
        try:
            prompt = _prompt(args.prompt_len, eng.n_vocab)
            for key, use_draft in (("target", False), ("dflash", True)):
                eng.reset()
                steps: list[dict[str, float]] = []
                last_t = last_dec = None
                t_first = None
                n_tokens = 0
                params = GenParams(max_tokens=10_000, temperature=0.0, use_draft=use_draft)
                gen = eng.generate(prompt, params)
                for ev in gen:
                    now, dec = time.perf_counter(), timer.seconds
                    if not isinstance(ev, Step):
                        continue
                    if last_t is None:
                        t_first = now  # the first token comes from the prompt's logits
                    else:
                        n_tokens += len(ev.tokens)
                        steps.append({"wall": now - last_t, "decode": dec - last_dec, "tokens": len(ev.tokens)})
                    last_t, last_dec = now, dec
                    if len(steps) >= args.steps:
                        break
                gen.close()
                logits = eng.tctx.logits(1, eng.n_vocab)[0]
                finite = bool(np.isfinite(logits).all())
                wall = sum(s["wall"] for s in steps)
                dec = sum(s["decode"] for s in steps)
                res[key] = {
                    "steps": len(steps),
                    "tokens": n_tokens,
                    "tps": n_tokens / wall if wall else 0.0,
                    "ms_per_step": 1e3 * wall / max(1, len(steps)),
                    "decode_ms_per_step": 1e3 * dec / max(1, len(steps)),
                    "host_us_per_step": 1e6 * (wall - dec) / max(1, len(steps)),
                    "host_us_each": [round(1e6 * (s["wall"] - s["decode"])) for s in steps],
                    "logits_finite": finite,
                    "logits_std": float(np.std(logits)) if finite else None,
                    "gen_s_total": (last_t - t_first) if t_first and last_t else 0.0,
                }
                print(f"  {key}: {res[key]}", file=sys.stderr)
        finally:
            eng.close()
    return res


# ------------------------------------------------------------------------------------------------
# llama-server on the same ids


def measure_server(args: argparse.Namespace) -> dict[str, Any]:
    from atomicchat import bench

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
                args.server, args.target, d, port=port, threads=args.threads, n_ctx=4096,
                n_batch=args.batch, n_max=args.draft_max, gpu_layers=args.gpu_layers,
            )  # fmt: skip
            return c + ["--no-repack"]  # as the engine on AMX CPUs: no extra buffer types (see model.py)

        t0 = time.perf_counter()
        srv = None
        try:
            srv = bench.Server(cmd, logs / f"server-standin-{key}.log", startup_s=900.0)
            start_s = time.perf_counter() - t0
            r = bench.run_server(srv, prompt, 1 + args.steps)  # the first token comes from the prompt
            steps = max(r["steps"], 1)
            out[key] = {
                "start_s": start_s,
                "tps": r["server_tps"],
                "tokens": len(r["tokens"]),
                "steps": r["steps"],
                "ms_per_step": 1e3 * r["seconds"] / steps,
            }
            print(f"  server {key}: {out[key]}", file=sys.stderr)
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
    L.append(f"  load average start {m['load_start']}  end {m.get('load_end')}")
    L.append("")
    L.append("load + memory (target + draft, engine in a child process, after 3 generated tokens)")
    L.append(f"  {'n_ctx':>6} {'load s':>7} {'peak RSS':>9} {'maxrss':>7} {'est. catalog':>12} {'est. files':>10} {'preflight':>9}  GiB")
    for ctx, r in report.get("load", {}).items():
        if r is None:
            L.append(f"  {ctx:>6} failed")
            continue
        e = r["estimate"]
        L.append(
            f"  {ctx:>6} {r['load_s']:>7.1f} {_g(r['peak_rss_polled']):>9} {_g(r['ru_maxrss']):>7} "
            f"{_g(e.get('catalog')):>12} {_g(e.get('files')):>10} {_g(e.get('preflight')):>9}"
        )
    sp = report.get("speed", {})
    sv = report.get("server", {})
    if sp or sv:
        L.append("")
        L.append(f"decode speed, n_ctx 4096, prompt {m['prompt_len']} ids, greedy, n_max {m['draft_max']} (random weights: acceptance meaningless)")
        L.append(f"  {'case':<26} {'steps':>5} {'tok':>4} {'tok/s':>7} {'ms/step':>9} {'decode ms':>9} {'host µs/step':>12}")
        for key, name in (("target", "engine target-only"), ("dflash", "engine DFlash")):
            r = sp.get(key)
            if r:
                L.append(
                    f"  {name:<26} {r['steps']:>5} {r['tokens']:>4} {r['tps']:>7.3f} {r['ms_per_step']:>9.0f} "
                    f"{r['decode_ms_per_step']:>9.0f} {r['host_us_per_step']:>12.0f}"
                )
        for key, name in (("target", "llama-server target-only"), ("dflash", "llama-server DFlash")):
            r = sv.get(key)
            if r:
                L.append(f"  {name:<26} {r['steps']:>5} {r['tokens']:>4} {r['tps']:>7.3f} {r['ms_per_step']:>9.0f} {'':>9} {'(in C++)':>12}")
        fin = [f"{k}: {'finite' if v.get('logits_finite') else 'NOT FINITE'}" for k, v in sp.items()]
        if fin:
            L.append("  last logits " + ", ".join(fin))
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", type=Path, default=DEFAULT_OUT / TARGET_NAME)
    ap.add_argument("--draft", type=Path, default=DEFAULT_OUT / DRAFT_NAME)
    ap.add_argument("--ctxs", default="4096,32768")
    ap.add_argument("--ctx", type=int, default=4096, help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=4, help="decode steps per speed case (default 4)")
    ap.add_argument("--prompt-len", type=int, default=32)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--draft-max", type=int, default=15)
    ap.add_argument("--gpu-layers", type=int, default=0)
    ap.add_argument("--server", type=Path, default=DEFAULT_SERVER)
    ap.add_argument("--skip", default="", help="comma list of load,speed,server to skip")
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--child-load", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_load:
        return child_load(args)
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
            "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg()), "prompt_len": args.prompt_len,
            "draft_max": args.draft_max, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    }  # fmt: skip
    measured = 0
    if "load" not in skip:
        report["load"] = {}
        for ctx in [int(x) for x in args.ctxs.split(",") if x.strip()]:
            print(f"load + RSS at n_ctx {ctx} ...", file=sys.stderr)
            r = measure_load(args, ctx)
            report["load"][ctx] = r
            measured += r is not None
    if "speed" not in skip:
        print("engine speed ...", file=sys.stderr)
        try:
            report["speed"] = measure_speed(args)
            measured += bool(report["speed"])
        except Exception as exc:  # noqa: BLE001
            print(f"  engine speed failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    if "server" not in skip:
        print("llama-server ...", file=sys.stderr)
        report["server"] = measure_server(args)
        measured += bool(report["server"])
    report["meta"]["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(table(report))
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1, default=str))
    if not measured:
        print("measured nothing", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
