"""benchmarks/attn_bench.py runs end to end on a tiny generated target and prints both settings."""

from __future__ import annotations

from benchmarks import attn_bench


def test_attn_bench_times_both_settings_on_a_tiny_target(llama_pair, capsys):
    rc = attn_bench.main(["--model", str(llama_pair.target), "--threads", "1", "--depths", "16,48",
                          "--verify-depth", "32", "--rows", "1,3", "--repeats", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    for row in ("decode at 16", "decode at 48", "1 rows at 32", "3 rows at 32", "prefill"):
        line = next(x for x in out.splitlines() if x.startswith(row))
        assert line.count("ms") + line.count(" s ") == 2 and line.rstrip().endswith("x"), line
