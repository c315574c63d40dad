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
    """Open (creating or upgrading) the database; a crash's half-written replies become "interrupted"."""
    db = Database(path)
    chats = ConversationStore(db)
    chats.mark_interrupted()
    chats.purge_deleted()
    return Store(db=db, chats=chats, settings=SettingsStore(db), baselines=BaselineStore(db))


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
