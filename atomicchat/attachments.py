"""Text files attached to a message: read with a sentence for what cannot be, and written into the
message the model sees. No Qt.

A file goes into the message itself, after the typed text, as `<file name="NAME">…</file>`, so the
chat stays one self-contained record (saved, exported, answered again after an edit) and any chat
template carries it. The chat shows such a block as a line naming the file instead of its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 1 << 20  # a file this big is ~250k tokens, far past any context we run
CHARS_PER_TOKEN = 3.5  # a rough and generous guess for code and prose; the engine counts at send
_BLOCK = re.compile(r'\n*<file name="([^"\n]{1,200})">\n(.*?)\n</file>(?=\n|\Z)', re.S)


class AttachmentError(ValueError):
    """A file that cannot be attached; `str(exc)` says why in a sentence."""


@dataclass(frozen=True)
class Attachment:
    name: str
    text: str

    @property
    def lines(self) -> int:
        return self.text.count("\n") + 1 if self.text else 0

    @property
    def tokens_estimate(self) -> int:
        return int(len(self.text) / CHARS_PER_TOKEN) + 1

    def label(self) -> str:
        return f"{self.name} · {self.lines:,} line{'s' if self.lines != 1 else ''}"


def read(path: Path, n_ctx: int | None = None) -> Attachment:
    """The file's text; AttachmentError when it is not readable UTF-8 text or cannot fit the context."""
    name = path.name.replace('"', "'").replace("\n", " ")[:200] or "file"
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise AttachmentError(f"{name} is {size / (1 << 20):.1f} MB; attach text files up to "
                                  f"{MAX_BYTES >> 20} MB (a few hundred pages).")
        raw = path.read_bytes()
    except OSError as exc:
        raise AttachmentError(f"{name} could not be read: {exc.strerror or exc}.") from None
    if b"\0" in raw[:8192]:
        raise AttachmentError(f"{name} is not a text file. Attach text: code, notes, Markdown, CSV, JSON, logs.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AttachmentError(f"{name} is not UTF-8 text; save it as UTF-8 and attach it again.") from None
    text = text.replace("\r\n", "\n").rstrip("\n")
    if not text.strip():
        raise AttachmentError(f"{name} is empty.")
    att = Attachment(name, text)
    if n_ctx and att.tokens_estimate > n_ctx:
        raise AttachmentError(f"{name} is about {att.tokens_estimate:,} tokens; the model's context holds "
                              f"{n_ctx:,} in all. Attach a part of it, or raise the context size in Settings.")
    return att


def compose(text: str, files: list[Attachment]) -> str:
    """The message the model sees: the typed text, then each file in its block."""
    blocks = [f'<file name="{f.name}">\n{f.text}\n</file>' for f in files]
    return "\n\n".join(([text.strip()] if text.strip() else []) + blocks)


def split(content: str) -> tuple[str, list[Attachment]]:
    """A message's typed text and its files, for showing it: the blocks `compose` wrote at its end."""
    files: list[Attachment] = []
    end = len(content)
    while True:
        last = None
        for m in _BLOCK.finditer(content, 0, end):
            last = m
        if last is None or last.end() != end:
            break
        files.insert(0, Attachment(last.group(1), last.group(2)))
        end = last.start()
    return content[:end], files
