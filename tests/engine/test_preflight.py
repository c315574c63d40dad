"""Hostile and broken GGUF headers are refused with a sentence before llama.cpp sees them (it would
GGML_ASSERT and abort the process on several of these)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter

from atomicchat.engine.errors import EngineError, ModelFileError
from atomicchat.engine.tiny_models import DraftSpec, TargetSpec, write_draft, write_target
from atomicchat.engine.validate import inspect_draft, inspect_target

GOOD = {"block_count": 4, "embedding_length": 64, "attention.head_count": 4, "attention.head_count_kv": 2,
        "context_length": 4096, "rope.dimension_count": 16}


def _target(path: Path, arch: str = "llama", **overrides: object) -> Path:
    kv = {**GOOD, **overrides}
    w = GGUFWriter(str(path), arch)
    for key, value in kv.items():
        if value is None:
            continue
        name = f"{arch}.{key}"
        if isinstance(value, list):
            w.add_array(name, value)
        else:
            w.add_uint32(name, value) if value >= 0 else w.add_int32(name, value)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_token_list([f"t{i}" for i in range(32)])
    w.add_tensor("pad.weight", np.zeros(4, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"block_count": 0}, "block_count = 0"),
        ({"block_count": 100_000}, "the number of layers must be between 1 and 512"),
        ({"embedding_length": 0}, "embedding_length = 0"),
        ({"attention.head_count": 0}, "head_count = 0"),
        ({"attention.head_count": 4, "attention.head_count_kv": 3}, "a multiple of the second"),
        ({"attention.head_count": [4, 4]}, "lists 2 values"),
        ({"rope.dimension_count": 0}, "rope.dimension_count = 0"),
        ({"rope.dimension_count": 15}, "odd"),
        ({"context_length": 0}, "context_length = 0"),
        ({"attention.key_length": 1 << 20}, "the head size"),
    ],
)
def test_bad_hyperparameters_are_refused_with_the_key(tmp_path, overrides, needle):
    with pytest.raises(ModelFileError, match="would refuse or crash|damaged|multiple|odd") as e:
        inspect_target(_target(tmp_path / "bad.gguf", **overrides))
    assert needle in str(e.value) and "bad.gguf" in str(e.value)


def test_a_good_header_passes_and_real_models_are_unchanged(tmp_path, llama_pair, qwen35_pair):
    assert inspect_target(_target(tmp_path / "ok.gguf")).n_layer == 4
    for pair in (llama_pair, qwen35_pair):
        inspect_target(pair.target)
        inspect_draft(pair.draft)


def test_draft_block_size_and_target_layers_are_bounded(tmp_path):
    t = TargetSpec()
    big = write_draft(tmp_path / "big.gguf", t, DraftSpec(block_size=100_000))
    with pytest.raises(ModelFileError, match="block_size = 100000"):
        inspect_draft(big)
    dup = write_draft(tmp_path / "dup.gguf", t, DraftSpec(target_layers=(1, 1)))
    with pytest.raises(ModelFileError, match="each must be a different layer id"):
        inspect_draft(dup)


def test_array_longer_than_the_file_and_deep_nesting_are_refused(tmp_path):
    path = write_target(tmp_path / "t.gguf", TargetSpec())
    data = bytearray(path.read_bytes())
    key = b"tokenizer.ggml.tokens"
    i = data.index(key) + len(key) + 4 + 4  # value type (9 = array), item type (8 = string), then the length
    data[i : i + 8] = (2**63 - 1).to_bytes(8, "little")
    hostile = tmp_path / "long.gguf"
    hostile.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="more than the file holds"):
        inspect_target(hostile)


def test_non_regular_files_are_refused_without_opening(tmp_path):
    fifo = tmp_path / "pipe.gguf"
    os.mkfifo(fifo)
    with pytest.raises(ModelFileError, match="not a regular file"):
        inspect_target(fifo)  # opening a FIFO would block forever
    with pytest.raises(ModelFileError, match="folder"):
        inspect_target(tmp_path)
    with pytest.raises(EngineError):
        inspect_target(tmp_path / ("x" * 5000 + ".gguf"))  # ENAMETOOLONG is a sentence, not a traceback


def test_memory_preflight_says_what_fits(llama_pair):
    from atomicchat.engine.memory import NotEnoughMemoryError, check_memory, need_bytes
    from atomicchat.engine.validate import inspect_draft as idraft

    t, d = inspect_target(llama_pair.target), idraft(llama_pair.draft)
    need, per_token = need_bytes(t, d, 4096, 15)
    check_memory(t, d, 4096, 15, available=need)  # exactly enough: loads
    with pytest.raises(NotEnoughMemoryError, match=r"Context 1,000,000,000 needs .* GiB; [\d,]+ fits in the") as e:
        check_memory(t, d, 1_000_000_000, 15, available=need + per_token * 10_000)
    fits = int(str(e.value).split("; ")[1].split(" fits")[0].replace(",", ""))
    assert 4096 <= fits <= 4096 + 10_000
    with pytest.raises(NotEnoughMemoryError, match="do not fit"):
        check_memory(t, d, 4096, 15, available=1024)


def test_cli_huge_context_is_refused_before_loading(llama_pair):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "atomicchat", "generate", "--model", str(llama_pair.target),
                        "--prompt-tokens", "1,2", "--ctx", "1000000000"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Context 1,000,000,000 needs" in r.stderr and "Traceback" not in r.stderr


def test_import_pairs_only_what_the_engine_would_load(tmp_path, llama_pair):
    import numpy as np

    from atomicchat.models.registry import Registry

    incomplete = write_draft(tmp_path / "no-fc.gguf", TargetSpec(),
                             DraftSpec(extra_tensors={"decoy.weight": np.zeros(4, dtype=np.float32)}))
    data = incomplete.read_bytes().replace(b"fc.weight", b"fx.weight")  # the fusion layer is gone
    incomplete.write_bytes(data)
    with pytest.raises(ModelFileError, match="lacks the tensor fc.weight"):
        inspect_draft(incomplete)
    reg = Registry(tmp_path / "registry.json")
    reg.import_gguf(llama_pair.target)
    with pytest.raises(EngineError):
        reg.import_gguf(incomplete)  # refused with the reason, never listed as paired
    assert not reg.pairs()
