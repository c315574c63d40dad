"""benchmarks/adaptive_bench.py: where a configuration's tokens first differ, and how the table shows it."""

from __future__ import annotations

import json
import re
import sys

import pytest

from benchmarks import adaptive_bench as ab


def test_first_difference():
    ref = [[1, 2, 3], [4, 5, 6]]
    assert ab.first_difference([[1, 2, 3], [4, 5, 6]], ref) is None
    assert ab.first_difference([[1, 2, 3], [4, 9, 6]], ref) == "run 1, token 1"
    assert ab.first_difference([[1, 2], [4, 5, 6]], ref) == "run 0, token 2"
    assert ab.first_difference([[1, 2, 3]], ref) == "run 1 (missing)"


def _result(differs: dict[str, str]) -> dict:
    cfg = {"tps": 100.0, "tokens": 10, "seconds": 0.1, "drafted": 4, "accepted": 2, "draft_steps": 2, "steps": 8}
    return {"case": "c", "configs": {"target-only": dict(cfg), "fixed 3": dict(cfg, tps=150.0),
                                     "adaptive": dict(cfg, tps=147.0), "server 3": dict(cfg, tps=120.0)},
            "server_differs": differs}


def test_table_marks_a_server_that_departed():
    plain = ab.table([_result({})], (0.1, 0.2, 0.3))
    assert "k3 120" in plain and "≠" not in plain and "0.980" in plain
    marked = ab.table([_result({"server 3": "run 0, token 57"})], (0.1, 0.2, 0.3))
    assert "k3 120≠" in marked and "run 0, token 57" in marked


def test_smollm2_cases_use_the_first_run_pair_and_held_out_prompts(smollm2_path, tmp_path):
    from atomicchat import first_run
    from benchmarks import bench

    pair = bench.smollm2_pair()
    assert pair is not None and pair.target == smollm2_path and pair.draft == first_run.draft_path()
    got = ab.cases(["smollm2-q4_1"], tmp_path)
    assert [(c.name, c.kind) for c in got] == [("smollm2-q4_1 code", "code"), ("smollm2-q4_1 prose", "prose")]
    assert all(c.target == smollm2_path and c.draft == pair.draft for c in got)
    # held out: none of the prompts is one the draft's distillation data was made from
    import sys

    sys.path.insert(0, str(ab.ROOT / "training"))
    try:
        from smol_prompts import _kinds
    finally:
        sys.path.remove(str(ab.ROOT / "training"))
    seen = {p for ps in _kinds().values() for p in ps}
    assert got[0].prompts and not seen & {p for c in got for p in c.prompts}
    assert "smollm2-f16" in ab.ALL_CASES and "smollm2-f16" not in ab.DEFAULT_CASES


def test_pair_cases_take_code_and_prose_prompts_and_refuse_bad_specs(tmp_path):
    import pytest

    t, d = tmp_path / "t.gguf", tmp_path / "d.gguf"
    t.write_bytes(b"x")
    d.write_bytes(b"x")
    got = ab.pair_cases([f"standin={t},{d}"])
    assert [(c.name, c.kind, c.target, c.draft) for c in got] == [
        ("standin code", "code", t, d), ("standin prose", "prose", t, d)]
    assert got[0].prompts == ab.CODE_PROMPTS and got[1].prompts == ab.PROSE_PROMPTS
    with pytest.raises(SystemExit, match="NAME=TARGET,DRAFT"):
        ab.pair_cases([f"{t},{d}"])
    with pytest.raises(SystemExit, match="is not a file"):
        ab.pair_cases([f"x={t},{tmp_path / 'missing.gguf'}"])


def test_table_says_where_the_engine_ran():
    r = _result({})
    r["device"] = {"engine": "NVIDIA H200 (32/32 layers)", "gpu_layers_used": 32, "device_sampling": True}
    assert "engine on NVIDIA H200 (32/32 layers), sampling on the device" in ab.table([r], (0.1, 0.2, 0.3))


def test_gpu_layers_on_a_machine_without_a_gpu_fail_instead_of_measuring_the_cpu(tmp_path):
    import pytest

    from atomicchat.demo import demo_draft_path, demo_target_path

    t, d = demo_target_path(), demo_draft_path()
    with pytest.raises(SystemExit, match="--gpu-layers -1 asked, but the model runs on CPU"):
        ab.main(["--cases", "none", "--pair", f"demo={t},{d}", "--gpu-layers", "-1", "--prompts", "1",
                 "--max-tokens", "4", "--cache", str(tmp_path)])


def test_first_diff_at_and_the_margin_text():
    assert ab.first_diff_at([[1, 2], [3, 4]], [[1, 2], [3, 5]]) == (1, 1)
    assert ab.first_diff_at([[1, 2]], [[1, 2]]) is None
    m = {"run": 1, "index": 31, "target_only": 7, "this": 9, "top2": [7, 9], "gap": 0.0012, "top_logit": 14.2,
         "same_prefix": True}
    assert ab.describe_margin(m) == "one-row decode: top two [7, 9] 0.0012 apart (top logit 14.2); the two runs took exactly those two"
    assert "other tokens" in ab.describe_margin(dict(m, this=3))
    r = _result({})
    r["engine_differs"] = {"fixed 3": m}
    r["runs_identical"] = {"target-only": 6, "fixed 3": 5}
    assert "≠ fixed 3 (GPU): 5/6 runs identical; first difference run 1, token 31" in ab.table([r], (0.1, 0.2, 0.3))


def test_margin_at_reads_the_one_row_logits_of_the_first_differing_token(tmp_path):
    """On the CPU the runs agree, so a difference is made up here: the margin comes from a real
    one-row decode of the demo target and names the token target-only took as its top one."""
    import argparse

    from atomicchat.demo import demo_draft_path, demo_target_path
    from atomicchat.engine import Engine, EngineConfig
    from benchmarks.common import run_once

    case = ab.Case("demo code", demo_target_path(), demo_draft_path(), ab.CODE_PROMPTS, "code")
    a = argparse.Namespace(ctx=512, gpu_layers=0, threads=1)
    eng = Engine(EngineConfig(case.target, None, n_ctx=512, n_threads=1))
    try:
        prompt = eng.chat_prompt([{"role": "user", "content": ab.CODE_PROMPTS[0]}])
        ref = list(run_once(eng, prompt, 12, False, None).tokens)
    finally:
        eng.close()
    other = ref[:5] + [ref[5] + 1] + ref[6:]
    m = ab.margin_at(case, a, [prompt], [ref], [other])
    assert (m["run"], m["index"], m["target_only"], m["this"]) == (0, 5, ref[5], ref[5] + 1)
    assert m["top2"][0] == ref[5] and m["gap"] >= 0 and m["same_prefix"]


def test_margin_at_decodes_each_parting_token_once(monkeypatch):
    """Every draft length tends to part from target-only at the same token: the one-row decode for a
    (run, token) is made once and shared."""
    import argparse

    from atomicchat.demo import demo_draft_path, demo_target_path

    case = ab.Case("demo code", demo_target_path(), demo_draft_path(), ab.CODE_PROMPTS, "code")
    a = argparse.Namespace(ctx=512, gpu_layers=0, threads=1)
    loads = []
    real = ab.Engine
    monkeypatch.setattr(ab, "Engine", lambda *x, **k: loads.append(1) or real(*x, **k))
    ref = [[5, 6, 7, 8]]
    seen: dict = {}
    m1 = ab.margin_at(case, a, [[1, 2, 3]], ref, [[5, 6, 9, 8]], seen)
    m2 = ab.margin_at(case, a, [[1, 2, 3]], ref, [[5, 6, 4, 8]], seen)
    assert len(loads) == 1 and (m1["this"], m2["this"]) == (9, 4)
    assert m1["top2"] == m2["top2"] and m1["gap"] == m2["gap"]


def test_fixed_lengths_are_parsed_and_bad_ones_refused():
    import argparse

    import pytest

    assert ab._lengths("1,3, 7,15") == (1, 3, 7, 15)
    for bad in ("", "0,3", "a,b", "-1"):
        with pytest.raises(argparse.ArgumentTypeError):
            ab._lengths(bad)


def test_interval_pairs_replies_and_widens_with_noise():
    steady_a = [(100, 1.0)] * 12
    steady_b = [(100, 0.98)] * 12
    lo, hi = ab.interval(steady_a, steady_b)
    assert lo == pytest.approx(0.98) and hi == pytest.approx(0.98)  # no noise: the ratio itself
    # the host's speed moves reply by reply, alike for both of a pair: the paired interval stays narrow
    speeds = [0.7, 1.3, 1.0, 0.8, 1.2, 0.9, 1.1, 1.25, 0.75, 1.0, 0.85, 1.15]
    a = [(100, 1.0 * s) for s in speeds]
    b = [(100, 0.98 * s) for s in speeds]
    lo, hi = ab.interval(a, b)
    assert 0.975 <= lo <= 0.98 <= hi <= 0.985
    # noise in a alone: the interval widens around the true ratio, and says so
    lo2, hi2 = ab.interval([(100, 1.0 * s) for s in speeds], steady_b)
    assert hi2 - lo2 > 0.1 and lo2 < 0.98 < hi2
    assert ab.interval(a[:1], b[:1]) is None and ab.interval(a, b[:5]) is None


def test_table_shows_the_interval():
    r = _result({})
    r["configs"]["adaptive"]["runs"] = [(10, 0.1 / 1.47 * 1.0)] * 4
    r["configs"]["fixed 3"]["runs"] = [(10, 0.1 / 1.5)] * 4
    out = ab.table([r], (0.1, 0.2, 0.3))
    assert "0.980-0.980" in out


def test_interval_by_repeat_counts_a_placement_that_slowed_one_engine_for_a_whole_repeat():
    """Four repeats of six replies; in one repeat adaptive's engine landed on a slow placement (12%
    slower on every reply). Pairs alone look like independent replies and give too narrow an
    interval; blocks of a repeat carry that repeat's offset into every resample."""
    a, b = [], []
    for rep in range(4):
        slow = 1.12 if rep == 2 else 1.0
        for s in (0.9, 1.1, 1.0, 0.95, 1.05, 1.0):
            a.append((100, 1.0 * s * slow))
            b.append((100, 1.0 * s))
    lo1, hi1 = ab.interval(a, b)
    lo6, hi6 = ab.interval(a, b, block=6)
    assert hi6 - lo6 > 1.5 * (hi1 - lo1)
    assert lo6 < lo1 and hi6 >= hi1 - 1e-9
    assert lo6 < 0.95 < hi6  # the mean ratio 0.97 lies inside, whatever one repeat did
    assert ab.interval(a, b, block=5) == (lo1, hi1)  # not a divisor of the replies: pairs, as without
    assert ab.interval(a[:6], b[:6], block=6) == ab.interval(a[:6], b[:6])  # one block: nothing to resample by


def test_every_engine_gets_new_contexts_before_each_prompt_but_the_first(tmp_path, monkeypatch, capsys):
    from atomicchat.engine import Engine

    monkeypatch.setattr(ab, "TINY_REPEATS", 1)  # the generated pairs run as many repeats as asked
    made = []
    real = Engine.remake_contexts
    monkeypatch.setattr(Engine, "remake_contexts",
                        lambda self, reprice=False: (made.append((self, reprice)), real(self, reprice))[1])
    out = tmp_path / "r.json"
    args = ["--cases", "tiny-llama", "--cache", str(tmp_path), "--prompts", "2", "--max-tokens", "12",
            "--fixed", "1,2", "--json", str(out)]
    assert ab.main(args + ["--repeats", "3"]) == 0
    # target-only, and one engine for the fixed lengths and the adaptive policy (tiny-llama is not
    # hybrid), each remade before 5 of the 6 prompts and priced as at load
    assert len(made) == 5 * 2 and len({id(e) for e, _ in made}) == 2 and all(r for _, r in made)
    r = json.loads(out.read_text())["results"][0]
    assert r["block"] == 1 and all(len(c["runs"]) == 6 for c in r["configs"].values())
    made.clear()
    assert ab.main(args + ["--repeats", "3", "--remake", "repeat"]) == 0
    assert len(made) == 2 * 2  # before repeats 2 and 3
    assert json.loads(out.read_text())["results"][0]["block"] == 2  # the interval resamples whole repeats
    made.clear()
    assert ab.main(args + ["--repeats", "2", "--keep-contexts"]) == 0
    assert made == [] and json.loads(out.read_text())["results"][0]["block"] == 1
    # a hybrid target: the adaptive policy on an engine of its own (it resizes the snapshots)
    assert ab.main(["--cases", "tiny-qwen35", "--cache", str(tmp_path), "--prompts", "2", "--max-tokens", "12",
                    "--fixed", "1", "--json", str(out)]) == 0
    drawn = [e for e, reprice in made if reprice]  # (the policy's snapshot resizes remake without it)
    assert len(drawn) == 3 and len({id(e) for e in drawn}) == 3


def test_the_generated_pairs_run_more_repeats_than_asked(tmp_path, monkeypatch):
    """Their replies take milliseconds: `TINY_REPEATS` times the repeats asked, each prompt of each
    repeat still one reply of every configuration."""
    monkeypatch.setattr(ab, "TINY_REPEATS", 3)
    out = tmp_path / "r.json"
    assert ab.main(["--cases", "tiny-llama", "--cache", str(tmp_path), "--prompts", "2", "--max-tokens", "8",
                    "--fixed", "1", "--repeats", "2", "--json", str(out)]) == 0
    r = json.loads(out.read_text())["results"][0]
    assert r["repeats"] == 6 and r["n_prompts"] == 2
    assert all(len(c["runs"]) == 12 for c in r["configs"].values())


def test_llama_server_runs_in_a_block_after_the_engines_unless_interleaved(tmp_path, monkeypatch):
    """Shuffled in among the engines' replies, llama-server's requests came with a +-5% bias
    between two engines on plain-only cells (run J): by default they run after all of a case's
    engine replies, every prompt of every repeat, in a seeded order of their own."""
    monkeypatch.setattr(ab, "TINY_REPEATS", 1)
    calls: list[str] = []

    class FakeServer:
        def __init__(self, cmd_for_port, log_path, startup_s=180.0):
            self.name = log_path.stem

        def close(self):
            pass

    def fake_run_server(srv, prompt, max_tokens):
        calls.append(srv.name)
        return {"tokens": [], "server_tps": 100.0, "drafted": 0, "accepted": 0}

    real_run_once = ab.run_once
    monkeypatch.setattr(ab.bench, "Server", FakeServer)
    monkeypatch.setattr(ab.bench, "run_server", fake_run_server)
    monkeypatch.setattr(ab, "run_once", lambda *a, **k: (calls.append("engine"), real_run_once(*a, **k))[1])
    binary = tmp_path / "llama-server"
    binary.write_text("")
    args = ["--cases", "tiny-llama", "--cache", str(tmp_path), "--prompts", "2", "--max-tokens", "8",
            "--fixed", "1", "--repeats", "2", "--server-bin", str(binary), "--logs", str(tmp_path / "logs")]
    assert ab.main(args) == 0
    engine_calls = 2 * 2 * 3  # target-only, fixed 1, adaptive: 2 prompts x 2 repeats
    server_calls = [c for c in calls if c != "engine"]
    assert len(server_calls) == 2 * 2 * 2  # llama-server at k 3 and at the draft's maximum
    assert calls[:engine_calls] == ["engine"] * engine_calls and "engine" not in calls[engine_calls:]
    calls.clear()
    assert ab.main(args + ["--servers", "interleaved"]) == 0
    first_server = next(i for i, c in enumerate(calls) if c != "engine")
    assert first_server < engine_calls and len(calls) == engine_calls + len(server_calls)
    # a generated pair's engines run `TINY_REPEATS` times the repeats; the servers' block, the repeats asked
    monkeypatch.setattr(ab, "TINY_REPEATS", 2)
    calls.clear()
    assert ab.main(args) == 0
    assert calls.count("engine") == 2 * engine_calls and len(calls) - calls.count("engine") == len(server_calls)


def test_policy_from_runs_another_policy_beside_the_engines_own(tmp_path, monkeypatch, capsys):
    """--policy-from: the policy of a revision (here a file that drafts length 1 every step) runs as a
    configuration of its own on the adaptive engine, priced again after every new placement, its
    tokens checked against target-only like every engine's; the table puts the two side by side."""
    from atomicchat.engine import Engine

    monkeypatch.setattr(ab, "TINY_REPEATS", 1)
    src = (ab.ROOT / "atomicchat" / "engine" / "draft_policy.py").read_text()
    other = tmp_path / "draft_policy.py"
    other.write_text(src + "\n\nCHOSEN = []\n\n\nclass DraftPolicy(DraftPolicy):\n"
                           "    def choose(self, limit: int) -> int:\n"
                           "        CHOSEN.append(limit)\n        return min(1, limit)\n")
    priced = []
    real = Engine.price_policy
    monkeypatch.setattr(Engine, "price_policy", lambda self, pol: (priced.append(type(pol).__module__), real(self, pol))[1])
    out = tmp_path / "r.json"
    assert ab.main(["--cases", "tiny-llama", "--cache", str(tmp_path), "--prompts", "2", "--max-tokens", "12",
                    "--fixed", "1", "--repeats", "2", "--policy-from", str(other), "--json", str(out)]) == 0
    mine = [m for m in priced if m.startswith("_draft_policy_from_")]
    assert len(mine) == 1 + 3  # at load, then after each of the 3 new placements
    r = json.loads(out.read_text())["results"][0]
    got = r["configs"]["adaptive draft_policy.py"]
    assert r["policy_from"] == str(other) and len(got["runs"]) == 4
    # its choices, not ours: it was asked every step but each reply's last, which has no room to draft
    # (the confidence cut then drops the random pair's drafts, so its steps count as plain)
    chosen = sys.modules["_draft_policy_from_" + re.sub(r"\W", "_", str(other))].CHOSEN
    assert len(chosen) == got["steps"] - len(got["runs"]) > 0
    # its own learning: the prices of this engine, and length-1 drafts seen rejected (prior 0.5)
    assert r["policy_from_state"]["verify_ms"] and r["policy_from_state"]["p"][0] < 0.1
    assert r["runs_identical"]["adaptive draft_policy.py"] == 4  # the target's own tokens
    text = capsys.readouterr().out
    assert "tiny-llama: adaptive / adaptive draft_policy.py " in text and "90% interval" in text
    # the best is still taken from target-only and the fixed lengths alone
    table_part = text.split("every configuration")[0]
    assert "adaptive draft_policy.py" not in table_part.split("tiny-llama: adaptive /")[0]


def test_policy_from_a_revision_git_cannot_show_stops_with_a_sentence(tmp_path):
    with pytest.raises(SystemExit, match="git could not show no-such-revision:atomicchat/engine/draft_policy.py"):
        ab.main(["--cases", "tiny-llama", "--cache", str(tmp_path), "--policy-from", "no-such-revision"])
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(SystemExit, match="defines no DraftPolicy class"):
        ab.main(["--cases", "tiny-llama", "--cache", str(tmp_path), "--policy-from", str(empty)])


def _cfg(seconds: list[float]) -> dict:
    runs = [(100, s) for s in seconds]
    return {"tps": 100 * len(runs) / sum(seconds), "tokens": 100 * len(runs), "seconds": sum(seconds), "drafted": 0,
            "accepted": 0, "draft_steps": 0, "steps": 100 * len(runs), "runs": runs}


def test_held_out_best_is_not_raised_by_a_lucky_reply():
    """Two lengths that run alike (1 s a reply), each with one lucky reply: the plain best takes the
    luckier for the best and times it by its luck; chosen on one half and timed on the other, the
    best is what either runs (2 prompts x 2 repeats, halves a checkerboard: replies 0 and 3, 1 and 2)."""
    configs = {"target-only": _cfg([1.2] * 4), "fixed 3": _cfg([1.0, 1.0, 1.0, 0.7]),
               "fixed 4": _cfg([1.0, 0.8, 1.0, 1.0]), "adaptive": _cfg([0.5] * 4), "server 3": _cfg([0.1] * 4),
               "draft idle": _cfg([0.1] * 4)}
    assert max(c["tps"] for n, c in configs.items() if n.startswith("fixed")) > 108
    tps, chosen = ab.held_out_best(configs, n_prompts=2)
    assert tps == pytest.approx(100.0) and chosen == ["fixed 3", "fixed 4"]  # neither adaptive nor a server
    # a length that is faster on every reply is the choice on both halves, timed at its own speed
    configs["fixed 5"] = _cfg([0.8] * 4)
    tps, chosen = ab.held_out_best(configs, n_prompts=2)
    assert tps == pytest.approx(125.0) and chosen == ["fixed 5", "fixed 5"]
    # target-only can be the best
    configs["target-only"] = _cfg([0.5] * 4)
    assert ab.held_out_best(configs, n_prompts=2) == (pytest.approx(200.0), ["target-only", "target-only"])
    # one reply a half is too few to choose by; runs of different lengths do not pair up
    assert ab.held_out_best({n: _cfg(c["runs"][0][1:2] * 2) for n, c in configs.items()}, n_prompts=1) is None
    assert ab.held_out_best(dict(configs, **{"fixed 6": _cfg([1.0] * 3)}), n_prompts=2) is None


def test_table_shows_the_held_out_best():
    r = {"case": "c", "n_prompts": 2, "server_differs": {},
         "configs": {"target-only": _cfg([1.2] * 4), "fixed 3": _cfg([1.0, 1.0, 1.0, 0.7]),
                     "fixed 4": _cfg([1.0, 0.8, 1.0, 1.0]), "adaptive": _cfg([1.0] * 4)}}
    out = ab.table([r], (0.1, 0.2, 0.3))
    row = next(line for line in out.splitlines() if line.startswith("c "))
    assert row.split()[-4:] == ["0.925", "0.850-1.000", "1.000", "-"]  # ad/best (100 / 108.1), its interval, held-out
    assert "held-out best 100 tok/s (fixed 3 chosen on one half, fixed 4 on the other)" in out
    assert "held-out" in out.splitlines()[1]
    del r["n_prompts"]  # a result from before held_out_best: its column reads "-"
    assert ab.table([r], (0.1, 0.2, 0.3)).splitlines()[2].split()[-2:] == ["-", "-"]
