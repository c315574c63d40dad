"""Tiny but valid GGUF files made at test time: a qwen35-like target and a DFlash draft.

They carry the metadata atomicchat.engine.validate checks (architecture, width, layers, vocabulary,
DFlash target layers and mask token) plus a padding tensor so transfers take more than one chunk.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGUFWriter

TOKENS = [f"tok{i}" for i in range(64)] + ["<mask>"]
OTHER_TOKENS = [f"other{i}" for i in range(64)] + ["<mask>"]


def _finish(w: GGUFWriter, pad_bytes: int) -> None:
    w.add_tensor("pad.weight", np.zeros(max(pad_bytes // 4, 1), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def make_target(path: Path, *, tokens: list[str] = TOKENS, pad_bytes: int = 3 << 20, n_layer: int = 8) -> bytes:
    w = GGUFWriter(str(path), "qwen35")
    w.add_string("general.name", "Tiny Qwen35")
    w.add_uint32("qwen35.block_count", n_layer)
    w.add_uint32("qwen35.embedding_length", 64)
    w.add_uint32("qwen35.context_length", 4096)
    w.add_uint32("qwen35.attention.head_count", 4)
    w.add_uint32("qwen35.attention.head_count_kv", 2)
    w.add_uint32("qwen35.attention.key_length", 16)
    w.add_uint32("qwen35.full_attention_interval", 4)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_token_list(tokens)
    w.add_string("tokenizer.chat_template", "{{ messages }}")
    _finish(w, pad_bytes)
    return path.read_bytes()


def make_draft(
    path: Path, *, tokens: list[str] = TOKENS, pad_bytes: int = 1 << 20, layers: tuple[int, ...] = (1, 3, 5),
    with_tensors: bool = True,
) -> bytes:
    w = GGUFWriter(str(path), "dflash")
    w.add_string("general.name", "Tiny DFlash")
    w.add_uint32("dflash.block_count", 2)
    w.add_uint32("dflash.embedding_length", 64)
    w.add_uint32("dflash.block_size", 16)
    w.add_array("dflash.target_layers", list(layers))
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_token_list(tokens)
    w.add_uint32("tokenizer.ggml.mask_token_id", len(tokens) - 1)
    if with_tensors:  # the tensors llama.cpp's DFlash loader requires (checked before pairing)
        w.add_tensor("fc.weight", np.zeros((64, 64 * len(layers)), dtype=np.float32))
        for name in ("enc.output_norm.weight", "output_norm.weight", "blk.0.attn_norm.weight", "blk.1.attn_norm.weight"):
            w.add_tensor(name, np.zeros(64, dtype=np.float32))
        pad_bytes = max(4, pad_bytes - 4 * 64 * (64 * len(layers) + 4))  # file sizes the tests expect stay
    _finish(w, pad_bytes)
    return path.read_bytes()
