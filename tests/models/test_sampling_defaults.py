"""Recommended sampling: the GGUF's general.sampling.* first, then the catalog, else none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGUFWriter

from atomicchat.models.sampling_defaults import from_catalog, recommended


def _gguf(path: Path, **kv: float) -> Path:
    w = GGUFWriter(str(path), "llama")
    for key, value in kv.items():
        name = "general.sampling." + key
        w.add_int32(name, value) if isinstance(value, int) else w.add_float32(name, value)
    w.add_tensor("pad.weight", np.zeros(4, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_gguf_keys_win_over_the_catalog_and_absent_means_none(tmp_path) -> None:
    cat = recommended(_gguf(tmp_path / "Qwen_Qwen3.5-9B-Q4_K_M.gguf"))  # a file name the catalog lists
    assert cat is not None and (cat.temperature, cat.top_p, cat.top_k, cat.min_p) == (0.7, 0.8, 20, 0.0)
    assert cat.source.startswith("the catalog")
    (tmp_path / "g").mkdir()
    s = recommended(_gguf(tmp_path / "g" / "Qwen_Qwen3.5-9B-Q4_K_M.gguf", temp=0.6, top_k=50))
    assert s is not None and abs(s.temperature - 0.6) < 1e-6 and s.top_k == 50 and s.top_p is None
    assert "general.sampling" in s.source and s.describe().startswith("temperature 0.6")
    assert recommended(_gguf(tmp_path / "unknown.gguf")) is None
    assert from_catalog(tmp_path / "nothing.gguf") is None
