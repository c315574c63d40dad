"""benchmarks/adaptive_bench.py: where a configuration's tokens first differ, and how the table shows it."""

from __future__ import annotations

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
