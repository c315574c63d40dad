"""benchmarks/resize_keep.py on the generated hybrid pair: both ways timed, and it fails when nothing was kept."""

from __future__ import annotations

import re

import pytest

from benchmarks import resize_keep


def test_both_ways_are_timed_and_the_copy_keeps_the_conversation(tmp_path, capsys):
    assert resize_keep.main(["--tokens", "200", "--repeats", "1", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    m = re.search(r"200 tokens: .*copied back ([0-9.]+) ms, read again ([0-9.]+) ms", out)
    assert m and float(m.group(1)) > 0 and float(m.group(2)) > 0, out


def test_a_copy_that_kept_nothing_fails_instead_of_printing(tmp_path, monkeypatch):
    from atomicchat.engine import Engine

    monkeypatch.setattr(Engine, "_copy_in_conversation", lambda self, kept: None)
    with pytest.raises(SystemExit, match="did not keep the conversation"):
        resize_keep.main(["--tokens", "100", "--repeats", "1", "--cache", str(tmp_path)])


def test_a_target_without_snapshots_is_refused(llama_pair):
    with pytest.raises(SystemExit, match="not hybrid"):
        resize_keep.main(["--pair", f"{llama_pair.target},{llama_pair.draft}", "--tokens", "50", "--repeats", "1"])


def test_a_failure_mid_run_leaves_the_engines_copy_cap_as_it_was(tmp_path, monkeypatch):
    from atomicchat.engine import engine as engine_mod

    def fail_without_the_copy(eng, n, seed):  # noqa: ANN001
        if engine_mod.KEEP_STATE_MAX_BYTES == 0:
            raise RuntimeError("a failure while the copy is off")
        return 1e-3, n

    cap = engine_mod.KEEP_STATE_MAX_BYTES
    monkeypatch.setattr(resize_keep, "first_token_after_resize", fail_without_the_copy)
    with pytest.raises(RuntimeError):
        resize_keep.main(["--tokens", "50", "--repeats", "1", "--cache", str(tmp_path)])
    assert engine_mod.KEEP_STATE_MAX_BYTES == cap
