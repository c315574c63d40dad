"""`python benchmarks/bench.py` (or `atomicchat bench` in a source checkout): our engine next to llama.cpp's
own C++ DFlash server, same models, same prompts. Not part of the installers.

Cases, run ALTERNATELY in one session (interleaved repeats, medians), greedy, the same n_max and the
same thread count everywhere:
  a  our engine, target only                  (atomicchat.engine, no draft loaded)
  b  our engine, DFlash                       (atomicchat.engine with the draft)
  c  llama-server, DFlash                     (built from the SAME vendored llama.cpp commit, queried
                                               over 127.0.0.1 with `/completion`, prompt as token ids)
  d  llama-cpp-python's high-level `Llama`    (target only)
  e  llama-server, target only                (optional: `--cases a,b,c,d,e`)

tokens/s is llama-server's own definition for every case: (n_generated - 1) / (time from the first
generated token to the last), i.e. the first token (it comes from the prompt's logits) and the prompt
are excluded. The server's figure is `timings.predicted_per_second`; ours are measured the same way
in-process.

The server is built on demand (CPU, Release, native, `--target llama-server`) into the user cache
(`~/.cache/atomicchat/llama-server-<commit>-nollamafile/`) and reused. Nothing here runs in the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python benchmarks/bench.py` from a checkout

from atomicchat.cli.errors import CliError  # noqa: E402
from atomicchat.engine.draft_confidence import DEFAULT_P_MIN, p_min_in_range  # noqa: E402

CASES: dict[str, str] = {
    "a": "engine target-only",
    "b": "engine DFlash",
    "c": "llama-server DFlash",
    "d": "llama-cpp-python Llama",
    "e": "llama-server target-only",
}
DEFAULT_CASES = "a,b,c,d"
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
TPS_DEFINITION = "(n_generated - 1) / seconds from the first generated token to the last (llama-server's predicted_per_second)"
REPO_ROOT = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------------------------------
# pure helpers (unit-tested in tests/bench)


@dataclass
class Run:
    """One generation of one case."""

    case: str
    prompt: int  # index into the prompt list
    repeat: int
    tokens: list[int]
    seconds: float  # first generated token -> last generated token
    tps: float
    drafted: int = 0
    accepted: int = 0
    steps: int = 0
    cpu_seconds: float | None = None  # CPU time of the whole request, every thread of its process
    extra: dict[str, Any] = field(default_factory=dict)


def tps_of(n_generated: int, seconds: float) -> float:
    """llama-server's predicted_per_second: the first token is free (prompt logits)."""
    return (n_generated - 1) / seconds if n_generated > 1 and seconds > 0 else 0.0


def median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs)) if xs else 0.0


def ratio(a: float, b: float) -> float | None:
    return a / b if a and b else None


def case_order(cases: Sequence[str], repeat: int) -> list[str]:
    """Rotate the case order each repeat so that no case always runs first (or right after another)."""
    k = repeat % len(cases) if cases else 0
    return list(cases[k:]) + list(cases[:k])


def repeat_tps(runs: Sequence[Run]) -> dict[int, float]:
    """tokens/s of each repeat over all its prompts: sum(n-1) / sum(seconds)."""
    toks: dict[int, int] = {}
    secs: dict[int, float] = {}
    for r in runs:
        toks[r.repeat] = toks.get(r.repeat, 0) + max(len(r.tokens) - 1, 0)
        secs[r.repeat] = secs.get(r.repeat, 0.0) + r.seconds
    return {k: (toks[k] / secs[k] if secs[k] > 0 else 0.0) for k in sorted(toks)}


def repeat_cpu_tps(runs: Sequence[Run]) -> dict[int, float]:
    """Like repeat_tps, over CPU seconds (empty when some run has no CPU figure)."""
    toks: dict[int, int] = {}
    secs: dict[int, float] = {}
    for r in runs:
        if r.cpu_seconds is None:
            return {}
        toks[r.repeat] = toks.get(r.repeat, 0) + max(len(r.tokens) - 1, 0)
        secs[r.repeat] = secs.get(r.repeat, 0.0) + r.cpu_seconds
    return {k: (toks[k] / secs[k] if secs[k] > 0 else 0.0) for k in sorted(toks)}


def summarize_model(name: str, runs: Sequence[Run], cases: Sequence[str], n_prompts: int) -> dict[str, Any]:
    """Medians, ratios, draft counts and token equality for one model pair."""
    by_case: dict[str, list[Run]] = {c: [r for r in runs if r.case == c] for c in cases}
    out_cases: dict[str, Any] = {}
    for c, rs in by_case.items():
        per_rep = repeat_tps(rs)
        per_rep_cpu = repeat_cpu_tps(rs)
        first_rep = min((r.repeat for r in rs), default=0)
        out_cases[c] = {
            "label": CASES[c],
            "tps_median": median(list(per_rep.values())),
            "cpu_tps_median": median(list(per_rep_cpu.values())) if per_rep_cpu else None,
            "tps_repeats": list(per_rep.values()),
            "tps_min": min(per_rep.values(), default=0.0),
            "tps_max": max(per_rep.values(), default=0.0),
            # counts of one repeat (greedy: every repeat must give the same; checked below)
            "drafted": sum(r.drafted for r in rs if r.repeat == first_rep),
            "accepted": sum(r.accepted for r in rs if r.repeat == first_rep),
            "steps": sum(r.steps for r in rs if r.repeat == first_rep),
            "tokens": sum(len(r.tokens) for r in rs if r.repeat == first_rep),
            "deterministic": _deterministic(rs),
        }

    def tps(c: str) -> float:
        return out_cases[c]["tps_median"] if c in out_cases else 0.0

    def cpu(c: str) -> float:
        return (out_cases[c]["cpu_tps_median"] or 0.0) if c in out_cases else 0.0

    def same(x: str, y: str) -> bool | None:
        if x not in by_case or y not in by_case or not by_case[x] or not by_case[y]:
            return None
        return all(_tokens(by_case[x], p) == _tokens(by_case[y], p) for p in range(n_prompts))

    def per_prompt(x: str, y: str) -> list[bool] | None:
        if x not in by_case or y not in by_case or not by_case[x] or not by_case[y]:
            return None
        return [_tokens(by_case[x], p) == _tokens(by_case[y], p) for p in range(n_prompts)]

    draft = None
    if "b" in out_cases and "c" in out_cases:
        b, c = out_cases["b"], out_cases["c"]
        draft = {
            "b_drafted": b["drafted"],
            "b_accepted": b["accepted"],
            "c_drafted": c["drafted"],
            "c_accepted": c["accepted"],
            "equal": b["drafted"] == c["drafted"] and b["accepted"] == c["accepted"],
            "b_acceptance": b["accepted"] / b["drafted"] if b["drafted"] else 0.0,
            "c_acceptance": c["accepted"] / c["drafted"] if c["drafted"] else 0.0,
        }
    return {
        "name": name,
        "cases": out_cases,
        "ratios": {
            "b_over_c": ratio(tps("b"), tps("c")),
            "a_over_d": ratio(tps("a"), tps("d")),
            "b_over_a": ratio(tps("b"), tps("a")),
            "c_over_e": ratio(tps("c"), tps("e")),
            "a_over_e": ratio(tps("a"), tps("e")),
            # the same ratios over CPU time: what the work costs, whatever else runs on the machine
            "b_over_c_cpu": ratio(cpu("b"), cpu("c")),
            "a_over_d_cpu": ratio(cpu("a"), cpu("d")),
        },
        "draft_counts": draft,
        "tokens_equal": {
            "b_eq_c": same("b", "c"),
            "b_eq_a": same("b", "a"),
            "a_eq_d": same("a", "d"),
            "a_eq_e": same("a", "e"),
            "per_prompt_b_eq_c": per_prompt("b", "c"),
            "per_prompt_b_eq_a": per_prompt("b", "a"),
        },
    }


def _tokens(runs: Sequence[Run], prompt: int) -> list[int] | None:
    for r in runs:
        if r.prompt == prompt:
            return r.tokens
    return None


def _deterministic(runs: Sequence[Run]) -> bool:
    seen: dict[int, tuple[list[int], int, int]] = {}
    for r in runs:
        key = (r.tokens, r.drafted, r.accepted)
        if r.prompt in seen and seen[r.prompt] != key:
            return False
        seen.setdefault(r.prompt, key)
    return True


def _fmt(x: float | None, spec: str = ".1f") -> str:
    return "—" if x is None else format(x, spec)


def _yn(x: bool | None) -> str:
    return "n/a" if x is None else ("yes" if x else "NO")


def format_table(report: dict[str, Any]) -> str:
    """The human-readable table printed on stdout."""
    meta = report["meta"]
    lines = [
        f"atomicchat bench — llama.cpp {meta.get('llama_cpp_commit') or '?'} · llama-cpp-python "
        f"{meta.get('llama_cpp_python') or '?'} · {meta.get('cpu') or '?'} ({meta.get('n_cpus')} CPUs)",
        f"greedy · n_max {meta['n_max']} · p_min {meta.get('p_min', 0):g} · {meta['max_tokens']} tokens × {meta['n_prompts']} prompts × "
        f"{meta['repeats']} interleaved repeats · tok/s = median over repeats of {TPS_DEFINITION}",
        f"load average (1/5/15 min): start {_load(meta.get('loadavg_start'))} · end {_load(meta.get('loadavg_end'))}",
        "",
    ]
    head = (
        f"{'model':<14} {'case':<28} {'thr':>3} {'tok/s med':>10} {'min':>9} {'max':>9} {'cpu tok/s':>10} "
        f"{'drafted':>8} {'accepted':>8} {'steps':>6} {'tokens':>6}"
    )
    lines += [head, "-" * len(head)]
    for m in report["models"]:
        first = True
        for c, s in m["cases"].items():
            lines.append(
                f"{(m['name'] if first else ''):<14} {c + ' ' + s['label']:<28} {m.get('threads', ''):>3} "
                f"{s['tps_median']:>10.1f} {s['tps_min']:>9.1f} {s['tps_max']:>9.1f} "
                f"{_fmt(s.get('cpu_tps_median')):>10} "
                f"{(s['drafted'] if c in 'bc' else ''):>8} {(s['accepted'] if c in 'bc' else ''):>8} "
                f"{s['steps'] or '':>6} {s['tokens']:>6}" + ("" if s["deterministic"] else "  (runs differ!)")
            )
            first = False
        r, t, d = m["ratios"], m["tokens_equal"], m["draft_counts"]
        parts = [f"b/c {_fmt(r['b_over_c'], '.3f')}", f"a/d {_fmt(r['a_over_d'], '.3f')}", f"b/a {_fmt(r['b_over_a'], '.3f')}"]
        if r.get("a_over_e") is not None:
            parts.append(f"a/e {_fmt(r['a_over_e'], '.3f')}")
        if r.get("b_over_c_cpu") is not None or r.get("a_over_d_cpu") is not None:
            parts.append(f"CPU-time b/c {_fmt(r.get('b_over_c_cpu'), '.3f')} a/d {_fmt(r.get('a_over_d_cpu'), '.3f')}")
        lines.append(f"{'':<14} ratios: " + " · ".join(parts))
        eq = f"tokens: b==c {_yn(t['b_eq_c'])} · b==a {_yn(t['b_eq_a'])} · a==d {_yn(t['a_eq_d'])}"
        if t.get("a_eq_e") is not None:
            eq += f" · a==e {_yn(t['a_eq_e'])}"
        lines.append(f"{'':<14} {eq}")
        if d:
            lines.append(
                f"{'':<14} drafted b {d['b_drafted']} / c {d['c_drafted']} · accepted b {d['b_accepted']} / "
                f"c {d['c_accepted']} · {'same' if d['equal'] else 'DIFFERENT'}"
            )
        ov = m.get("overhead")
        if ov:
            for c, o in ov.items():
                lines.append(
                    f"{'':<14} {c} per step: {o['overhead_us_per_step']:.1f} µs Python outside llama_decode "
                    f"(thread CPU {o.get('overhead_cpu_us_per_step', float('nan')):.1f} µs), "
                    f"{o['decode_us_per_step']:.1f} µs in llama_decode ({o['decode_calls_per_step']:.1f} calls)"
                )
        if m.get("server_us_per_step") is not None:
            lines.append(f"{'':<14} c per step: {m['server_us_per_step']:.1f} µs (llama-server, all included)")
        for c, e in (m.get("engine_device") or {}).items():
            lines.append(
                f"{'':<14} {c} ran on {e['device']} · sampling {'on the device' if e['device_sampling'] else 'on the host'}"
            )
        lines.append("")
    return "\n".join(lines)


def _load(x: Sequence[float] | None) -> str:
    return " ".join(f"{v:.2f}" for v in x) if x else "n/a"


def commit_from_sdist(src: Path) -> str | None:
    """The llama.cpp commit vendored in a llama-cpp-python source tree (git metadata, else CHANGELOG)."""
    head = src / ".git" / "modules" / "vendor" / "llama.cpp" / "HEAD"
    with contextlib.suppress(OSError):
        h = head.read_text().strip()
        if re.fullmatch(r"[0-9a-f]{7,40}", h):
            return h[:9]
    with contextlib.suppress(OSError):
        text = (src / "CHANGELOG.md").read_text(encoding="utf-8", errors="replace")
        m = re.search(r"llama\.cpp@([0-9a-f]{7,40})", text)
        if m:
            return m.group(1)[:9]
    return None


def server_command(
    binary: Path,
    target: Path,
    draft: Path | None,
    *,
    port: int,
    threads: int,
    n_ctx: int,
    n_batch: int,
    n_max: int,
    gpu_layers: int = 0,
    p_min: float | None = None,
) -> list[str]:
    """llama-server flags (names checked in vendor/llama.cpp/common/arg.cpp of this commit).
    gpu_layers: -ngl/-ngld (0: CPU only, the default; negative: all layers, as 999).
    p_min: the draft's confidence cut, as the engine's (None: the engine's default, DEFAULT_P_MIN)."""
    ngl = str(gpu_layers if gpu_layers >= 0 else 999)
    cmd = [
        str(binary), "-m", str(target),
        "--host", "127.0.0.1", "--port", str(port),
        "-c", str(n_ctx), "-b", str(n_batch), "-ub", str(n_batch),
        "-t", str(threads), "-tb", str(threads),
        "-np", "1", "-ngl", ngl, "--no-webui",
    ]  # fmt: skip
    from atomicchat.engine.model import use_extra_buffers

    if not use_extra_buffers():  # as the engine: llama.cpp's AMX repacking segfaults here on Q4/Q8
        cmd.append("--no-repack")
    from atomicchat.engine import attention
    from atomicchat.engine.lib import C, system_info

    # flash attention as the engine sets it on this build and device (off on the CPU without llamafile
    # kernels); layers asked for on a build with no GPU backend run on the CPU, as in the engine
    on_gpu = gpu_layers != 0 and bool(C().llama_supports_gpu_offload())
    cmd += ["-fa", attention.describe(attention.choose(system_info(), on_gpu))]
    if draft is not None:
        cmd += [
            "-md", str(draft), "--spec-type", "draft-dflash", "--spec-draft-n-max", str(n_max),
            "--spec-draft-p-min", f"{DEFAULT_P_MIN if p_min is None else p_min:g}",
            "-td", str(threads), "-tbd", str(threads), "-ngld", ngl,
        ]  # fmt: skip
    return cmd


def completion_request(prompt: list[int], n_predict: int) -> dict[str, Any]:
    return {
        "prompt": list(prompt),
        "n_predict": n_predict,
        "temperature": 0,
        "cache_prompt": False,
        "return_tokens": True,
        "stream": False,
    }


def tiny_prompts(n: int, n_vocab: int, seed: int = 1234) -> list[list[int]]:
    """Deterministic token-id prompts for the generated test models (no real vocabulary there)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lengths = [8, 33, 100, 17, 64, 250]
    return [rng.integers(0, max(n_vocab - 1, 2), size=lengths[i % len(lengths)]).tolist() for i in range(n)]


TEXT_PROMPTS = [  # code requests: the demo pair was trained on Python sources; fine for chat models too
    "Write a Python function `merge_sorted(a, b)` that merges two sorted lists.",
    "Write the class `LRUCache` in Python.",
    "How is `dedent` implemented in `textwrap`?",
    "Show me the `__repr__` method of a small `Point` class.",
]


# ----------------------------------------------------------------------------------------------------
# models


@dataclass
class Pair:
    name: str
    target: Path
    draft: Path
    text_prompts: bool  # True: a real tokenizer (chat template / raw text); False: random ids


def _factory():
    """tests/gguf_factory.py of this source tree, loaded by path (a `tests` package elsewhere on
    sys.path must not shadow it)."""
    import importlib.util

    path = REPO_ROOT / "tests" / "gguf_factory.py"
    if not path.exists():
        raise CliError("the tiny models need tests/gguf_factory.py from the source tree; use --target/--draft")
    name = "atomicchat_bench_gguf_factory"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses need the module registered while it executes
    spec.loader.exec_module(mod)
    return mod


def tiny_pairs(names: Sequence[str], models_dir: Path) -> list[Pair]:
    """The generated test pairs (the same specs as tests/conftest.py), cached by factory + spec hash."""
    f = _factory()
    specs = {
        "tiny-llama": (f.TargetSpec(), f.DraftSpec()),
        "tiny-llama-own": (f.TargetSpec(), f.DraftSpec(own_embeddings=True, seed=7)),
        "tiny-qwen35": (f.TargetSpec(arch="qwen35", seed=3), f.DraftSpec(target_layers=(0, 2, 3), seed=4)),
    }
    src = Path(f.__file__).read_bytes()
    models_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        if name not in specs:
            raise CliError(f"unknown model {name!r}; choose from {', '.join([*specs, 'demo', 'smollm2'])}")
        t, d = specs[name]
        h = hashlib.sha256(src + repr((t, d)).encode()).hexdigest()[:10]
        tp, dp = models_dir / f"{name}-{h}-target.gguf", models_dir / f"{name}-{h}-draft.gguf"
        if not tp.exists():
            f.write_target(tp.with_suffix(".partial"), t).replace(tp)
        if not dp.exists():
            f.write_draft(dp.with_suffix(".partial"), t, d).replace(dp)
        out.append(Pair(name, tp, dp, text_prompts=False))
    return out


def demo_pair() -> Pair | None:
    """The demo pair from atomicchat/demo.py, when another part of the app provides it."""
    try:
        from atomicchat import demo  # type: ignore[attr-defined]

        t, d = demo.demo_target_path(), demo.demo_draft_path()
    except Exception:
        return None
    if not t or not d or not Path(t).exists() or not Path(d).exists():
        return None
    return Pair("demo", Path(t), Path(d), text_prompts=True)


def smollm2_pair() -> Pair | None:
    """The first-run pair (atomicchat/first_run.py): SmolLM2-135M-Instruct Q4_1 + its DFlash draft."""
    from atomicchat import first_run

    t, d = first_run.smollm2_path(), first_run.draft_path()
    return Pair("smollm2", t, d, text_prompts=True) if t and d else None


# ----------------------------------------------------------------------------------------------------
# llama-server: source, build, process


def find_llama_src(explicit: Path | None, cache: Path) -> Path:
    """A llama-cpp-python source tree with vendor/llama.cpp: --llama-src, $ATOMICCHAT_LLAMA_SRC, a
    previously unpacked sdist in the cache, /tmp/src, else `pip download` of the sdist."""
    cands = [explicit] if explicit else []
    env = os.environ.get("ATOMICCHAT_LLAMA_SRC")
    if env:
        cands.append(Path(env))
    cands += [cache / "sdist" / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}", Path("/tmp/src") / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}"]
    for c in cands:
        if c and (c / "vendor" / "llama.cpp" / "CMakeLists.txt").exists():
            return c
    if explicit:
        raise CliError(f"{explicit} has no vendor/llama.cpp (expected an unpacked llama-cpp-python sdist)")
    dest = cache / "sdist"
    dest.mkdir(parents=True, exist_ok=True)
    print(f"Downloading the llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} sdist (for its vendored llama.cpp) ...", file=sys.stderr)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-d", str(dest),
         f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"],
        capture_output=True, text=True,
    )  # fmt: skip
    tars = sorted(dest.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"))
    if r.returncode != 0 or not tars:
        raise CliError(
            "could not get the llama.cpp sources: pass --llama-src DIR (an unpacked llama-cpp-python "
            f"{LLAMA_CPP_PYTHON_VERSION} sdist) or --server PATH. pip said: {r.stderr.strip()[-300:]}"
        )
    with tarfile.open(tars[0]) as tf:
        tf.extractall(dest, filter="data")
    return dest / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}"


def ensure_server(src: Path, cache: Path, jobs: int = 2, build: bool = True) -> tuple[Path, str]:
    """The llama-server binary built from `src`'s vendored llama.cpp (cached per commit)."""
    commit = commit_from_sdist(src) or "unknown-" + hashlib.sha256(
        (src / "vendor" / "llama.cpp" / "CMakeLists.txt").read_bytes()
    ).hexdigest()[:9]
    root = cache / f"llama-server-{commit}-nollamafile"  # built as the engine's library (scripts/bootstrap.sh)
    bdir = root / "build"
    binary = bdir / "bin" / "llama-server"
    if binary.exists():
        return binary, commit
    if not build:
        raise CliError(f"llama-server is not built yet ({binary}); run without --no-build")
    if not shutil.which("cmake"):
        raise CliError("building llama-server needs CMake and a C++ compiler on PATH")
    root.mkdir(parents=True, exist_ok=True)
    log = root / "build.log"
    print(
        f"Building llama-server from the vendored llama.cpp {commit} (CPU, Release, native, -j{jobs}) into {root};\n"
        f"this happens once and takes several minutes on 2 cores. Log: {log}",
        file=sys.stderr,
    )
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = [
        "cmake", "-S", str(src / "vendor" / "llama.cpp"), "-B", str(bdir), *gen,
        "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON",  # as llama-cpp-python builds its wheel
        "-DGGML_LLAMAFILE=OFF",  # as scripts/bootstrap.sh builds it (engine/attention.py)
        "-DLLAMA_BUILD_SERVER=ON", "-DBUILD_SHARED_LIBS=OFF",
        "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",  # no npm, no download
        "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF",
    ]  # fmt: skip
    with log.open("w") as fh:
        for cmd in (configure, ["cmake", "--build", str(bdir), f"-j{jobs}", "--target", "llama-server"]):
            fh.write("$ " + " ".join(cmd) + "\n")
            fh.flush()
            rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT).returncode
            if rc != 0:
                tail = log.read_text(errors="replace").splitlines()[-8:]
                raise CliError(f"building llama-server failed (exit {rc}); see {log}: " + " | ".join(tail))
    if not binary.exists():
        raise CliError(f"the build finished but {binary} is missing; see {log}")
    return binary, commit


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http(url: str, body: dict[str, Any] | None = None, timeout: float = 600.0) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


class Server:
    """One llama-server process on 127.0.0.1, started and stopped by us."""

    def __init__(self, cmd_for_port: Callable[[int], list[str]], log_path: Path, startup_s: float = 180.0) -> None:
        self.port = _free_port()
        self.cmd = cmd_for_port(self.port)
        self.log_path = log_path
        self._log = log_path.open("w")
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + startup_s
        while True:
            if self.proc.poll() is not None:
                self.close()
                tail = log_path.read_text(errors="replace").splitlines()[-6:]
                raise CliError(f"llama-server exited with {self.proc.returncode}: " + " | ".join(tail))
            try:
                if _http(self.url + "/health", timeout=2).get("status") == "ok":
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError, OSError):
                pass
            if time.monotonic() > deadline:
                self.close()
                raise CliError(f"llama-server did not become ready in {startup_s:.0f} s; see {log_path}")
            time.sleep(0.1)

    def complete(self, prompt: list[int], n_predict: int) -> dict[str, Any]:
        try:
            return _http(self.url + "/completion", completion_request(prompt, n_predict))
        except urllib.error.HTTPError as exc:
            raise CliError(f"llama-server answered {exc.code}: {exc.read().decode(errors='replace')[:300]}") from exc
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            state = "exited" if self.proc.poll() is not None else "did not answer"
            raise CliError(f"llama-server {state} ({exc}); see {self.log_path}") from exc

    def cpu_seconds(self) -> float | None:
        """CPU time of every thread of the server so far (ns resolution, Linux /proc only)."""
        return process_cpu_seconds(self.proc.pid)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def process_cpu_seconds(pid: int) -> float | None:
    """Sum of the on-CPU time of a process's threads from /proc/<pid>/task/*/schedstat (ns), the
    same accounting as CLOCK_PROCESS_CPUTIME_ID; None where /proc has no schedstat."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                total += int((task / "schedstat").read_text().split()[0])
    except OSError:
        return None
    return total / 1e9


def server_version(binary: Path) -> str:
    with contextlib.suppress(Exception):
        r = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
        for ln in (r.stdout + r.stderr).splitlines():
            if ln.startswith("version"):
                return ln.strip()
    return "?"


# ----------------------------------------------------------------------------------------------------
# the four runners


class _DecodeClock:
    """Wraps llama_cpp's llama_decode and llama_process to add up the wall and thread-CPU time spent
    inside them (for the per-step overhead figure). Thread CPU time is immune to other processes
    taking the cores; the wrapper itself costs about 3 µs per call (two thread-clock reads), which
    lands on the overhead side. Engines must be created inside the `with` (they bind at creation)."""

    NAMES = ("llama_decode", "llama_process")

    def __init__(self) -> None:
        from llama_cpp import llama_cpp as c

        self.c = c
        self.orig = {n: getattr(c, n) for n in self.NAMES}
        self.seconds = 0.0
        self.cpu = 0.0
        self.calls = 0
        perf, cpu = time.perf_counter, time.thread_time

        sync = c.llama_synchronize

        def wrap(fn):  # noqa: ANN001, ANN202
            def timed(*a, _o=fn, _p=perf, _c=cpu, _s=sync):  # noqa: ANN002
                c0, t0 = _c(), _p()
                r = _o(*a)
                _s(a[0])  # a GPU decode returns before it has run: its wait belongs inside
                self.seconds += _p() - t0
                self.cpu += _c() - c0
                self.calls += 1
                return r

            return timed

        self.timed = {n: wrap(f) for n, f in self.orig.items()}

    def __enter__(self) -> _DecodeClock:
        for n, f in self.timed.items():
            setattr(self.c, n, f)
        return self

    def __exit__(self, *exc: object) -> None:
        for n, f in self.orig.items():
            setattr(self.c, n, f)


def _engine(pair: Pair, with_draft: bool, args: argparse.Namespace, threads: int):
    from atomicchat.engine import Engine, EngineConfig

    return Engine(
        EngineConfig(
            target_path=pair.target,
            draft_path=pair.draft if with_draft else None,
            n_ctx=args.ctx,
            n_batch=args.batch,
            n_gpu_layers=getattr(args, "gpu_layers", 0),
            n_threads=threads,
            draft_max=args.draft_max if with_draft else None,
            draft_p_min=args.draft_p_min,
        )
    )


def run_engine(eng, prompt: list[int], max_tokens: int, clock: _DecodeClock | None = None) -> dict[str, Any]:
    from atomicchat.engine import Finished, GenParams

    cpu0 = time.process_time()
    eng.reset()  # no KV reuse between runs: every case prefills the whole prompt
    fin = None
    dec0 = None
    for ev in eng.generate(prompt, GenParams(max_tokens=max_tokens, temperature=0.0)):
        if dec0 is None and clock is not None:
            dec0 = (clock.seconds, clock.calls, clock.cpu, time.thread_time())  # the prompt is done by now
        if isinstance(ev, Finished):
            fin = ev
    cpu_end = time.thread_time()
    assert fin is not None
    s = fin.stats
    out = {
        "tokens": list(fin.tokens),
        "seconds": s.generate_seconds,
        "drafted": s.n_drafted,
        "accepted": s.n_accepted,
        "steps": s.n_steps - 1,  # decode steps after the first token
        "stop": fin.reason,
        "cpu_seconds": time.process_time() - cpu0,
    }
    if clock is not None and dec0 is not None:
        out["decode_seconds"] = clock.seconds - dec0[0]
        out["decode_calls"] = clock.calls - dec0[1]
        out["decode_cpu"] = clock.cpu - dec0[2]
        out["gen_cpu"] = cpu_end - dec0[3]
    return out


def run_llama(llm, prompt: list[int], max_tokens: int) -> dict[str, Any]:
    cpu0 = time.process_time()
    llm.reset()
    toks: list[int] = []
    t_first = t_last = 0.0
    eos = llm.token_eos()
    for tok in llm.generate(prompt, temp=0.0, top_k=1, repeat_penalty=1.0, reset=True):
        t_last = time.perf_counter()
        if not toks:
            t_first = t_last
        if tok == eos and eos >= 0:
            break
        toks.append(int(tok))
        if len(toks) >= max_tokens:
            break
    cpu = time.process_time() - cpu0
    return {"tokens": toks, "seconds": t_last - t_first, "steps": max(len(toks) - 1, 0), "cpu_seconds": cpu}


def run_server(srv: Server, prompt: list[int], max_tokens: int) -> dict[str, Any]:
    cpu0 = srv.cpu_seconds()
    r = srv.complete(prompt, max_tokens)
    cpu1 = srv.cpu_seconds()
    t = r.get("timings", {})
    toks = [int(x) for x in r.get("tokens", [])]
    if r.get("stop_type") == "eos" and toks:
        toks = toks[:-1]  # llama-server lists the end-of-generation token; the engine does not emit it
    tps = float(t.get("predicted_per_second", 0.0))
    n = int(t.get("predicted_n", len(toks)))
    return {
        "tokens": toks,
        "seconds": float(t.get("predicted_ms", 0.0)) / 1000.0,
        "server_tps": tps,
        "drafted": int(t.get("draft_n", 0)),
        "accepted": int(t.get("draft_n_accepted", 0)),
        "steps": max(n - 1 - int(t.get("draft_n_accepted", 0)), 0),
        "stop": r.get("stop_type"),
        "cpu_seconds": (cpu1 - cpu0) if cpu0 is not None and cpu1 is not None else None,
    }


# ----------------------------------------------------------------------------------------------------
# the session


def _prompts_for(pair: Pair, eng_a, n: int) -> list[list[int]]:
    if not pair.text_prompts:
        return tiny_prompts(n, eng_a.n_vocab)
    out = []
    for i in range(n):
        text = TEXT_PROMPTS[i % len(TEXT_PROMPTS)]
        if eng_a.info.has_chat_template:
            out.append(eng_a.chat_prompt([{"role": "user", "content": text}], enable_thinking=False))
        else:
            out.append(eng_a.tokenize(text, add_special=True))
    return out


def bench_pair(pair: Pair, args: argparse.Namespace, cases: list[str], binary: Path | None, logs: Path) -> dict[str, Any]:
    from atomicchat.engine.model import default_threads

    threads = args.threads or default_threads(pair.target.stat().st_size)
    print(f"[{pair.name}] loading (threads {threads}) ...", file=sys.stderr)
    runners: dict[str, Callable[[list[int]], dict[str, Any]]] = {}
    closers: list[Callable[[], None]] = []
    try:
        eng_a = _engine(pair, False, args, threads)
        closers.append(eng_a.close)
        engines = {"a": eng_a}
        prompts = _prompts_for(pair, eng_a, args.prompts)
        if "a" in cases:
            runners["a"] = lambda p: run_engine(eng_a, p, args.max_tokens)
        if "b" in cases:
            eng_b = _engine(pair, True, args, threads)
            closers.append(eng_b.close)
            engines["b"] = eng_b
            n_max = eng_b.draft_max
            runners["b"] = lambda p: run_engine(eng_b, p, args.max_tokens)
        else:
            n_max = args.draft_max
        for key, with_draft in (("c", True), ("e", False)):
            if key in cases:
                assert binary is not None
                srv = Server(
                    lambda port, wd=with_draft: server_command(
                        binary, pair.target, pair.draft if wd else None, port=port, threads=threads,
                        n_ctx=args.ctx, n_batch=args.batch, n_max=n_max, gpu_layers=getattr(args, "gpu_layers", 0),
                        p_min=args.draft_p_min,
                    ),
                    logs / f"server-{pair.name}-{key}.log",
                )  # fmt: skip
                closers.append(srv.close)
                runners[key] = lambda p, s=srv: run_server(s, p, args.max_tokens)
        if "d" in cases:
            from llama_cpp import Llama

            # flash_attn=True: the engine and llama-server leave it on auto, which resolves to enabled
            # on the CPU backend ("Flash Attention enabled" in llama.cpp's log); Llama only takes on/off
            llm = Llama(
                model_path=str(pair.target), n_ctx=args.ctx, n_batch=args.batch, n_ubatch=args.batch,
                n_threads=threads, n_threads_batch=threads, n_gpu_layers=getattr(args, "gpu_layers", 0), flash_attn=True, verbose=False,
            )  # fmt: skip
            closers.append(llm.close)
            runners["d"] = lambda p: run_llama(llm, p, args.max_tokens)

        order = [c for c in cases if c in runners]
        for c in order:  # warm-up: first decode allocations, page faults, server graph reserve
            runners[c](prompts[0][: max(1, len(prompts[0]) // 2)])
        runs: list[Run] = []
        loads = []
        for rep in range(args.repeats):
            loads.append(os.getloadavg())
            for pi, p in enumerate(prompts):
                for c in case_order(order, rep + pi):
                    res = runners[c](p)
                    n = len(res["tokens"])
                    runs.append(
                        Run(
                            case=c, prompt=pi, repeat=rep, tokens=res["tokens"], seconds=res["seconds"],
                            tps=res.get("server_tps") or tps_of(n, res["seconds"]),
                            drafted=res.get("drafted", 0), accepted=res.get("accepted", 0), steps=res.get("steps", 0),
                            cpu_seconds=res.get("cpu_seconds"),
                        )
                    )  # fmt: skip
            done = [f"{c} {median([r.tps for r in runs if r.case == c and r.repeat == rep]):.0f}" for c in order]
            print(f"[{pair.name}] repeat {rep + 1}/{args.repeats}: " + " · ".join(done) + " tok/s", file=sys.stderr)
        summary = summarize_model(pair.name, runs, order, len(prompts))
        summary.update(
            target_path=str(pair.target), draft_path=str(pair.draft), threads=threads, n_max=n_max,
            prompt_lengths=[len(p) for p in prompts], loadavg_per_repeat=[list(x) for x in loads],
            runs=[r.__dict__ for r in runs], engine_device=engine_device(engines, order),
        )  # fmt: skip
        if "c" in summary["cases"] and summary["cases"]["c"]["steps"]:
            c_runs = [r for r in runs if r.case == "c"]
            summary["server_us_per_step"] = median(
                [1e6 * sum(r.seconds for r in c_runs if r.repeat == k) / max(1, sum(r.steps for r in c_runs if r.repeat == k))
                 for k in range(args.repeats)]
            )  # fmt: skip
    finally:
        for close in reversed(closers):
            with contextlib.suppress(Exception):
                close()
    if args.overhead:
        summary["overhead"] = measure_overhead(pair, args, threads, prompts, [c for c in ("a", "b") if c in cases])
    return summary


def engine_device(engines: dict[str, Any], order: list[str]) -> dict[str, dict[str, Any]]:
    """Where each engine case ran and whether it sampled on the device (off unless asked for:
    engine/device_sampling.py; device_check.sh checks both)."""
    return {
        c: {"device": e.info.device, "gpu_layers_used": e.info.gpu_layers_used, "device_sampling": bool(e.device_sampling)}
        for c, e in engines.items()
        if c in order
    }


def gpu_report_problems(report: dict[str, Any], device_sampling: bool | None = None) -> list[str]:
    """What keeps a `--gpu-layers` report from showing the GPU path: an engine case that offloaded no
    layer, one that sampled where it was not meant to (device_sampling True/False; None: either), or
    no engine case at all. Empty when the report is fine."""
    problems = []
    seen = False
    for m in report.get("models", []):
        for case, e in (m.get("engine_device") or {}).items():
            seen = True
            if not e.get("gpu_layers_used"):
                problems.append(f"{m.get('name')} case {case}: no layer ran on the GPU ({e.get('device')})")
            if device_sampling is not None and bool(e.get("device_sampling")) != device_sampling:
                where = "on the host, not on the device" if device_sampling else "on the device, not on the host"
                problems.append(f"{m.get('name')} case {case}: sampling ran {where}")
    if not seen:
        problems.append("the report has no engine case (a or b)")
    return problems


def _check_gpu_report_main(path: Path, device_sampling: bool | None = None) -> int:
    """`python -m benchmarks.bench --check-gpu-report FILE [host|device]` (device_check.sh): exit 0
    when every engine case ran on the GPU (and sampled where the second argument says)."""
    report = json.loads(path.read_text())
    for m in report.get("models", []):
        for case, e in (m.get("engine_device") or {}).items():
            print(f"{m.get('name')} case {case}: {e.get('device')}, sampling "
                  f"{'on the device' if e.get('device_sampling') else 'on the host'}")
    problems = gpu_report_problems(report, device_sampling)
    for line in problems:
        print(f"device_check: {line}", file=sys.stderr)
    return 1 if problems else 0


def measure_overhead(
    pair: Pair, args: argparse.Namespace, threads: int, prompts: list[list[int]], cases: list[str]
) -> dict[str, Any]:
    """Per decode step: Python time outside llama_decode vs time inside it (fresh engines, timed
    llama_decode; the timing wrapper itself adds about a microsecond per call)."""
    out: dict[str, Any] = {}
    with _DecodeClock() as clock:
        for c in cases:
            eng = _engine(pair, c == "b", args, threads)
            try:
                run_engine(eng, prompts[0], args.max_tokens, clock)  # warm-up
                ov, ov_cpu, dec, calls = [], [], [], []
                for _rep in range(args.repeats):
                    for p in prompts:
                        r = run_engine(eng, p, args.max_tokens, clock)
                        steps = max(r["steps"], 1)
                        ov.append(1e6 * (r["seconds"] - r["decode_seconds"]) / steps)
                        ov_cpu.append(1e6 * (r["gen_cpu"] - r["decode_cpu"]) / steps)
                        dec.append(1e6 * r["decode_seconds"] / steps)
                        calls.append(r["decode_calls"] / steps)
                out[c] = {
                    "overhead_us_per_step": median(ov),  # wall clock, outside llama_decode
                    "overhead_cpu_us_per_step": median(ov_cpu),  # this thread's CPU, outside llama_decode
                    "decode_us_per_step": median(dec),
                    "decode_calls_per_step": median(calls),
                }
            finally:
                eng.close()
    return out


def _meta(args: argparse.Namespace, cases: list[str], commit: str | None, binary: Path | None) -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    try:
        from importlib.metadata import version

        lcp = version("llama-cpp-python")
    except Exception:
        lcp = None
    return {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu,
        "n_cpus": os.cpu_count(),
        "llama_cpp_python": lcp,
        "llama_cpp_commit": commit,
        "server_binary": str(binary) if binary else None,
        "server_version": server_version(binary) if binary else None,
        "cases": {c: CASES[c] for c in cases},
        "n_max": args.draft_max,
        "p_min": args.draft_p_min,
        "max_tokens": args.max_tokens,
        "n_prompts": args.prompts,
        "repeats": args.repeats,
        "n_ctx": args.ctx,
        "n_batch": args.batch,
        "gpu_layers": getattr(args, "gpu_layers", 0),
        "threads": args.threads,
        "tps_definition": TPS_DEFINITION,
        "loadavg_start": list(os.getloadavg()),
    }


# ----------------------------------------------------------------------------------------------------
# CLI


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="benchmark the engine against llama.cpp's own C++ DFlash server")
    p.add_argument(
        "--models",
        default="tiny-llama,tiny-qwen35,demo",
        help="comma list of tiny-llama, tiny-llama-own, tiny-qwen35, demo, smollm2 (the first-run pair; "
        "demo and smollm2: skipped when absent)",
    )
    p.add_argument("--target", type=Path, help="benchmark this target GGUF instead of --models (needs --draft)")
    p.add_argument("--draft", type=Path, help="its DFlash draft GGUF")
    p.add_argument("--cases", default=DEFAULT_CASES, help=f"comma list of {', '.join(CASES)} (default {DEFAULT_CASES})")
    p.add_argument("--repeats", type=int, default=5, help="interleaved repeats (default 5)")
    p.add_argument("--prompts", type=int, default=3, help="prompts per model (default 3)")
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--draft-max", type=int, default=15, help="n_max, the same for engine and server (default 15)")
    p.add_argument("--draft-p-min", type=float, default=DEFAULT_P_MIN,
                   help=f"the draft's confidence cut, the same for engine and server (default {DEFAULT_P_MIN:g}; 0: off)")
    p.add_argument("--threads", type=int, help="threads for every case (default: the engine's choice for the model)")
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument(
        "--gpu-layers", type=int, default=0,
        help="layers offloaded to the GPU in every case (default 0: CPU only; -1: all, the GPU path)",
    )  # fmt: skip
    p.add_argument("--server", type=Path, help="an existing llama-server binary (default: build/cached one)")
    p.add_argument("--llama-src", type=Path, help="unpacked llama-cpp-python 0.3.36 sdist (for building the server)")
    p.add_argument("--cache-dir", type=Path, help="where the server build and tiny models are cached")
    p.add_argument("--build-jobs", type=int, default=2)
    p.add_argument("--no-build", action="store_true", help="fail instead of building llama-server")
    p.add_argument("--overhead", action="store_true", help="also measure per-step Python overhead of a and b")
    p.add_argument("--json-out", type=Path, help="write the full report (every run) as JSON here")
    p.set_defaults(func=run)


def _validate(args: argparse.Namespace) -> list[str]:
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    bad = [c for c in cases if c not in CASES]
    if bad or not cases:
        raise CliError(f"--cases: unknown case {bad[0] if bad else '(none)'}; choose from {', '.join(CASES)}")
    if len(set(cases)) != len(cases):
        raise CliError("--cases lists a case twice")
    for name in ("repeats", "prompts", "max_tokens", "draft_max", "build_jobs"):
        if getattr(args, name) < 1:
            raise CliError(f"--{name.replace('_', '-')} must be at least 1")
    if not p_min_in_range(args.draft_p_min):
        raise CliError("--draft-p-min must be from 0 to below 1")
    if args.max_tokens < 2:
        raise CliError("--max-tokens must be at least 2 (tokens/s excludes the first token)")
    if args.threads is not None and args.threads < 1:
        raise CliError("--threads must be at least 1")
    if bool(args.target) != bool(args.draft):
        raise CliError("--target and --draft go together")
    for pth in (args.target, args.draft, args.server):
        if pth is not None and not pth.exists():
            raise CliError(f"{pth} does not exist")
    return cases


def run(args: argparse.Namespace) -> int:
    cases = _validate(args)
    from atomicchat import paths

    cache = args.cache_dir or paths.cache_dir()
    if args.target:
        pairs = [Pair(args.target.stem, args.target, args.draft, text_prompts=True)]
    else:
        names = [n.strip() for n in args.models.split(",") if n.strip()]
        pairs = tiny_pairs([n for n in names if n not in ("demo", "smollm2")], cache / "bench-models")
        for name, find in (("demo", demo_pair), ("smollm2", smollm2_pair)):
            if name not in names:
                continue
            found = find()
            if found is None:
                print(f"{name} pair not available (its files are missing); skipped", file=sys.stderr)
            else:
                pairs.append(found)
    if not pairs:
        raise CliError("no models to benchmark")
    binary, commit = None, None
    if any(c in cases for c in ("c", "e")):
        if args.server:
            binary = args.server
            with contextlib.suppress(CliError):
                commit = commit_from_sdist(find_llama_src(args.llama_src, cache))
        else:
            binary, commit = ensure_server(find_llama_src(args.llama_src, cache), cache, args.build_jobs, not args.no_build)
    report: dict[str, Any] = {"meta": _meta(args, cases, commit, binary), "models": []}
    logs = cache / "bench-logs"  # server logs of the last run, kept for when something looks off
    logs.mkdir(parents=True, exist_ok=True)
    for pair in pairs:
        report["models"].append(bench_pair(pair, args, cases, binary, logs))
    report["meta"]["loadavg_end"] = list(os.getloadavg())
    print(format_table(report))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(report, indent=1))
        print(f"wrote {args.json_out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check-gpu-report"] and len(sys.argv) in (3, 4):
        where = {"host": False, "device": True}.get(sys.argv[3]) if len(sys.argv) == 4 else None
        sys.exit(_check_gpu_report_main(Path(sys.argv[2]), where))
    from atomicchat.cli import main

    sys.exit(main(["bench", *sys.argv[1:]]))
