"""Pure helpers of benchmarks/bench.py (`atomicchat bench`): no model, no server build, no server process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomicchat.engine.draft_confidence import DEFAULT_P_MIN
from benchmarks import bench
from benchmarks.bench import Run


def _runs() -> list[Run]:
    out = []
    for rep in range(3):
        for p in range(2):
            toks = [p, 1, 2, 3, 4]
            out.append(Run("a", p, rep, toks, seconds=0.004 * (1 + rep), tps=0.0, steps=4))
            out.append(Run("b", p, rep, toks, seconds=0.002, tps=0.0, drafted=30, accepted=2, steps=2))
            out.append(Run("c", p, rep, toks, seconds=0.0025, tps=0.0, drafted=30, accepted=2, steps=2))
            out.append(Run("d", p, rep, toks if p == 0 else [9, 9, 9, 9, 9], seconds=0.008, tps=0.0, steps=4))
    return out


def test_tps_matches_server_definition():
    assert bench.tps_of(11, 0.5) == pytest.approx(20.0)  # the first token is free
    assert bench.tps_of(1, 0.5) == 0.0
    assert bench.tps_of(5, 0.0) == 0.0


def test_case_order_rotates_every_case_first():
    cases = ["a", "b", "c", "d"]
    firsts = {bench.case_order(cases, r)[0] for r in range(4)}
    assert firsts == set(cases)
    assert sorted(bench.case_order(cases, 7)) == cases


def test_summary_medians_ratios_equality_and_drafts():
    s = bench.summarize_model("m", _runs(), ["a", "b", "c", "d"], n_prompts=2)
    a, b, c, d = (s["cases"][k] for k in "abcd")
    # per repeat: 2 prompts x 4 tokens after the first over the summed seconds
    assert a["tps_repeats"] == pytest.approx([8 / 0.008, 8 / 0.016, 8 / 0.024])
    assert a["tps_median"] == pytest.approx(8 / 0.016)
    assert b["tps_median"] == pytest.approx(8 / 0.004)
    assert s["ratios"]["b_over_c"] == pytest.approx(0.005 / 0.004)
    assert s["ratios"]["a_over_d"] == pytest.approx(a["tps_median"] / d["tps_median"])
    assert s["ratios"]["a_over_e"] is None
    assert s["draft_counts"] == {
        "b_drafted": 60, "b_accepted": 4, "c_drafted": 60, "c_accepted": 4, "equal": True,
        "b_acceptance": pytest.approx(4 / 60), "c_acceptance": pytest.approx(4 / 60),
    }  # fmt: skip
    t = s["tokens_equal"]
    assert t["b_eq_c"] is True and t["b_eq_a"] is True
    assert t["a_eq_d"] is False
    assert t["a_eq_e"] is None
    assert t["per_prompt_b_eq_c"] == [True, True]
    assert all(x["deterministic"] for x in s["cases"].values())


def test_nondeterministic_runs_are_flagged():
    runs = _runs()
    runs.append(Run("b", 0, 3, [0, 1, 2, 3, 5], seconds=0.002, tps=0.0, drafted=30, accepted=2))
    s = bench.summarize_model("m", runs, ["a", "b"], n_prompts=2)
    assert s["cases"]["b"]["deterministic"] is False
    assert s["cases"]["a"]["deterministic"] is True


def _report() -> dict:
    s = bench.summarize_model("tiny-llama", _runs(), ["a", "b", "c", "d"], n_prompts=2)
    s["threads"] = 1
    s["overhead"] = {"b": {"overhead_us_per_step": 12.5, "decode_us_per_step": 400.0, "decode_calls_per_step": 3.0}}
    s["server_us_per_step"] = 410.0
    meta = {
        "llama_cpp_commit": "0c1e57098", "llama_cpp_python": "0.3.36", "cpu": "X", "n_cpus": 2,
        "n_max": 15, "max_tokens": 5, "n_prompts": 2, "repeats": 3,
        "loadavg_start": [1.0, 1.5, 2.0], "loadavg_end": [1.1, 1.4, 1.9],
    }  # fmt: skip
    return {"meta": meta, "models": [s]}


def test_table_lists_every_case_ratio_and_load():
    text = bench.format_table(_report())
    for needle in (
        "a engine target-only", "b engine DFlash", "c llama-server DFlash", "d llama-cpp-python Llama",
        "b/c 1.250", "a/d", "b==c yes", "a==d NO", "drafted b 60 / c 60", "accepted b 4 / c 4", "same",
        "start 1.00 1.50 2.00", "12.5 µs Python outside llama_decode", "0c1e57098",
    ):  # fmt: skip
        assert needle in text, needle


def test_report_is_json_serialisable():
    rep = _report()
    again = json.loads(json.dumps(rep))
    m = again["models"][0]
    assert set(m) >= {"name", "cases", "ratios", "draft_counts", "tokens_equal"}
    assert set(m["cases"]["b"]) >= {"label", "tps_median", "tps_repeats", "drafted", "accepted", "tokens"}


def test_server_command_uses_this_commits_flag_names(tmp_path: Path):
    cmd = bench.server_command(
        tmp_path / "llama-server", tmp_path / "t.gguf", tmp_path / "d.gguf",
        port=8123, threads=3, n_ctx=4096, n_batch=512, n_max=15,
    )  # fmt: skip
    j = " ".join(cmd)
    for flag in ("-md", "--spec-type draft-dflash", "--spec-draft-n-max 15", "-t 3", "-tb 3", "-td 3", "-tbd 3",
                 "--host 127.0.0.1", "--port 8123", "-c 4096", "-b 512", "-ub 512",
                 f"--spec-draft-p-min {DEFAULT_P_MIN:g}"):  # the engine's default confidence cut  # fmt: skip
        assert flag in j, flag
    off = bench.server_command(tmp_path / "s", tmp_path / "t.gguf", tmp_path / "d.gguf", port=1, threads=1, n_ctx=64,
                               n_batch=16, n_max=3, p_min=0.0)  # fmt: skip
    assert off[off.index("--spec-draft-p-min") + 1] == "0"
    plain = bench.server_command(tmp_path / "s", tmp_path / "t.gguf", None, port=1, threads=1, n_ctx=64, n_batch=16, n_max=3)
    assert "-md" not in plain and "--spec-type" not in plain


def test_completion_request_is_greedy_token_ids_without_cache():
    r = bench.completion_request([1, 2, 3], 32)
    assert r == {"prompt": [1, 2, 3], "n_predict": 32, "temperature": 0, "cache_prompt": False,
                 "return_tokens": True, "stream": False}  # fmt: skip


def test_commit_from_sdist(tmp_path: Path):
    assert bench.commit_from_sdist(tmp_path) is None
    (tmp_path / "CHANGELOG.md").write_text("## [0.3.36]\n\n- feat: update llama.cpp to ggml-org/llama.cpp@0c1e57098\n")
    assert bench.commit_from_sdist(tmp_path) == "0c1e57098"
    head = tmp_path / ".git" / "modules" / "vendor" / "llama.cpp"
    head.mkdir(parents=True)
    (head / "HEAD").write_text("abcdef0123456789abcdef0123456789abcdef01\n")
    assert bench.commit_from_sdist(tmp_path) == "abcdef012"


def test_tiny_prompts_are_deterministic_and_in_vocab():
    p = bench.tiny_prompts(3, 512)
    assert p == bench.tiny_prompts(3, 512)
    assert [len(x) for x in p] == [8, 33, 100]
    assert all(0 <= t < 511 for x in p for t in x)  # never the mask token (last id)


def test_bad_arguments_are_one_line_errors(capsys):
    from atomicchat import cli

    assert cli.main(["bench", "--cases", "a,z"]) == 2
    assert "unknown case z" in capsys.readouterr().err
    assert cli.main(["bench", "--repeats", "0"]) == 2
    assert "--repeats must be at least 1" in capsys.readouterr().err
    assert cli.main(["bench", "--target", "/nonexistent.gguf"]) == 2


def test_cpu_tps_needs_every_run_measured():
    runs = _runs()
    assert bench.repeat_cpu_tps(runs) == {}  # no CPU figures at all
    for r in runs:
        r.cpu_seconds = 0.008
    cpu = bench.repeat_cpu_tps([r for r in runs if r.case == "a"])
    assert cpu == pytest.approx({0: 8 / 0.016, 1: 8 / 0.016, 2: 8 / 0.016})
    s = bench.summarize_model("m", runs, ["a", "b", "c", "d"], n_prompts=2)
    assert s["ratios"]["b_over_c_cpu"] == pytest.approx(1.0)
    assert s["cases"]["a"]["cpu_tps_median"] == pytest.approx(500.0)


def test_process_cpu_seconds_reads_this_process():
    import os
    import sys

    got = bench.process_cpu_seconds(os.getpid())
    if not sys.platform.startswith("linux"):
        pytest.skip("/proc only")
    assert got is not None and got > 0
    assert bench.process_cpu_seconds(2**22 + 12345) is None  # no such process


def test_bench_without_the_benchmarks_folder_says_so(monkeypatch, capsys):
    """An install without benchmarks/ (the bundles): one plain line and exit 2, whatever the flags."""
    from atomicchat import cli
    from atomicchat.cli import bench as bench_command

    monkeypatch.setattr(bench_command, "_checkout_module", lambda: None)
    for argv in (["bench"], ["bench", "--cases", "a"], ["bench", "--help"]):
        assert cli.main(argv) == 2
        assert "benchmarks are not part of this install" in capsys.readouterr().err


def test_server_command_gpu_layers_reach_target_and_draft(tmp_path: Path):
    """--gpu-layers: 0 keeps -ngl/-ngld 0 (CPU); -1 (all) becomes 999 for both models; a count passes through."""
    def flags(n: int) -> tuple[str, str]:
        cmd = bench.server_command(tmp_path / "s", tmp_path / "t.gguf", tmp_path / "d.gguf", port=1, threads=1,
                                   n_ctx=64, n_batch=16, n_max=3, gpu_layers=n)  # fmt: skip
        return cmd[cmd.index("-ngl") + 1], cmd[cmd.index("-ngld") + 1]

    assert flags(0) == ("0", "0")
    assert flags(-1) == ("999", "999")
    assert flags(12) == ("12", "12")
    default = bench.server_command(tmp_path / "s", tmp_path / "t.gguf", None, port=1, threads=1, n_ctx=64, n_batch=16, n_max=3)
    assert default[default.index("-ngl") + 1] == "0"


def test_atomicchat_bench_parses_gpu_layers():
    """The flag lives in benchmarks/bench.py and reaches `atomicchat bench` through atomicchat/cli/bench.py."""
    from atomicchat import cli

    parser = cli.build_parser("bench")
    assert parser.parse_args(["bench"]).gpu_layers == 0
    args = parser.parse_args(["bench", "--gpu-layers", "-1"])
    assert args.gpu_layers == -1 and args.func is bench.run


def test_engine_cases_record_device_and_sampling():
    class Info:
        device, gpu_layers_used = "GPU (33/33 layers)", 33

    class Eng:
        info, device_sampling = Info(), True

    got = bench.engine_device({"a": Eng(), "b": Eng()}, ["b", "c"])
    assert got == {"b": {"device": "GPU (33/33 layers)", "gpu_layers_used": 33, "device_sampling": True}}


def test_gpu_report_check_flags_host_sampling_and_cpu_runs(tmp_path: Path, capsys):
    ok = {"device": "GPU (33/33 layers)", "gpu_layers_used": 33, "device_sampling": True}
    host = {"device": "GPU (33/33 layers)", "gpu_layers_used": 33, "device_sampling": False}
    cpu = {"device": "CPU (no GPU layers were offloaded)", "gpu_layers_used": 0, "device_sampling": False}
    assert bench.gpu_report_problems({"models": [{"name": "m", "engine_device": {"a": ok, "b": ok}}]}, True) == []
    probs = bench.gpu_report_problems({"models": [{"name": "m", "engine_device": {"a": host, "b": cpu}}]}, True)
    assert len(probs) == 3 and any("host" in p for p in probs) and any("no layer ran on the GPU" in p for p in probs)
    # the default run samples on the host: then a case on the device is the surprise
    assert bench.gpu_report_problems({"models": [{"name": "m", "engine_device": {"a": host}}]}, False) == []
    assert bench.gpu_report_problems({"models": [{"name": "m", "engine_device": {"a": ok}}]}, False) == [
        "m case a: sampling ran on the device, not on the host"]
    assert bench.gpu_report_problems({"models": [{"name": "m", "engine_device": {"a": ok, "b": host}}]}) == []
    assert bench.gpu_report_problems({"models": [{"name": "m", "engine_device": {}}]}) == [
        "the report has no engine case (a or b)"
    ]
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"models": [{"name": "m", "engine_device": {"b": host}}]}))
    assert bench._check_gpu_report_main(f, True) == 1
    assert "sampling ran on the host" in capsys.readouterr().err
    assert bench._check_gpu_report_main(f, False) == 0
    f.write_text(json.dumps({"models": [{"name": "m", "engine_device": {"b": ok}}]}))
    assert bench._check_gpu_report_main(f, True) == 0
    f.write_text(json.dumps({"models": [{"name": "m", "engine_device": {"b": cpu}}]}))
    assert bench._check_gpu_report_main(f) == 1
    assert "m case b: GPU (33/33 layers), sampling on the device" in capsys.readouterr().out


class _Answer:
    """What llama-server's /completion returned for one request (its JSON), replayed."""

    def __init__(self, body: dict) -> None:
        self.body = body

    def complete(self, prompt, n_predict):  # noqa: ANN001, ANN201
        return self.body

    def cpu_seconds(self) -> None:
        return None


def test_server_reply_drops_the_eos_token_it_lists():
    """llama-server lists the end-of-generation token it stopped on (seen with SmolLM2: [..., 30, 2]);
    the engine never emits it, so a reply that ended on EOS compares equal only without it."""
    timings = {"predicted_per_second": 70.0, "predicted_n": 3, "predicted_ms": 40.0, "draft_n": 0, "draft_n_accepted": 0}
    eos = bench.run_server(_Answer({"tokens": [1569, 30, 2], "stop_type": "eos", "timings": timings}), [1], 8)
    assert eos["tokens"] == [1569, 30]
    limit = bench.run_server(_Answer({"tokens": [1569, 30, 2], "stop_type": "limit", "timings": timings}), [1], 3)
    assert limit["tokens"] == [1569, 30, 2]
