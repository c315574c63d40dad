"""Record what a draft policy needs to decide, from a real pair on this machine, for the unit tests.

Runs the pair with the draft length pinned at its maximum (greedy) and writes, per step, how many
drafted tokens the target accepted (the match length, capped at k_max), plus the median cost of a
verify of n tokens and of a draft of k tokens for every size, measured by pinning each length in turn.
tests/engine/test_draft_policy.py replays these traces through the policy. It also prints the
ceiling: the speedup over plain steps each length would give if every drafted token were accepted
(k + 1 tokens for one draft block and one verify of k + 1), which no draft can beat on this machine:

    .venv/bin/python benchmarks/record_policy_trace.py --out tests/engine/data/policy_trace_demo.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atomicchat.engine import Engine, EngineConfig, GenParams, Step  # noqa: E402
from atomicchat.engine.draft_policy import FixedPolicy  # noqa: E402

PROMPTS = [
    "Write a Python function `read_config` that parses an INI file.",
    "Write a Python class `LRUCache`.",
    "Explain in a few sentences why the sky is blue.",
    "Give me three tips for learning a new language.",
]


class Recorder(FixedPolicy):
    def __init__(self, k: int) -> None:
        super().__init__(k)
        self.log: list[tuple[int, int, float, float, bool]] = []

    def record(self, k, n_accepted, draft_seconds, verify_seconds, fed=True, asked=None):  # noqa: ANN001
        # under the confidence cut, the length asked for (a cut position counts as rejected, as in the policy)
        self.log.append((k if asked is None else asked, n_accepted, draft_seconds, verify_seconds, fed))


def main(argv: list[str] | None = None) -> int:
    from atomicchat.demo import demo_draft_path, demo_target_path

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", type=Path, default=None)
    ap.add_argument("--draft", type=Path, default=None)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    target, draft = a.target or Path(demo_target_path()), a.draft or Path(demo_draft_path())
    eng = Engine(EngineConfig(target, draft, n_ctx=2048, n_gpu_layers=0, n_threads=a.threads))
    try:
        kmax = eng.draft_max
        prompts = [eng.chat_prompt([{"role": "user", "content": t}]) for t in PROMPTS]
        verify: dict[int, list[float]] = {}
        drafts: dict[int, list[float]] = {}
        matches: list[int] = []
        for k in range(0, kmax + 1):
            for prompt in prompts:
                rec = Recorder(k)
                eng.policy = rec  # the engine consults the pinned length through its policy slot
                eng.reset()
                params = GenParams(max_tokens=a.max_tokens, use_draft=True, draft_max=None)
                for _ in eng.generate(prompt, params):
                    pass
                for kk, acc, ds, vs, _fed in rec.log:
                    verify.setdefault(kk + 1, []).append(vs)
                    if kk:
                        drafts.setdefault(kk, []).append(ds)
                    if kk == kmax:
                        matches.append(acc)
        if not matches or 1 not in verify:
            print("record_policy_trace: nothing was recorded", file=sys.stderr)
            return 1
        vm = {n: statistics.median(v) * 1e3 for n, v in sorted(verify.items())}
        dm = {k: statistics.median(v) * 1e3 for k, v in sorted(drafts.items())}
        out = {
            "target": target.name, "draft": draft.name, "threads": a.threads, "k_max": kmax,
            "load_average": os.getloadavg(),
            "verify_ms": vm,
            "draft_ms": dm,
            # what a step of k drafted tokens would give over plain steps if every token were accepted:
            # no draft, however good, makes replies faster than this on this machine
            "ceiling_speedup": {k: round((k + 1) * vm[1] / (vm[k + 1] + dm[k]), 3) for k in dm if k + 1 in vm},
            "matches": matches,
        }
        a.out.write_text(json.dumps(out, indent=1))
        print(json.dumps({k: v for k, v in out.items() if k != "matches"}, indent=1))
        print(f"{len(matches)} steps, mean accepted {statistics.mean(matches):.2f} of {kmax}")
        return 0
    finally:
        eng.close()


if __name__ == "__main__":
    sys.exit(main())
