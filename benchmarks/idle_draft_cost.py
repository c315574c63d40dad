"""What a loaded draft costs the target's plain steps, side by side in one run (issue 13).

The adaptive policy takes plain steps where no draft length pays, so those steps must cost what they
cost without a draft. Two things a loaded draft changes on the target's context even when nothing is
drafted: the feature taps (`llama_set_embeddings_layer_inp` on the draft's target layers: every decode
keeps those layers' inputs) and, on a hybrid target, the recurrent-state snapshots kept for rolling
back rejected drafts (`n_rs_seq`). Each configuration generates the same greedy replies with DFlash
off, interleaved in a fresh seeded order per prompt:

  target-only      the target alone (no draft loaded)
  draft loaded     the engine as the app loads it (taps on, n_rs_seq as `Engine` sized it)
  no snapshots     the same with n_rs_seq = 0 (hybrid targets only)
  taps off         the same with the taps switched off after load (diagnostic: it could not draft)

    python benchmarks/idle_draft_cost.py --pair T.gguf,D.gguf [--gpu-layers -1] [--prompts 3]
    python benchmarks/idle_draft_cost.py --cases tiny-qwen35,demo

tok/s are generated tokens over generate_seconds, summed over prompts and repeats; the ratio column is
to target-only. Every engine's contexts are made again before each repeat but the first, so each
configuration is timed on as many memory placements as repeats (see adaptive_bench). Every
configuration must produce target-only's tokens (on the CPU), or the run fails.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atomicchat.engine import Engine, EngineConfig  # noqa: E402
from benchmarks import bench  # noqa: E402
from benchmarks.adaptive_bench import Tally  # noqa: E402
from benchmarks.common import run_once  # noqa: E402

PROMPTS = [
    "Write a Python function that reads a file and counts its lines.",
    "Explain in a few sentences why the sky is blue.",
    "List five fruits with one fact about each, as JSON.",
    "Write a short story about a lighthouse keeper.",
]


def engines(target: Path, draft: Path, cfg: dict) -> dict[str, Engine]:
    out = {"target-only": Engine(EngineConfig(target, None, **cfg))}
    loaded = Engine(EngineConfig(target, draft, **cfg))
    out["draft loaded"] = loaded
    if loaded.info.is_hybrid:
        out["no snapshots"] = Engine(EngineConfig(target, draft, n_rs_seq=0, **cfg))
    out["taps off"] = taps_off(Engine(EngineConfig(target, draft, **cfg)))
    return out


def taps_off(eng: Engine) -> Engine:
    """The engine with its target's feature taps switched off (on again whenever its contexts are made)."""
    assert eng.ds is not None
    for lid in eng.ds.layer_ids:
        eng.ds.ext.set_embeddings_layer_inp(eng.tctx.ptr, lid, False)
    return eng


def measure(name: str, target: Path, draft: Path, a: argparse.Namespace) -> dict[str, float]:
    cfg = dict(n_ctx=a.ctx, n_threads=a.threads, n_gpu_layers=a.gpu_layers)
    engs = engines(target, draft, cfg)
    try:
        base = engs["target-only"]
        if base.info.has_chat_template:
            prompts = [base.chat_prompt([{"role": "user", "content": t}]) for t in PROMPTS[: a.prompts]]
        else:
            prompts = bench.tiny_prompts(a.prompts, base.n_vocab)
        tallies = {n: Tally() for n in engs}
        for rep in range(a.repeats):
            if rep and not a.keep_contexts:  # a new memory placement each repeat (Engine.remake_contexts)
                for n, eng in engs.items():
                    eng.remake_contexts()
                    if n == "taps off":
                        taps_off(eng)
            for pi, prompt in enumerate(prompts):
                order = list(engs)
                random.Random(rep * 1000 + pi).shuffle(order)
                for n in order:
                    tallies[n].add(run_once(engs[n], prompt, a.max_tokens, False, None))
        if tallies["target-only"].tokens == 0:
            raise SystemExit(f"idle_draft_cost: {name}: nothing was generated")
        for n, t in tallies.items():
            if t.outputs != tallies["target-only"].outputs and not a.gpu_layers:
                raise SystemExit(f"idle_draft_cost: {name}: {n} wrote other tokens than target-only")
        info = engs["draft loaded"]
        print(f"{name}: {info.info.device}; n_rs_seq {info.n_rs_seq}; taps on layers {info.ds.layer_ids}")
        ref = tallies["target-only"].tps
        for n, t in tallies.items():
            print(f"  {n:<14} {t.tps:9.1f} tok/s  {t.tps / ref:6.3f}x   ({t.tokens} tokens)")
        return {n: t.tps for n, t in tallies.items()}
    finally:
        for e in reversed(list(engs.values())):
            e.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="", help="comma-separated: tiny-llama, tiny-qwen35, demo, smollm2")
    ap.add_argument("--pair", action="append", default=[], help="TARGET,DRAFT")
    ap.add_argument("--prompts", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--keep-contexts", action="store_true",
                    help="keep each engine's contexts; by default they are made again before every repeat "
                         "(where llama.cpp's buffers land can slow one engine by up to 14%% for its whole life)")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ctx", type=int, default=2048)
    ap.add_argument("--gpu-layers", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "atomicchat" / "bench-models")
    a = ap.parse_args(argv)
    pairs: list[tuple[str, Path, Path]] = []
    for n in [c.strip() for c in a.cases.split(",") if c.strip()]:
        if n == "demo":
            p = bench.demo_pair()
        elif n == "smollm2":
            p = bench.smollm2_pair()
        else:
            p = bench.tiny_pairs([n], a.cache)[0]
        if p is None:
            raise SystemExit(f"idle_draft_cost: {n} is not installed")
        pairs.append((n, p.target, p.draft))
    for spec in a.pair:
        t, comma, d = spec.partition(",")
        if not comma or not Path(t).is_file() or not Path(d).is_file():
            raise SystemExit(f"idle_draft_cost: --pair wants TARGET,DRAFT of two files, not {spec!r}")
        pairs.append((Path(t).stem, Path(t), Path(d)))
    if not pairs:
        ap.error("name --cases or --pair")
    print(f"load average {os.getloadavg()[0]:.2f}; greedy, DFlash off, {a.prompts} prompts x {a.max_tokens} "
          f"tokens x {a.repeats} repeats, {a.threads} thread(s), gpu layers {a.gpu_layers}")
    for name, t, d in pairs:
        measure(name, t, d, a)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
