"""Every bad model or pairing is a typed, plain-words exception raised before llama.cpp sees it."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from atomicchat.engine import (
    DraftMismatchError,
    EngineError,
    ModelFileError,
    UnsupportedDraftError,
)
from atomicchat.engine.gguf_header import read_header
from atomicchat.engine.validate import check_pair, inspect_draft, inspect_target
from tests.engine.helpers import engine, run
from tests.gguf_factory import DraftSpec, TargetSpec, write_draft, write_not_gguf, write_target


def test_missing_file(tmp_path):
    with pytest.raises(ModelFileError, match="not found"):
        engine(tmp_path / "nope.gguf")


def test_folder_is_not_a_model(tmp_path):
    with pytest.raises(ModelFileError, match="folder"):
        inspect_target(tmp_path)


def test_not_gguf(tmp_path):
    with pytest.raises(ModelFileError, match="not a GGUF"):
        engine(write_not_gguf(tmp_path / "x.gguf"))


def test_truncated_gguf(tmp_path, llama_pair):
    data = llama_pair.target.read_bytes()[:200]
    bad = tmp_path / "cut.gguf"
    bad.write_bytes(data)
    with pytest.raises(ModelFileError, match="truncated"):
        inspect_target(bad)


def test_draft_given_as_target(llama_pair):
    with pytest.raises(ModelFileError, match="DFlash draft, not a chat model"):
        engine(llama_pair.draft)


def test_target_given_as_draft(llama_pair):
    with pytest.raises(DraftMismatchError, match="not a DFlash draft"):
        engine(llama_pair.target, llama_pair.target)


def test_width_mismatch(tmp_path, llama_pair):
    d = write_draft(tmp_path / "wide.gguf", llama_pair.target_spec, DraftSpec(n_embd=128))
    with pytest.raises(DraftMismatchError, match="width 128.*width 64"):
        engine(llama_pair.target, d)


def test_vocab_size_mismatch(tmp_path, llama_pair):
    d = write_draft(tmp_path / "v.gguf", llama_pair.target_spec, DraftSpec(n_vocab=300))
    with pytest.raises(DraftMismatchError, match="300 tokens"):
        engine(llama_pair.target, d)


def test_same_size_different_tokens(tmp_path, llama_pair):
    other = TargetSpec(n_vocab=512)
    t2 = write_target(tmp_path / "t2.gguf", other)
    # rewrite the token list of a copy: same count, other strings
    from gguf import GGUFWriter

    w = GGUFWriter(str(tmp_path / "d2.gguf"), "dflash")
    hdr = read_header(llama_pair.draft)
    for k, v in hdr.metadata.items():
        if k.startswith("general.") or k.startswith("tokenizer."):
            continue
        if isinstance(v, list):
            w.add_array(k, v)
        elif isinstance(v, bool):
            w.add_bool(k, v)
        elif isinstance(v, float):
            w.add_float32(k, v)
        else:
            w.add_uint32(k, v)
    w.add_string("tokenizer.ggml.model", "test")
    w.add_array("tokenizer.ggml.tokens", [f"other_{i}" for i in range(512)])
    w.add_array("tokenizer.ggml.scores", [0.0] * 512)
    w.add_uint32("tokenizer.ggml.mask_token_id", 511)
    w.add_tensor("fc.weight", np.zeros((64, 128), np.float32))
    for name in ("enc.output_norm.weight", "output_norm.weight", "blk.0.attn_norm.weight"):  # required by llama.cpp
        w.add_tensor(name, np.zeros(64, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert t2.exists()
    with pytest.raises(DraftMismatchError, match="different tokens"):
        check_pair(inspect_target(llama_pair.target), inspect_draft(tmp_path / "d2.gguf"))


def test_layer_out_of_range(tmp_path, llama_pair):
    d = write_draft(tmp_path / "l.gguf", llama_pair.target_spec, DraftSpec(target_layers=(1, 4)))
    with pytest.raises(DraftMismatchError, match=r"layer\(s\) 4 .*only 4 layers"):
        engine(llama_pair.target, d)


def test_missing_mask_token(tmp_path, llama_pair):
    d = write_draft(tmp_path / "m.gguf", llama_pair.target_spec, DraftSpec(mask_token_id=None))
    with pytest.raises(DraftMismatchError, match="mask token"):
        engine(llama_pair.target, d)


def test_dspark_refused(tmp_path, llama_pair):
    d = write_draft(
        tmp_path / "s.gguf",
        llama_pair.target_spec,
        DraftSpec(extra_tensors={"markov_w1.weight": np.zeros((512, 8), np.float32)}),
    )
    with pytest.raises(UnsupportedDraftError, match="DSpark"):
        engine(llama_pair.target, d)


def test_dflash2_refused(tmp_path, llama_pair):
    d = write_draft(tmp_path / "d2.gguf", llama_pair.target_spec, DraftSpec(extra_kv={"dflash.selector_top_k": 4}))
    with pytest.raises(UnsupportedDraftError, match="DFlash2"):
        engine(llama_pair.target, d)


def test_errors_are_engine_errors_and_process_survives(tmp_path, llama_pair):
    """After every refusal above the process is alive and a good pair still loads and runs."""
    for bad in (tmp_path / "missing.gguf", write_not_gguf(tmp_path / "z.gguf")):
        with pytest.raises(EngineError):
            engine(llama_pair.target, bad)
    with engine(llama_pair.target, llama_pair.draft) as eng:
        assert eng.info.draft_max == 15
        assert eng.info.block_size == 16


def test_header_reader_matches_gguf_package(llama_pair):
    from gguf import GGUFReader

    ours = read_header(llama_pair.draft)
    ref = GGUFReader(str(llama_pair.draft))
    assert ours.n_vocab == len(ref.fields["tokenizer.ggml.tokens"].data)
    assert ours.get("dflash.target_layers") == list(ref.fields["dflash.target_layers"].contents())
    assert set(ours.tensors) == {t.name for t in ref.tensors}
    assert ours.data_offset == ref.data_offset  # where validate reads a draft's d2t ids


def test_draft_max_clamped(llama_pair):
    with engine(llama_pair.target, llama_pair.draft, draft_max=40) as eng:
        assert eng.draft_max == 15
    with engine(llama_pair.target, llama_pair.draft, draft_max=4) as eng:
        assert eng.draft_max == 4


def test_amx_cpus_keep_llama_cpp_off_its_crashing_amx_buffers(monkeypatch):
    from atomicchat.engine.model import cpu_has_amx, use_extra_buffers

    amx = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512bw amx_bf16 amx_tile amx_int8\n"
    assert cpu_has_amx(amx) and not cpu_has_amx("flags\t\t: fpu sse avx2 avx512bw\n") and not cpu_has_amx("")
    monkeypatch.setenv("ATOMICCHAT_EXTRA_BUFTS", "1")
    assert use_extra_buffers()
    monkeypatch.setenv("ATOMICCHAT_EXTRA_BUFTS", "0")
    assert not use_extra_buffers()
    monkeypatch.delenv("ATOMICCHAT_EXTRA_BUFTS")
    assert use_extra_buffers() == (not cpu_has_amx())


# ---------------------------------------------------------------- header preflight (issue 12, part 2)
def _patch(path: Path, key: str, fmt: str, value: int, skip: int = 0) -> Path:
    """Overwrite the value of metadata `key` in place (`skip` bytes after its type id)."""
    data = bytearray(path.read_bytes())
    name = key.encode()
    at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name) + 4 + skip
    struct.pack_into("<" + fmt, data, at, value)
    path.write_bytes(bytes(data))
    return path


def _cli_load(target: Path, draft: Path | None = None) -> subprocess.CompletedProcess:
    """Load in a child process, so a regression that reaches a llama.cpp abort kills only the child."""
    args = [sys.executable, "-m", "atomicchat", "generate", "--model", str(target), "--prompt-tokens", "1,2", "--max-tokens", "2"]
    if draft is not None:
        args += ["--draft", str(draft)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])


def _copy(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


@pytest.mark.parametrize(
    "key, fmt, value, skip, needle",
    [
        ("llama.block_count", "I", 0, 0, "llama.block_count"),
        ("llama.block_count", "I", 100000, 0, "llama.block_count"),
        ("llama.attention.head_count_kv", "I", 3, 0, "head_count_kv"),
        ("llama.rope.dimension_count", "I", 0, 0, "rope.dimension_count"),
        ("llama.rope.dimension_count", "I", 15, 0, "rope.dimension_count"),
        ("llama.rope.dimension_count", "I", 4096, 0, "rope.dimension_count"),
        ("llama.embedding_length", "I", 0, 0, "embedding_length"),
        ("llama.context_length", "I", 0, 0, "context_length"),
        ("tokenizer.ggml.tokens", "Q", 2**63 - 1, 4, "more than the file holds"),
        ("tokenizer.ggml.model", "Q", 2**62, 0, "more than the file holds"),
    ],
)
def test_bad_target_hyperparameter_refused_in_one_line(tmp_path, llama_pair, key, fmt, value, skip, needle):
    bad = _patch(_copy(llama_pair.target, tmp_path / "bad.gguf"), key, fmt, value, skip)
    with pytest.raises(ModelFileError, match=needle):
        inspect_target(bad)
    r = _cli_load(bad)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])  # not -6 (SIGABRT) or a hang
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "bad.gguf" in lines[0] and "Traceback" not in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize(
    "spec, needle",
    [
        (DraftSpec(block_size=100000), "dflash.block_size"),
        (DraftSpec(block_size=1), "dflash.block_size"),
        (DraftSpec(target_layers=(1, 1)), "listed twice"),
    ],
)
def test_bad_draft_hyperparameter_refused(tmp_path, llama_pair, spec, needle):
    d = write_draft(tmp_path / "d.gguf", TargetSpec(), spec)
    with pytest.raises(ModelFileError, match=needle):
        inspect_draft(d)
    r = _cli_load(llama_pair.target, d)
    assert r.returncode == 1 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


def test_draft_rope_dimension_zero_refused(tmp_path, llama_pair):
    d = _patch(_copy(llama_pair.draft, tmp_path / "d.gguf"), "dflash.rope.dimension_count", "I", 0)
    r = _cli_load(llama_pair.target, d)
    assert r.returncode == 1 and "dflash.rope.dimension_count" in r.stderr, r.stderr[-2000:]


def test_non_regular_files_refused_without_opening(tmp_path):
    fifo = tmp_path / "pipe.gguf"
    os.mkfifo(fifo)  # opening it for reading would block forever
    with pytest.raises(ModelFileError, match="named pipe"):
        read_header(fifo)
    with pytest.raises(ModelFileError, match="device"):
        read_header("/dev/zero")
    with pytest.raises(ModelFileError, match="too long"):
        read_header(tmp_path / ("x" * 5000 + ".gguf"))
    with pytest.raises(ModelFileError, match="too long"):
        read_header(tmp_path / ("a" * 300))


def _reduced_head(spec: TargetSpec, ids, rows=None, d2t_dtype=np.int64) -> DraftSpec:
    ids = np.asarray(ids)
    if rows is None:
        rows = np.random.default_rng(3).normal(0, 0.5, (len(ids), spec.n_embd)).astype(np.float32)
    extra = {"d2t": ids.astype(d2t_dtype)}
    if rows is not False:
        extra["output.weight"] = rows
    return DraftSpec(extra_tensors=extra)


def test_reduced_head_draft_runs_lossless_and_drafts_only_its_tokens(tmp_path, llama_pair):
    """A draft with its own small head (`output.weight` + `d2t`, as the shipped SmolLM2 draft): llama.cpp
    scatters its logits to the full vocabulary, so every drafted token is one of its ids, and the
    output stays the target's."""
    spec = llama_pair.target_spec
    ids = np.arange(5, spec.n_vocab, 7)
    d = write_draft(tmp_path / "r.gguf", spec, _reduced_head(spec, ids))
    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    with engine(llama_pair.target) as base, engine(llama_pair.target, d) as eng:
        ref, _, _ = run(base, prompt, max_tokens=40)
        got, fin, _ = run(eng, prompt, max_tokens=40, draft_max=7)
        assert got == ref and fin.stats.n_drafted > 0
        eng.reset()
        first, _, _ = run(eng, prompt, max_tokens=1)
        drafts = eng.ds.draft_block(first[0], len(prompt), 7, 7)
        assert len(drafts) == 7 and set(drafts) <= set(ids.tolist())


@pytest.mark.parametrize(
    "ids, rows, dtype, needle",
    [
        ([5, 9, 11], None, np.int32, "64-bit token ids"),  # llama.cpp asserts I64
        ([5, 9, 512], None, np.int64, "outside the vocabulary"),  # set_rows past the vocabulary
        ([5, -1, 11], None, np.int64, "outside the vocabulary"),
        ([5, 9, 11], False, np.int64, "one row per id"),  # no own head: the target's has 512 rows
        ([5, 9, 11], np.zeros((4, 64), np.float32), np.int64, "one row per id"),
    ],
)
def test_damaged_reduced_head_refused(tmp_path, llama_pair, ids, rows, dtype, needle):
    d = write_draft(tmp_path / "bad.gguf", llama_pair.target_spec, _reduced_head(llama_pair.target_spec, ids, rows, dtype))
    with pytest.raises(ModelFileError, match=needle):
        engine(llama_pair.target, d)
