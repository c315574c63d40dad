"""Checks a target GGUF and a DFlash draft GGUF before llama.cpp sees them.

llama.cpp aborts the whole process on several bad inputs (a layer id out of range, a missing
`ctx_other`), so every pairing rule it enforces by assertion is checked here first and reported
as a typed exception with a sentence the user can act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from atomicchat.engine.errors import DraftMismatchError, ModelFileError, UnsupportedDraftError
from atomicchat.engine.gguf_header import GGUFHeader, read_header
from atomicchat.engine.hparams_check import check_hparams

DFLASH_ARCH = "dflash"


@dataclass(frozen=True)
class TargetInfo:
    path: Path
    name: str
    arch: str
    n_embd: int
    n_layer: int
    n_vocab: int
    vocab_digest: str | None
    context_length: int
    chat_template: str | None
    file_size: int
    header: GGUFHeader


@dataclass(frozen=True)
class DraftInfo:
    path: Path
    name: str
    n_embd: int
    n_layer: int
    n_vocab: int
    vocab_digest: str | None
    block_size: int
    target_layers: tuple[int, ...]
    mask_token_id: int | None
    causal: bool
    file_size: int
    header: GGUFHeader


def _int(header: GGUFHeader, suffix: str, what: str) -> int:
    value = header.arch_key(suffix)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ModelFileError(f"{header.path.name} is missing '{header.architecture}.{suffix}' ({what}); it is not a usable model file.")
    return int(value)


def inspect_target(path: str | Path) -> TargetInfo:
    header = read_header(path)
    arch = header.architecture
    if not arch:
        raise ModelFileError(f"{header.path.name} has no 'general.architecture'; it is not a usable model file.")
    if arch == DFLASH_ARCH:
        raise ModelFileError(
            f"{header.path.name} is a DFlash draft, not a chat model. Choose it as the draft and pick a target model."
        )
    if header.n_vocab == 0:
        raise ModelFileError(f"{header.path.name} has no tokenizer vocabulary; it cannot be used for chat.")
    check_hparams(header)
    template = header.get("tokenizer.chat_template")
    return TargetInfo(
        path=header.path,
        name=header.name,
        arch=arch,
        n_embd=_int(header, "embedding_length", "the model width"),
        n_layer=_int(header, "block_count", "the number of layers"),
        n_vocab=header.n_vocab,
        vocab_digest=header.vocab_digest,
        context_length=int(header.arch_key("context_length", 0) or 0),
        chat_template=template if isinstance(template, str) and template.strip() else None,
        file_size=header.file_size,
        header=header,
    )


def inspect_draft(path: str | Path) -> DraftInfo:
    header = read_header(path)
    name = header.path.name
    if header.architecture != DFLASH_ARCH:
        raise DraftMismatchError(
            f"{name} is not a DFlash draft (its architecture is '{header.architecture or 'unknown'}'). "
            "A DFlash draft GGUF has architecture 'dflash'."
        )
    if "markov_w1.weight" in header.tensors:
        raise UnsupportedDraftError(f"{name} is a DSpark draft; this version of Atomic Chat runs plain DFlash drafts only.")
    top_k = header.arch_key("selector_top_k", 0)
    if isinstance(top_k, int) and top_k > 0:
        raise UnsupportedDraftError(f"{name} is a DFlash2 draft; this version of Atomic Chat runs plain DFlash drafts only.")
    check_hparams(header)
    layers = header.arch_key("target_layers")
    if not isinstance(layers, list) or not layers or not all(isinstance(x, int) for x in layers):
        raise ModelFileError(f"{name} has no 'dflash.target_layers' list; it is not a complete DFlash draft.")
    _check_draft_tensors(header, len(layers))
    mask = header.get("tokenizer.ggml.mask_token_id")
    if header.get("tokenizer.ggml.model") == "no_vocab" or header.n_vocab == 0:
        raise DraftMismatchError(f"{name} has no vocabulary, so it has no mask token; re-convert it with the target's tokenizer.")
    if not isinstance(mask, int) or not 0 <= mask < header.n_vocab:
        raise DraftMismatchError(f"{name} has no valid mask token ('tokenizer.ggml.mask_token_id'); DFlash needs one to draft.")
    causal = header.arch_key("attention.causal", False)
    block_size = header.arch_key("block_size", 16)
    return DraftInfo(
        path=header.path,
        name=header.name,
        n_embd=_int(header, "embedding_length", "the model width"),
        n_layer=_int(header, "block_count", "the number of layers"),
        n_vocab=header.n_vocab,
        vocab_digest=header.vocab_digest,
        block_size=int(block_size) if isinstance(block_size, int) and block_size > 1 else 16,
        target_layers=tuple(int(x) for x in layers),
        mask_token_id=mask,
        causal=bool(causal),
        file_size=header.file_size,
        header=header,
    )


def _check_draft_tensors(header: GGUFHeader, n_target_layers: int) -> None:
    """The tensors llama.cpp's DFlash loader requires (src/models/dflash.cpp), so that a pair is only
    called paired when llama.cpp would load the draft."""
    name = header.path.name
    n_layer = int(header.arch_key("block_count", 0) or 0)
    required = ["fc.weight", "enc.output_norm.weight", "output_norm.weight"]
    required += [f"blk.{i}.attn_norm.weight" for i in range(n_layer)]
    missing = [t for t in required if t not in header.tensors]
    if missing:
        raise ModelFileError(f"{name} lacks the tensor '{missing[0]}' that a DFlash draft needs; it is incomplete or not a DFlash draft.")
    n_embd = int(header.arch_key("embedding_length", 0) or 0)
    fc = header.tensors["fc.weight"].shape
    if fc and n_embd and fc[0] != n_target_layers * n_embd:
        raise ModelFileError(
            f"{name} has an 'fc.weight' of width {fc[0]}, but {n_target_layers} target layers of width {n_embd} "
            f"need {n_target_layers * n_embd}; the draft is damaged."
        )
    if "d2t" in header.tensors:
        _check_reduced_head(header, n_embd)


GGML_TYPE_I64 = 27


def _check_reduced_head(header: GGUFHeader, n_embd: int) -> None:
    """A reduced-vocabulary draft: `d2t` (int64 target id per row of its own `output.weight`). llama.cpp
    asserts on its type and length and indexes the full vocabulary with its values, so a bad one would
    abort the process: refuse it here."""
    name = header.path.name
    d2t = header.tensors["d2t"]
    out = header.tensors.get("output.weight")
    damaged = f"{name} has a damaged reduced output head ('d2t')"
    if d2t.ggml_type != GGML_TYPE_I64 or len(d2t.shape) != 1 or not 0 < d2t.shape[0] <= header.n_vocab:
        raise ModelFileError(f"{damaged}: it must be one list of at most {header.n_vocab:,} 64-bit token ids.")
    if out is None or len(out.shape) != 2 or out.shape[1] != d2t.shape[0] or (n_embd and out.shape[0] != n_embd):
        raise ModelFileError(f"{damaged}: the draft's own 'output.weight' must have one row per id.")
    n = d2t.shape[0]
    start = header.data_offset + d2t.offset
    if start + 8 * n > header.file_size:
        raise ModelFileError(f"{name} is truncated: its 'd2t' ids lie past the end of the file.")
    with open(header.path, "rb") as f:
        f.seek(start)
        ids = np.frombuffer(f.read(8 * n), dtype="<i8")
    if len(ids) != n or int(ids.min()) < 0 or int(ids.max()) >= header.n_vocab:
        raise ModelFileError(f"{damaged}: a token id lies outside the vocabulary of {header.n_vocab:,}.")


def check_pair(target: TargetInfo, draft: DraftInfo) -> None:
    """Raise DraftMismatchError, naming the first rule the pair breaks."""
    t, d = target.path.name, draft.path.name
    if draft.n_embd != target.n_embd:
        raise DraftMismatchError(
            f"{d} was made for a model of width {draft.n_embd}, but {t} has width {target.n_embd}. "
            "Pick the draft trained for this target."
        )
    if draft.n_vocab != target.n_vocab:
        raise DraftMismatchError(
            f"{d} has a vocabulary of {draft.n_vocab} tokens, but {t} has {target.n_vocab}. "
            "Draft and target must use the same tokenizer."
        )
    if draft.vocab_digest and target.vocab_digest and draft.vocab_digest != target.vocab_digest:
        raise DraftMismatchError(
            f"{d} and {t} have vocabularies of the same size but different tokens. Draft and target must use the same tokenizer."
        )
    bad = [lid for lid in draft.target_layers if not 0 <= lid < target.n_layer]
    if bad:
        raise DraftMismatchError(
            f"{d} reads layer(s) {', '.join(map(str, bad))} of the target, but {t} has only {target.n_layer} layers "
            f"(0-{target.n_layer - 1}). Pick the draft trained for this target."
        )
