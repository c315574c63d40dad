"""Write a chat to Markdown or JSON, for keeping or sharing it outside the app. No Qt.

Markdown is for reading (a heading per turn, the reply's speed figures in a quoted line);
JSON keeps everything the store has (roles, texts, status, times and the reply stats).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from atomicchat import APP_NAME, __version__
from atomicchat.store.records import Conversation, Message

FORMATS = {"markdown": ".md", "json": ".json"}
ROLE_NAMES = {"user": "You", "assistant": "Assistant", "system": "System"}


def _time(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else ""


def to_markdown(conv: Conversation, messages: list[Message]) -> str:
    out = [f"# {conv.title}", "", f"*Exported from {APP_NAME} {__version__} · started {_time(conv.created_at)}*", ""]
    for m in messages:
        name = ROLE_NAMES.get(m.role, m.role)
        s = m.stats
        if m.role == "assistant" and s is not None and s.target_name:
            name += f" · {s.target_name}"
        out += [f"## {name}", "", m.content.rstrip() or "*(empty)*", ""]
        if m.role == "assistant" and s is not None and s.n_generated:
            figures = f"{s.n_generated} tokens"
            if s.used_draft and s.n_drafted:
                figures += f", DFlash acceptance {100 * s.n_accepted / s.n_drafted:.0f}%"
            if m.status != "done":
                figures += f", {m.status}"
            out += [f"> {figures}", ""]
    return "\n".join(out).rstrip() + "\n"


def to_json(conv: Conversation, messages: list[Message]) -> str:
    data = {
        "app": APP_NAME,
        "version": __version__,
        "conversation": asdict(conv),
        "messages": [
            {
                "role": m.role,
                "content": m.content,
                "status": m.status,
                "created_at": m.created_at,
                "stats": asdict(m.stats) if m.stats is not None else None,
            }
            for m in messages
        ],
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def format_for(path: Path) -> str:
    """"json" for a .json name, else "markdown"."""
    return "json" if path.suffix.lower() == ".json" else "markdown"


def write_export(path: Path, conv: Conversation, messages: list[Message], fmt: str | None = None) -> Path:
    """Write atomically (temp file, then rename): a failed export never leaves half a file."""
    fmt = fmt or format_for(path)
    text = to_json(conv, messages) if fmt == "json" else to_markdown(conv, messages)
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".export-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def suggested_name(conv: Conversation, fmt: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in " -_" else " " for ch in conv.title)
    stem = "-".join(safe.split())[:60] or "chat"
    return stem + FORMATS.get(fmt, ".md")
