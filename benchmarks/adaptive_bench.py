"""Adaptive draft length against every fixed one, target-only and llama-server, side by side in one run.

For each case (a model pair, a prompt kind) an engine without the draft, one with it for the fixed
lengths and one for the adaptive policy (which may resize a hybrid target's rollback snapshots between
replies) are loaded, and every configuration runs every prompt, interleaved in a fresh seeded order per prompt, so a busy
neighbour (or a predecessor that emptied the caches) hurts all of them alike:
  target-only      the target alone (no draft loaded)
  fixed k          DFlash with the draft length pinned to k (GenParams.draft_max = k)
  draft idle       the engine with the draft loaded, DFlash off for the request (--draft-idle): what a
                   loaded draft costs plain steps (a hybrid target keeps recurrent snapshots for it)
  adaptive         DFlash with the engine's policy (atomicchat/engine/draft_policy.py), learning as it
                   runs: its cost table and acceptance profile persist across the case's prompts, as
                   they do in the app for a loaded model
  adaptive REV     with --policy-from REV: the policy as git revision REV (or a draft_policy.py file)
                   had it, on the same engine, priced on the same contexts: a policy change beside the
                   policy it replaces in one run (a hybrid target's snapshots are not resized for it)
  server k         llama-server (same vendored llama.cpp, `--spec-draft-n-max k`), with --server and the
                   k llama.cpp's own default uses (the draft's block size - 1), and the best fixed k seen;
                   its requests run after all of the case's engine replies (--servers interleaved: among them)
tokens/s = generated tokens / seconds from the first generated token to the last, summed over the case's
prompts (llama-server: its predicted_n / predicted_ms). ad/best is adaptive over the best of target-only
and the fixed lengths, with a 90% bootstrap interval over the paired replies (`interval`): on a noisy
host it says whether a shortfall is there at all. held-out is adaptive over that best chosen on half
the replies and timed on the other half (`held_out_best`): the best of ten noisy columns is raised
by whichever drew the luckiest replies, and this estimate is not. Before each prompt but the first,
every engine's contexts are made again and its sizes priced as at load (Engine.remake_contexts(reprice=True);
--remake repeat: before each repeat, and the interval resamples whole repeats; never: not at all):
where llama.cpp's buffers land can slow one engine by up to 14% for its whole life (on the 2-core
Xeon, 2026-12-05: SmolLM2's plain step 10 ms on one context, 17 on another), so each configuration
is timed on as many placements as prompts x repeats. The fixed lengths and the adaptive policy run on
one engine (two for a hybrid target, whose snapshots the policy resizes). Greedy; every DFlash output
must equal the target-only output token for token, or the run fails.

Cases: the bundled demo pair as F32 (shipped), F16 and Q8_0 (converted once into the cache with
llama.cpp's quantize API), code and prose prompts; `atomicchat bench`'s generated pairs
(tiny-llama, tiny-llama-own, tiny-qwen35), whose random drafts are accepted ~0% of the time (their
replies take milliseconds: they run `TINY_REPEATS` times the repeats asked); and the
first-run pair, SmolLM2-135M-Instruct as shipped (Q4_1) and as an F16 copy, with its DFlash draft, on
benchmarks/smol_bench.py's held-out code and prose prompts.

    .venv/bin/python benchmarks/adaptive_bench.py                     # everything, 1 thread
    .venv/bin/python benchmarks/adaptive_bench.py --cases demo-f32 --server --json out.json
    python benchmarks/adaptive_bench.py --cases none --pair standin=T.gguf,D.gguf --gpu-layers -1 \
        --server-bin bundle/bin/llama-server        # any pair (code and prose prompts), on a GPU

--pair NAME=TARGET,DRAFT adds a pair of GGUFs with a chat template (code and prose cases); --gpu-layers
offloads every engine and server alike (the device and whether it sampled on the device are in the
JSON); --server-bin names a llama-server binary (a CUDA build, say) instead of the cached CPU one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atomicchat.engine import Engine, EngineConfig, Finished  # noqa: E402
from benchmarks import bench  # noqa: E402 (the `atomicchat bench` helpers: pairs, llama-server)
from benchmarks.common import converted, policy_state, run_once  # noqa: E402
from benchmarks.demo_bench import PROMPTS as CODE_PROMPTS  # noqa: E402 (the demo pair's own benchmark prompts)
from benchmarks.smol_bench import PROMPTS as SMOL_PROMPTS  # noqa: E402 (held out from the SmolLM2 draft's data)

PROSE_PROMPTS = [
    "Explain in a few sentences why the sky is blue.",
    "Write a short story about a lighthouse keeper.",
    "What are the benefits of regular exercise?",
    "Describe the city of Paris to a visitor.",
    "Give me three tips for learning a new language.",
    "Summarise the causes of the French Revolution.",
]
ALL_CASES = ("demo-f32", "demo-f16", "demo-q8_0", "tiny-llama", "tiny-llama-own", "tiny-qwen35", "smollm2-q4_1",
             "smollm2-f16")
# smollm2-f16 only when asked: there a batched verify can break a near-tie of the target's top two
# logits the other way than a single decode (seen: 0.004 apart), which this benchmark treats as fatal.
DEFAULT_CASES = ALL_CASES[:-1]


@dataclass
class Case:
    name: str
    target: Path
    draft: Path
    prompts: list[str] | None  # None: random token ids (the generated pairs have no real vocabulary)
    kind: str


@dataclass
class Tally:
    tokens: int = 0
    seconds: float = 0.0
    drafted: int = 0
    accepted: int = 0
    draft_steps: int = 0
    steps: int = 0
    outputs: list[list[int]] = field(default_factory=list)
    runs: list[tuple[int, float]] = field(default_factory=list)  # (tokens, seconds) of each reply, in order

    def add_run(self, tokens: int, seconds: float) -> None:
        """One reply's generated tokens and seconds, into the totals and the per-reply list."""
        self.tokens += tokens
        self.seconds += seconds
        self.runs.append((tokens, seconds))

    def add(self, fin: Finished) -> None:
        s = fin.stats
        self.add_run(max(s.n_generated - 1, 0), s.generate_seconds)
        self.drafted += s.n_drafted
        self.accepted += s.n_accepted
        self.draft_steps += s.n_draft_steps
        self.steps += max(s.n_steps - 1, 0)
        self.outputs.append(list(fin.tokens))

    @property
    def tps(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


# The generated pairs' replies take ~15 ms: their cases run this many times the repeats asked (at
# `--repeats 3`, each configuration's 18 replies took ~0.3 s, and adaptive over target-only read
# 0.91-1.05 across runs at the same 100% plain steps; 2-core EPYC, 2026-12-07).
TINY_REPEATS = 8

DRAFT_IDLE = "draft idle"  # the draft's engine on plain steps: not a choice the best is taken from


def policy_class_at(where: str) -> type:
    """DraftPolicy as git revision `where` of this repository had it, or as the file `where` defines it
    (`--policy-from`). On the shared 2-core machines two runs of one configuration part by up to
    5-10%, which hides a policy change of a few percent; side by side, paired by reply, it shows."""
    path = Path(where)
    if path.suffix == ".py" and path.is_file():
        src, origin = path.read_text(), str(path)
    else:
        origin = f"{where}:atomicchat/engine/draft_policy.py"
        got = subprocess.run(["git", "-C", str(ROOT), "show", origin], capture_output=True, text=True)
        if got.returncode:
            raise SystemExit(f"adaptive_bench: --policy-from {where}: git could not show {origin} "
                             f"({got.stderr.strip() or 'no message'})")
        src = got.stdout
    name = "_draft_policy_from_" + re.sub(r"\W", "_", where)
    mod = types.ModuleType(name)
    mod.__file__ = origin
    sys.modules[name] = mod  # dataclasses resolve the module's annotations through sys.modules
    exec(compile(src, origin, "exec"), mod.__dict__)
    cls = getattr(mod, "DraftPolicy", None)
    if not isinstance(cls, type):
        raise SystemExit(f"adaptive_bench: --policy-from {where}: {origin} defines no DraftPolicy class")
    return cls


def cases(names: list[str], cache: Path) -> list[Case]:
    from atomicchat.demo import demo_draft_path, demo_target_path

    out: list[Case] = []
    tiny = [n for n in names if n.startswith("tiny-")]
    for p in bench.tiny_pairs(tiny, cache) if tiny else []:
        out.append(Case(p.name, p.target, p.draft, None, "random ids, ~0% acceptance"))
    for n in names:
        if not n.startswith("demo-"):
            continue
        fmt = n.split("-", 1)[1]
        target = Path(demo_target_path())
        if fmt != "f32":
            target = converted(target, fmt.upper(), cache)
        for kind, prompts in (("code", CODE_PROMPTS), ("prose", PROSE_PROMPTS)):
            out.append(Case(f"{n} {kind}", target, Path(demo_draft_path()), prompts, kind))
    for n in names:  # the first-run pair, on the held-out prompts of benchmarks/smol_bench.py
        if not n.startswith("smollm2-"):
            continue
        pair = bench.smollm2_pair()
        if pair is None:
            print(f"{n}: SmolLM2 or its draft is not installed; skipped", file=sys.stderr)
            continue
        fmt = n.split("-", 1)[1]
        target = pair.target if fmt == "q4_1" else converted(pair.target, fmt.upper(), cache)
        for kind in ("code", "prose"):
            out.append(Case(f"{n} {kind}", target, pair.draft, SMOL_PROMPTS[kind], kind))
    return out


def pair_cases(specs: list[str]) -> list[Case]:
    """`--pair NAME=TARGET,DRAFT` -> its code and prose cases (the target must carry a chat template)."""
    out: list[Case] = []
    for spec in specs:
        name, sep, files = spec.partition("=")
        target, comma, draft = files.partition(",")
        if not (sep and comma and name and target and draft):
            raise SystemExit(f"adaptive_bench: --pair wants NAME=TARGET,DRAFT, not {spec!r}")
        for pth in (target, draft):
            if not Path(pth).is_file():
                raise SystemExit(f"adaptive_bench: --pair {name}: {pth} is not a file")
        for kind, prompts in (("code", CODE_PROMPTS), ("prose", PROSE_PROMPTS)):
            out.append(Case(f"{name} {kind}", Path(target), Path(draft), prompts, kind))
    return out


def bench_case(case: Case, a: argparse.Namespace, server_bin: Path | None) -> dict[str, Any]:
    cfg = dict(n_ctx=a.ctx, n_gpu_layers=a.gpu_layers, n_threads=a.threads)
    base = Engine(EngineConfig(case.target, None, **cfg))
    spec = Engine(EngineConfig(case.target, case.draft, **cfg))  # the fixed lengths (pinned per request)
    # The adaptive policy on the same engine, so both run on one memory placement, except on a hybrid
    # target: the policy may resize its rollback snapshots between replies (Engine._refit_rollback),
    # which must not change what the fixed lengths run on.
    adapt = Engine(EngineConfig(case.target, case.draft, **cfg)) if spec.target.is_hybrid else spec
    engines = list(dict.fromkeys([base, spec, adapt]))
    servers: dict[str, Any] = {}
    try:
        if a.gpu_layers and not (spec.info.gpu_layers_used and base.info.gpu_layers_used):
            raise SystemExit(f"adaptive_bench: {case.name}: --gpu-layers {a.gpu_layers} asked, but the model runs "
                             f"on {spec.info.device}")
        repeats = a.repeats
        if case.prompts is None:
            prompts = bench.tiny_prompts(a.prompts, base.n_vocab)
            repeats *= TINY_REPEATS
        else:
            prompts = [base.chat_prompt([{"role": "user", "content": t}]) for t in case.prompts[: a.prompts]]
        kmax = spec.draft_max
        ks = sorted({k for k in (a.fixed or (1, 2, 3, 4, 5, 6, 7, 10, kmax)) if 1 <= k <= kmax})
        configs: list[tuple[str, bool, int | None]] = [("target-only", False, None)]
        configs += [(f"fixed {k}", True, k) for k in ks] + [("adaptive", True, None)]
        other, other_cfg = None, None  # --policy-from: that policy, priced on the adaptive engine's contexts
        if a.policy_from:
            other, other_cfg = a.policy_class(adapt.draft_max), other_name(a.policy_from)
            adapt.price_policy(other)
            configs.append((other_cfg, True, None))
        if a.draft_idle:
            configs.append((DRAFT_IDLE, False, None))
        tallies = {name: Tally() for name, _, _ in configs}
        if server_bin is not None:
            for k in sorted({kmax, min(3, kmax)}):
                srv = bench.Server(
                    lambda port, k=k: bench.server_command(server_bin, case.target, case.draft, port=port,
                                                       threads=a.threads, n_ctx=a.ctx, n_batch=512, n_max=k,
                                                       gpu_layers=a.gpu_layers),
                    Path(a.logs) / f"server-{case.name.replace(' ', '_')}-{k}.log",
                )
                servers[f"server {k}"] = srv
                tallies[f"server {k}"] = Tally()
        interleaved = a.servers == "interleaved"
        order = [c[0] for c in configs] + (list(servers) if interleaved else [])
        spec_of = {name: (ud, dm) for name, ud, dm in configs}

        def reply(name: str, prompt: list[int]) -> None:
            """One reply of configuration `name`, into its tally."""
            if name in servers:
                res = bench.run_server(servers[name], prompt, a.max_tokens)
                t = tallies[name]
                n = max(len(res["tokens"]) - 1, 0)  # predicted_per_second is (n - 1) / span, as ours
                t.add_run(n, n / res["server_tps"] if res["server_tps"] > 0 else 0.0)
                t.drafted += res["drafted"]
                t.accepted += res["accepted"]
                t.outputs.append(res["tokens"])
                return
            ud, dm = spec_of[name]
            if other is not None and name == other_cfg:
                with adapt.policy_swapped(other):
                    tallies[name].add(run_once(adapt, prompt, a.max_tokens, True, None))
                return
            eng = adapt if name == "adaptive" else spec if ud or name == DRAFT_IDLE else base
            tallies[name].add(run_once(eng, prompt, a.max_tokens, ud, dm))

        def shuffled(names: list[str], rep: int, pi: int) -> list[str]:
            """A fresh seeded order for every prompt: a rotation kept each configuration behind the
            same one, and target-only always ran right after a llama-server request, on caches the
            server had just emptied (tiny pairs, 100% plain: adaptive measured 1.16-1.23x of
            target-only)."""
            out = list(names)
            random.Random(rep * 1000 + pi).shuffle(out)
            return out

        def rounds(names: list[str], remake: bool, n: int) -> None:
            """Every prompt of n repeats, `names` in a fresh order each; with `remake`, the
            engines drawn anew first as `--remake` says."""
            for rep in range(n):
                for pi, prompt in enumerate(prompts):
                    if remake and (rep or pi) and (a.remake == "prompt" or (a.remake == "repeat" and not pi)):
                        for eng in engines:  # a new memory placement, priced as at load (Engine.remake_contexts)
                            eng.remake_contexts(reprice=True)
                        if other is not None:
                            adapt.price_policy(other)
                    for name in shuffled(names, rep, pi):
                        reply(name, prompt)

        rounds(order, remake=True, n=repeats)
        if not interleaved:
            # llama-server in a block of its own (the default): shuffled in among the engines'
            # replies, its requests came with a +-5% bias between two engines on plain-only cells
            # (run J, tiny-llama 1.047 and tiny-llama-own 0.930 of target-only; 0.984 and 0.991
            # without it)
            rounds(list(servers), remake=False, n=a.repeats)  # as asked: no ratio is taken between them
        ref = tallies["target-only"].outputs
        differs: dict[str, str] = {}
        engine_differs: dict[str, dict[str, Any]] = {}
        decoded: dict[tuple[int, int], Any] = {}  # one one-row decode per (run, token) that parted
        for name, t in tallies.items():
            # (in a block of their own the servers ran the repeats asked: the first of the engines')
            where = first_difference(t.outputs, ref[: len(t.outputs)] if name in servers else ref)
            if where is None:
                continue
            msg = f"{case.name} {name}: tokens differ from target-only at {where}"
            if name not in servers:
                # On the CPU our engine must be exact. On a GPU a verify of k+1 rows runs other
                # kernels (another summation order) than a one-row decode, so a near-tie of the
                # target's top two logits can fall the other way: reported with that margin.
                if not a.gpu_layers:
                    raise SystemExit(f"adaptive_bench: {msg}")
                engine_differs[name] = margin_at(case, a, prompts, ref, t.outputs, decoded)
                msg += f" ({describe_margin(engine_differs[name])})"
            print(f"adaptive_bench: note: {msg}", file=sys.stderr, flush=True)
            differs[name] = where
        if tallies["target-only"].tokens == 0:
            raise SystemExit(f"adaptive_bench: {case.name}: nothing was generated")
        state = policy_state(adapt.policy)
        return {
            "case": case.name,
            "kind": case.kind,
            "k_max": kmax,
            "block": len(prompts) if repeats > 1 and a.remake == "repeat" else 1,
            "repeats": repeats,
            "n_prompts": len(prompts),
            "configs": {n: {"tps": t.tps, "tokens": t.tokens, "seconds": t.seconds, "drafted": t.drafted,
                            "accepted": t.accepted, "draft_steps": t.draft_steps, "steps": t.steps,
                            "runs": t.runs}
                        for n, t in tallies.items()},
            "policy_verify_ms": state.get("verify_ms", {}),
            "policy_draft_ms": state.get("draft_ms", {}),
            "policy_p": state.get("p", []),
            "policy_shifts": state.get("shifts"),
            "policy_from": a.policy_from,
            "policy_from_state": policy_state(other) if other is not None else {},
            "server_differs": {n: w for n, w in differs.items() if n in servers},
            "engine_differs": engine_differs,
            "runs_identical": {n: sum(x == y for x, y in zip(t.outputs, ref)) for n, t in tallies.items()},
            "device": {"engine": spec.info.device, "gpu_layers_used": spec.info.gpu_layers_used,
                       "device_sampling": bool(spec.device_sampling)},
        }
    finally:
        for s in servers.values():
            s.close()
        for eng in reversed(engines):
            eng.close()


def interval(runs_a: list[tuple[int, float]], runs_b: list[tuple[int, float]], n: int = 2000,
             seed: int = 0, block: int = 1) -> tuple[float, float] | None:
    """A 90% bootstrap interval of (tokens/s of a) / (tokens/s of b) over paired replies: replies i of
    both ran the same prompt back to back, so each resample draws whole pairs (what the host did
    during a reply hurt both alike, roughly). On the 2-core EPYC one reply's ratio moved 0.68-1.27x
    at identical work: a single ratio of sums cannot tell 0.97 from 1.0, and this says how far it
    can. With `block` > 1 the replies come in blocks of that many (a repeat, on one memory
    placement of each engine): a resample draws whole blocks, then pairs within each, so a
    placement that slowed one engine for a whole repeat widens the interval as it should. None
    when the runs do not pair up."""
    m = len(runs_a)
    if m < 2 or m != len(runs_b):
        return None
    if block < 1 or m % block or m // block < 2:
        block = 1
    blocks = [range(s, s + block) for s in range(0, m, block)]
    rng = random.Random(seed)
    ratios = []
    for _ in range(n):
        ta = sa = tb = sb = 0.0
        for _ in blocks:
            rows = blocks[rng.randrange(len(blocks))]
            for _ in rows:
                i = rows[rng.randrange(block)]
                ta, sa = ta + runs_a[i][0], sa + runs_a[i][1]
                tb, sb = tb + runs_b[i][0], sb + runs_b[i][1]
        if sa > 0 and sb > 0 and tb > 0:
            ratios.append((ta / sa) / (tb / sb))
    if not ratios:
        return None
    ratios.sort()
    return ratios[int(0.05 * (len(ratios) - 1))], ratios[int(0.95 * (len(ratios) - 1))]


def held_out_best(configs: dict[str, dict[str, Any]], n_prompts: int) -> tuple[float, list[str]] | None:
    """The best of target-only and the fixed lengths, chosen on one half of the replies and timed on
    the other (tokens/s over both halves, and the two choices). The plain best of ten noisy columns
    is biased upward (the winner's curse): where several lengths run within a few percent of each
    other, whichever drew the luckiest replies is taken for the best, and measured by those same
    replies. The halves are a checkerboard of prompt and repeat (reply i: prompt i % n_prompts,
    repeat i // n_prompts), so with two repeats or more each prompt is in both. Each half's choice is
    timed on replies it was not chosen by, so this estimate is not raised by luck (it can fall short
    of the true best where the halves choose differently). None with fewer than 2 replies a half."""
    names = [n for n in configs if n == "target-only" or n.startswith("fixed")]
    runs = {n: configs[n].get("runs", []) for n in names}
    m = len(runs.get("target-only", []))
    if not names or n_prompts < 1 or any(len(r) != m for r in runs.values()):
        return None
    halves = [[i for i in range(m) if (i % n_prompts + i // n_prompts) % 2 == h] for h in (0, 1)]
    if min(len(h) for h in halves) < 2:
        return None

    def sums(name: str, idx: list[int]) -> tuple[int, float]:
        return sum(runs[name][i][0] for i in idx), sum(runs[name][i][1] for i in idx)

    def tps(tokens: int, seconds: float) -> float:
        return tokens / seconds if seconds > 0 else 0.0

    tokens, seconds, chosen = 0, 0.0, []
    for pick, judge in ((halves[0], halves[1]), (halves[1], halves[0])):
        best = max(names, key=lambda n: tps(*sums(n, pick)))
        t, s = sums(best, judge)
        tokens, seconds = tokens + t, seconds + s
        chosen.append(best)
    return tps(tokens, seconds), chosen


def first_diff_at(outputs: list[list[int]], ref: list[list[int]]) -> tuple[int, int] | None:
    """(run, token index) of the first departure from `ref`, or None when identical."""
    for r, (got, want) in enumerate(zip(outputs, ref)):
        if got != want:
            return r, next((j for j, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
    return None


def margin_at(case: Case, a: argparse.Namespace, prompts: list[list[int]], ref: list[list[int]],
              outputs: list[list[int]], seen: dict[tuple[int, int], Any] | None = None) -> dict[str, Any]:
    """At the first token where `outputs` departs from target-only `ref`: the target's own logits
    for that token from a one-row decode (a fresh engine sampling on the host, so the row is on the
    host), their top two and the gap between them, and which token each side took. `seen` keeps
    each (run, token)'s decode, since every draft length tends to part at the same token."""
    import numpy as np

    at = first_diff_at(outputs, ref)
    if at is None:
        return {}
    run, i = at
    if seen is None or at not in seen:
        eng = Engine(EngineConfig(case.target, None, n_ctx=a.ctx, n_gpu_layers=a.gpu_layers, n_threads=a.threads,
                                  device_sampling=False))
        try:
            fin = run_once(eng, prompts[run % len(prompts)], i + 1, False, None)
            row = np.array(eng.tctx.logits(1, eng.n_vocab)[0], dtype=np.float64)
        finally:
            eng.close()
        top = [int(x) for x in np.argsort(row)[-2:][::-1]]
        found = {"top2": top, "gap": float(row[top[0]] - row[top[1]]), "top_logit": float(row[top[0]]),
                 "same_prefix": list(fin.tokens[:i]) == ref[run][:i]}
        if seen is not None:
            seen[at] = found
    else:
        found = seen[at]
    got, want = outputs[run], ref[run]
    return {"run": run, "index": i, "target_only": want[i] if i < len(want) else None,
            "this": got[i] if i < len(got) else None, **found}


def describe_margin(m: dict[str, Any]) -> str:
    if not m:
        return "no difference"
    pair = {m["target_only"], m["this"]} == set(m["top2"])
    return (f"one-row decode: top two {m['top2']} {m['gap']:.4g} apart (top logit {m['top_logit']:.3g}); "
            f"the two runs took {'exactly those two' if pair else 'other tokens'}")


def first_difference(outputs: list[list[int]], ref: list[list[int]]) -> str | None:
    """Where `outputs` first departs from `ref` ("run r, token i"), or None when identical."""
    at = first_diff_at(outputs, ref)
    if at is not None:
        return f"run {at[0]}, token {at[1]}"
    return None if len(outputs) == len(ref) else f"run {min(len(outputs), len(ref))} (missing)"


def other_name(where: str) -> str:
    """The configuration name of `--policy-from where`."""
    return f"adaptive {Path(where).name if where.endswith('.py') else where}"


def table(results: list[dict[str, Any]], load: tuple[float, float, float]) -> str:
    lines = [f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; tok/s (ratio to target-only)"]
    hdr = (f"{'case':<22} {'target-only':>11} {'best fixed':>17} {'adaptive':>15} {'mean k':>6} {'plain%':>6} "
           f"{'ad/best':>7} {'90% interval':>13} {'held-out':>8} {'server':>22}")
    lines.append(hdr)
    helds = [held_out_best(r["configs"], r.get("n_prompts", 0)) for r in results]
    for r, held in zip(results, helds):
        c = r["configs"]
        base = c["target-only"]["tps"]
        fixed = {n: v for n, v in c.items() if n.startswith("fixed")}
        best_name = max(fixed, key=lambda n: fixed[n]["tps"])
        best = max(base, fixed[best_name]["tps"])
        best_runs = c["target-only"] if base >= fixed[best_name]["tps"] else fixed[best_name]
        ci = interval(c["adaptive"].get("runs", []), best_runs.get("runs", []), block=r.get("block", 1))
        ci_text = f"{ci[0]:.3f}-{ci[1]:.3f}" if ci else "-"
        held_text = f"{c['adaptive']['tps'] / held[0]:.3f}" if held and held[0] > 0 else "-"
        ad = c["adaptive"]
        steps = max(ad["steps"], 1)
        mean_k = ad["drafted"] / ad["draft_steps"] if ad["draft_steps"] else 0.0
        plain = 100.0 * (steps - ad["draft_steps"]) / steps
        differs = r.get("server_differs", {})
        srv = [f"k{n.split()[1]} {v['tps']:.0f}{'≠' if n in differs else ''}" for n, v in c.items()
               if n.startswith("server")]
        lines.append(
            f"{r['case']:<22} {base:>11.1f} {fixed[best_name]['tps']:>7.1f} ({best_name:>7}) "
            f"{ad['tps']:>7.1f} ({ad['tps'] / base:.2f}x) {mean_k:>6.2f} {plain:>5.0f}% {ad['tps'] / best:>7.3f} "
            f"{ci_text:>13} {held_text:>8} {', '.join(srv) or '-':>22}"
        )
    for r in results:
        if not (src := r.get("policy_from")):
            continue
        c, name = r["configs"], other_name(src)
        ci = interval(c["adaptive"].get("runs", []), c[name].get("runs", []), block=r.get("block", 1))
        ratio = c["adaptive"]["tps"] / c[name]["tps"] if c[name]["tps"] else 0.0
        lines.append(f"{r['case']}: adaptive / {name} {ratio:.3f}"
                     + (f" (90% interval {ci[0]:.3f}-{ci[1]:.3f})" if ci else ""))
    lines.append("")
    lines.append("every configuration, tok/s:")
    for r, held in zip(results, helds):
        cells = ", ".join(f"{n} {v['tps']:.0f}" for n, v in r["configs"].items())
        lines.append(f"  {r['case']}: {cells}")
        if held:
            pick = f"{held[1][0]} chosen on one half, {held[1][1]} on the other"
            lines.append(f"    held-out best {held[0]:.0f} tok/s ({pick})")
        if d := r.get("device"):
            lines.append(f"    engine on {d['engine']}, sampling on the {'device' if d['device_sampling'] else 'host'}")
        for n, where in r.get("server_differs", {}).items():
            lines.append(f"    ≠ {n}: its tokens differ from target-only at {where}")
        same = r.get("runs_identical", {})
        for n, m in r.get("engine_differs", {}).items():
            lines.append(f"    ≠ {n} (GPU): {same.get(n, '?')}/{same.get('target-only', '?')} runs identical; "
                         f"first difference run {m.get('run')}, token {m.get('index')}: {describe_margin(m)}")
    return "\n".join(lines)


def _lengths(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        ks = ()
    if not ks or min(ks) < 1:
        raise argparse.ArgumentTypeError(f"want draft lengths >= 1 separated by commas, not {text!r}")
    return ks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES), help=f"comma-separated, from {', '.join(ALL_CASES)}")
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ctx", type=int, default=2048)
    ap.add_argument("--server", action="store_true", help="also llama-server (must be built: atomicchat bench builds it)")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "atomicchat" / "bench-models")
    ap.add_argument("--logs", type=Path, default=Path.home() / ".cache" / "atomicchat" / "bench-logs")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--pair", action="append", default=[], help="NAME=TARGET,DRAFT: another pair (code, prose)")
    ap.add_argument("--gpu-layers", type=int, default=0, help="layers on the GPU, engines and servers (-1: all)")
    ap.add_argument("--server-bin", type=Path, default=None, help="this llama-server binary (implies --server)")
    ap.add_argument("--fixed", type=_lengths, default=None,
                    help="the fixed lengths to run, e.g. 1,3,7,15 (default 1-7, 10 and the draft's maximum; "
                         "a large target on a short device lease needs fewer)")
    ap.add_argument("--remake", choices=("prompt", "repeat", "never"), default="prompt",
                    help="make every engine's contexts again before each prompt (default), each repeat, or never: "
                         "each configuration is then timed on that many memory placements")
    ap.add_argument("--keep-contexts", dest="remake", action="store_const", const="never",
                    help="the same as --remake never")
    ap.add_argument("--servers", choices=("block", "interleaved"), default="block",
                    help="llama-server's requests after all of a case's engine replies (default), or shuffled "
                         "in among them")
    ap.add_argument("--draft-idle", action="store_true",
                    help="also the draft's engine with DFlash off: what a loaded draft costs a plain step")
    ap.add_argument("--policy-from", default=None, metavar="REV",
                    help="also the adaptive policy as git revision REV had it (or a draft_policy.py file), on "
                         "the same engine, priced on the same contexts: a policy change beside the one it replaces")
    a = ap.parse_args(argv)
    a.policy_class = policy_class_at(a.policy_from) if a.policy_from else None
    names = [n.strip() for n in a.cases.split(",") if n.strip() and n.strip() != "none"]
    unknown = [n for n in names if n not in ALL_CASES]
    if unknown or not (names or a.pair):
        ap.error(f"unknown case(s) {unknown}; choose from {', '.join(ALL_CASES)} (or none, with --pair)")
    extra = pair_cases(a.pair)
    server_bin = None
    if a.server_bin is not None:
        if not a.server_bin.is_file():
            ap.error(f"--server-bin {a.server_bin} is not a file")
        server_bin = a.server_bin
        a.logs.mkdir(parents=True, exist_ok=True)
    elif a.server:
        src = bench.find_llama_src(None, Path.home() / ".cache" / "atomicchat")
        server_bin, _ = bench.ensure_server(src, Path.home() / ".cache" / "atomicchat", build=False)
        a.logs.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    t0 = time.time()
    results = []
    for case in cases(names, a.cache) + extra:
        print(f"[{case.name}] ...", file=sys.stderr, flush=True)
        results.append(bench_case(case, a, server_bin))
        print(table(results[-1:], load).splitlines()[2], file=sys.stderr, flush=True)  # this case's row now
    if not results:
        print("adaptive_bench: no case ran", file=sys.stderr)
        return 1
    print(table(results, load))
    print(f"\n{time.time() - t0:.0f} s; load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.json:
        a.json.write_text(json.dumps({"load": load, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
