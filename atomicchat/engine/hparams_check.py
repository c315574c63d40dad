"""Bounds for the GGUF hyperparameters llama.cpp asserts on or sizes buffers from.

llama.cpp checks several of these with GGML_ASSERT, which aborts the whole process (src/llama-model.cpp
`load_hparams`: 0 < n_layer <= LLAMA_MAX_LAYERS, n_expert <= LLAMA_MAX_EXPERTS, n_expert_used <=
n_expert), and uses others unchecked to size buffers or loops (a rope dimension count of 0 made a
draft spin forever). Each refusal is one sentence naming the file and the key.
"""

from __future__ import annotations

from typing import Any

from atomicchat.engine.errors import ModelFileError
from atomicchat.engine.gguf_header import ArraySummary, GGUFHeader

MAX_LAYERS = 512  # LLAMA_MAX_LAYERS in llama-hparams.h
MAX_EXPERTS = 1024  # LLAMA_MAX_EXPERTS
MAX_EMBD = 1 << 17
MAX_HEAD_DIM = 1 << 12
MAX_HEADS = 1 << 12
MAX_CONTEXT = 1 << 27
MAX_VOCAB = 1 << 24
DFLASH_BLOCK = (2, 64)


def _refuse(header: GGUFHeader, key: str, why: str) -> ModelFileError:
    return ModelFileError(f"{header.path.name} has an invalid '{key}' ({why}); llama.cpp cannot load it safely.")


def _uint(header: GGUFHeader, key: str, lo: int, hi: int, required: bool = False) -> int | None:
    value = header.get(key)
    if value is None:
        if required:
            raise ModelFileError(f"{header.path.name} is missing '{key}'; it is not a usable model file.")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(header, key, f"expected a whole number, found {type(value).__name__}")
    if not lo <= value <= hi:
        raise _refuse(header, key, f"{value} is outside {lo}..{hi}")
    return value


def _per_layer(header: GGUFHeader, key: str, n_layer: int, lo: int, hi: int) -> list[int] | None:
    """A scalar or a per-layer array (llama.cpp's get_key_or_arr) as a list of n_layer values."""
    value = header.get(key)
    if value is None:
        return None
    if isinstance(value, ArraySummary):
        raise _refuse(header, key, f"an array of {value.length} values for {n_layer} layers")
    if isinstance(value, list):
        if len(value) != n_layer:
            raise _refuse(header, key, f"an array of {len(value)} values for {n_layer} layers")
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= hi for v in value):
            raise _refuse(header, key, f"values must be whole numbers in 0..{hi}")
        if not any(v >= lo for v in value):
            raise _refuse(header, key, "every layer is 0")
        return [int(v) for v in value]
    return [_uint(header, key, lo, hi)] * n_layer  # type: ignore[list-item]


def check_hparams(header: GGUFHeader) -> None:
    """Raise ModelFileError for the first hyperparameter outside what llama.cpp handles."""
    a = header.architecture
    n_layer = _uint(header, f"{a}.block_count", 1, MAX_LAYERS, required=True)
    assert n_layer is not None
    n_embd = _uint(header, f"{a}.embedding_length", 1, MAX_EMBD, required=True)
    assert n_embd is not None
    _uint(header, f"{a}.context_length", 1, MAX_CONTEXT)
    n_expert = _uint(header, f"{a}.expert_count", 0, MAX_EXPERTS) or 0
    used = _per_layer(header, f"{a}.expert_used_count", n_layer, 0, MAX_EXPERTS)
    if used and max(used) > n_expert:
        raise _refuse(header, f"{a}.expert_used_count", f"{max(used)} used of {n_expert} experts")
    heads = _per_layer(header, f"{a}.attention.head_count", n_layer, 0, MAX_HEADS)
    kv = _per_layer(header, f"{a}.attention.head_count_kv", n_layer, 0, MAX_HEADS)
    if heads and kv:
        for il, (h, k) in enumerate(zip(heads, kv)):
            if h and k and h % k:
                raise _refuse(header, f"{a}.attention.head_count_kv", f"layer {il}: {h} heads are not a multiple of {k}")
    key_len = _uint(header, f"{a}.attention.key_length", 1, MAX_HEAD_DIM)
    _uint(header, f"{a}.attention.value_length", 1, MAX_HEAD_DIM)
    n_head = max(heads) if heads else 0
    head_dim = key_len or (n_embd // n_head if n_head else 0)
    if n_head and not key_len and n_embd % n_head:
        raise _refuse(header, f"{a}.attention.head_count", f"width {n_embd} is not a multiple of {n_head} heads")
    if head_dim:
        rot = _uint(header, f"{a}.rope.dimension_count", 1, head_dim)
        if rot is not None and rot % 2:
            raise _refuse(header, f"{a}.rope.dimension_count", f"{rot} is odd; rotary dimensions come in pairs")
    _check_vocab(header)
    if a == "dflash":
        _check_dflash(header, n_layer)


def _check_vocab(header: GGUFHeader) -> None:
    n = header.n_vocab
    if n > MAX_VOCAB:
        raise _refuse(header, "tokenizer.ggml.tokens", f"{n:,} tokens, more than {MAX_VOCAB:,}")
    for key in ("tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
        value = header.get(key)
        length = value.length if isinstance(value, ArraySummary) else len(value) if isinstance(value, list) else None
        if length is not None and n and length != n:
            raise _refuse(header, key, f"{length:,} entries for {n:,} tokens")
    for key in ("tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.mask_token_id"):
        value: Any = header.get(key)
        if isinstance(value, int) and n and not -1 <= value < n and value != 0xFFFFFFFF:
            raise _refuse(header, key, f"token {value} is outside the vocabulary of {n:,}")


def _check_dflash(header: GGUFHeader, n_layer: int) -> None:
    lo, hi = DFLASH_BLOCK
    _uint(header, "dflash.block_size", lo, hi)
    layers = header.get("dflash.target_layers")
    if isinstance(layers, ArraySummary) or (isinstance(layers, list) and len(layers) > MAX_LAYERS):
        raise _refuse(header, "dflash.target_layers", "more target layers than any model has")
    if isinstance(layers, list):
        if len(set(layers)) != len(layers):
            raise _refuse(header, "dflash.target_layers", "a layer id is listed twice")
        if any(not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < MAX_LAYERS for x in layers):
            raise _refuse(header, "dflash.target_layers", f"layer ids must be whole numbers in 0..{MAX_LAYERS - 1}")
