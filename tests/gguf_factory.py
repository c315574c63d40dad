"""Tiny random-weight GGUFs for tests: llama and qwen35 targets, and DFlash drafts for them.

The generator lives in `atomicchat.engine.tiny_models` (the `--self-test` command needs it at run
time, also inside the installed app); this module keeps the names the tests import.
"""

from __future__ import annotations

from atomicchat.engine.tiny_models import (  # noqa: F401  (re-exported API)
    DraftSpec,
    TargetSpec,
    _ffn,
    _finish,
    _Rand,
    _tokenizer,
    write_draft,
    write_not_gguf,
    write_pair,
    write_target,
)

__all__ = ["DraftSpec", "TargetSpec", "write_draft", "write_not_gguf", "write_pair", "write_target"]
