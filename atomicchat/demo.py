"""The embedded demo pair: a tiny target LM and the DFlash draft trained for it (resources/demo/).

Both were trained offline on the Python standard library's own sources (PSF License) by the scripts in
training/ (see training/README.md). The app falls back to this pair when no other model is installed,
so a fresh offline install can chat, with DFlash drafting, at first run.
"""

from __future__ import annotations

from pathlib import Path

from atomicchat.paths import resources_dir

TARGET_FILE = "demo-target.F32.gguf"
DRAFT_FILE = "demo-dflash.F16.gguf"


def demo_dir() -> Path:
    return resources_dir() / "demo"


def demo_target_path() -> Path:
    """The demo target GGUF (arch `llama`, ChatML template, byte-level BPE vocab of 4096)."""
    return demo_dir() / TARGET_FILE


def demo_draft_path() -> Path:
    """The demo DFlash draft GGUF (arch `dflash`; borrows the target's embeddings and LM head)."""
    return demo_dir() / DRAFT_FILE


def demo_available() -> bool:
    return demo_target_path().is_file() and demo_draft_path().is_file()
