"""Local persistence: conversations, settings and measured baselines in one SQLite file.

Everything lives under `atomicchat.paths.data_dir()`; the UI thread is the only writer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from atomicchat.store.baselines import Baseline, BaselineStore, baseline_key
from atomicchat.store.conversations import ConversationStore, title_from_text
from atomicchat.store.db import Database, StoreError, default_db_path
from atomicchat.store.records import Conversation, Message, ReplyStats
from atomicchat.store.settings import AppSettings, SettingsStore


@dataclass
class Store:
    """The one database and its three views, opened together at start-up."""

    db: Database
    chats: ConversationStore
    settings: SettingsStore
    baselines: BaselineStore

    def close(self) -> None:
        self.db.close()


def open_store(path: Path | None = None) -> Store:
    """Open (creating or upgrading) the database; a crash's half-written replies become "interrupted".
    Every start-up problem (read-only file, damaged pages, a locked file) is one StoreError sentence."""
    import sqlite3

    db = Database(path)
    try:
        chats = ConversationStore(db)
        chats.mark_interrupted()
        chats.purge_deleted()
        store = Store(db=db, chats=chats, settings=SettingsStore(db), baselines=BaselineStore(db))
        store.settings.load()  # read once here, so a damaged settings page shows up now, not mid-use
        store.chats.conversations()
        return store
    except sqlite3.Error as exc:
        db.close()
        raise StoreError(_describe(db.path, exc)) from exc


def _describe(path: Path, exc: Exception) -> str:
    text = str(exc).lower()
    if "readonly" in text or "read-only" in text:
        return f"The chat database at {path} cannot be written (the file or its folder is read-only)."
    if "locked" in text or "busy" in text:
        return f"The chat database at {path} is locked by another program; close it and start again."
    return f"The chat database at {path} is damaged ({exc})."


def set_aside(path: Path) -> Path:
    """Keep a damaged database next to itself under a dated name (never deleted); returns the new name."""
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S")
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(path) + suffix)
        if src.exists():
            src.replace(Path(str(kept) + suffix))
    return kept


__all__ = [
    "AppSettings",
    "Baseline",
    "BaselineStore",
    "Conversation",
    "ConversationStore",
    "Database",
    "Message",
    "ReplyStats",
    "SettingsStore",
    "Store",
    "StoreError",
    "baseline_key",
    "default_db_path",
    "open_store",
    "title_from_text",
]
